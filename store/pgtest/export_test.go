package pgtest

// SweepStale is sweepStale, for its test.
var SweepStale = sweepStale
