package store

import (
	"context"
	"strconv"
	"testing"
	"time"
)

func TestParseLSN(t *testing.T) {
	for _, c := range []struct {
		in   string
		want LSN
		ok   bool
	}{
		{"0/0", 0, true},
		{"16/B374D848", 0x16_B374D848, true},
		{"FFFFFFFF/FFFFFFFF", 1<<64 - 1, true},
		{"a/b", 0xA_0000000B, true},
		{"", 0, false}, {"16", 0, false}, {"16/", 0, false}, {"/16", 0, false}, {"1/2/3", 0, false},
		{"G/0", 0, false}, {"100000000/0", 0, false}, {"-1/0", 0, false}, {"+1/0", 0, false}, {" 1/0", 0, false},
	} {
		got, err := ParseLSN(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseLSN(%q) = %v, %v; want %v (ok %v)", c.in, got, err, c.want, c.ok)
		}
		if c.ok && got.String() != c.in && c.in != "a/b" {
			t.Errorf("%q prints as %q", c.in, got.String())
		}
	}
}

// What a replica may be asked: a SELECT or WITH, after blanks and
// comments; nothing else.
func TestIsReadStatement(t *testing.T) {
	for query, want := range map[string]bool{
		"SELECT 1":             true,
		"select * from spaces": true,
		"  \n\tWITH x AS (SELECT 1) SELECT * FROM x": true,
		"/* a comment */ SELECT 1":                   true,
		"-- why\nSELECT 1":                           true,
		"SELECT":                                     true,
		"INSERT INTO t VALUES (1) RETURNING id":      false,
		"UPDATE t SET x = 1":                         false,
		"DELETE FROM t":                              false,
		"SELECTED":                                   false,
		"WITHIN":                                     false,
		"select_me()":                                false,
		"/* unterminated SELECT":                     false,
		"-- SELECT":                                  false,
		"":                                           false,
		"SET LOCAL statement_timeout = 0":            false,
	} {
		if got := isReadStatement(query); got != want {
			t.Errorf("isReadStatement(%q) = %v", query, got)
		}
	}
}

// A replica's lag is how long ago the primary was where the replica is.
func TestLSNHistoryLag(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := lsnHistory{keep: 10 * time.Second}
	if got := h.lag(t0, 0); got != 0 {
		t.Errorf("no samples: lag %s", got)
	}
	for i := range 20 {
		h.add(t0.Add(time.Duration(i)*time.Second), LSN(100*(i+1)))
	}
	now := t0.Add(19 * time.Second)
	if n := len(h.samples); n > 12 {
		t.Errorf("%d samples kept for 10 s at one a second", n)
	}
	for _, c := range []struct {
		replayed LSN
		want     time.Duration
	}{
		{2000, 0},               // all the primary had at the last sample
		{5000, 0},               // past it
		{1999, time.Second},     // all it had a second ago
		{1900, time.Second},     // ditto
		{1500, 5 * time.Second}, // 15 s in
		{100, 11 * time.Second}, // older than what is kept: since the oldest kept, the last before keep
	} {
		if got := h.lag(now, c.replayed); got != c.want {
			t.Errorf("lag at %d = %s, want %s", c.replayed, got, c.want)
		}
	}
}

// Callers' last writes: the latest of each is kept, forgotten once every
// replica has replayed it; past the bound, all are forgotten and every
// caller waits for the latest.
func TestCallerPositions(t *testing.T) {
	p := callerPositions{byCaller: map[string]LSN{}}
	p.wrote("ada", 10)
	p.wrote("ada", 5)
	p.wrote("bob", 20)
	p.wrote("", 99)
	if p.need("ada") != 10 || p.need("bob") != 20 || p.need("cy") != 0 || p.need("") != 0 {
		t.Fatalf("need: ada %v bob %v cy %v", p.need("ada"), p.need("bob"), p.need("cy"))
	}
	p.forget(15)
	if p.need("ada") != 0 || p.need("bob") != 20 || len(p.byCaller) != 1 {
		t.Errorf("after forgetting up to 15: ada %v bob %v", p.need("ada"), p.need("bob"))
	}
	for i := range maxCallerPositions {
		p.wrote(strconv.Itoa(i), LSN(30+i%7))
	}
	p.wrote("new", 1)
	if p.need("cy") != 36 || p.need("new") != 36 || len(p.byCaller) > 2 {
		t.Errorf("past the bound: cy needs %v, new %v, %d kept", p.need("cy"), p.need("new"), len(p.byCaller))
	}
}

// What routing adds to a read-only operation, apart from the reads
// themselves: its route (the caller's position, the choice of a replica,
// the context), and the bookkeeping of each read on the replica.
func BenchmarkRouteReads(b *testing.B) {
	set := &replicaSet{maxLag: time.Minute, positions: callerPositions{byCaller: map[string]LSN{"writer": 10}}}
	for range 2 {
		r := &replica{name: "replica"}
		r.up.Store(true)
		r.replayed.Store(100)
		r.alive.Store(newLiveness())
		set.list = append(set.list, r)
	}
	db := &DB{replicas: set}
	ctx := WithClientPosition(context.Background(), NewClientPosition(0, false))
	b.ReportAllocs()
	for b.Loop() {
		routed := db.RouteReads(ctx, "reader")
		rt := routeFrom(routed)
		r := rt.replicaFor()
		readCtx, done := r.readContext(routed)
		_ = readCtx
		done()
		rt.answered(r)
	}
}

// A replica that took reads and went down takes reads again only once it
// has replayed up to where the primary was when it was first found back:
// restarted after a crash, it may come back at an older point than it
// answered at, and reads would go back in time. One that never took reads
// is let in at once.
func TestReplicaBackAfterADownCatchesUpFirst(t *testing.T) {
	fresh := &replica{name: "fresh"}
	if _, ok := fresh.caughtUp(5, 100); !ok {
		t.Error("a replica never up is kept out")
	}

	r := &replica{name: "restarted"}
	r.wasUp.Store(true) // it took reads, then went down
	steps := []struct {
		at, primary LSN
		want        bool
	}{
		{at: 50, primary: 0, want: false},   // the primary's position unknown yet
		{at: 50, primary: 100, want: false}, // back, behind the primary of now: 100 is the target
		{at: 99, primary: 180, want: false}, // the target stays 100, not the primary's new position
		{at: 100, primary: 200, want: true}, // replayed up to it
	}
	for i, s := range steps {
		if _, ok := r.caughtUp(s.at, s.primary); ok != s.want {
			t.Fatalf("step %d (at %v, primary %v): let in %v, want %v", i, s.at, s.primary, ok, s.want)
		}
	}
	if r.resumeAt.Load() != 0 {
		t.Errorf("the target outlived the catch-up: %v", r.resumeAt.Load())
	}
	r.up.Store(true)
	if _, ok := r.caughtUp(1, 500); !ok {
		t.Error("a replica up is judged by its lag, not here")
	}
}
