package published

import "testing"

// Bounds are the bounds of what machines are answered (listing.go's
// bounds), for tests that make them small; zero keeps one as it is.
type Bounds struct {
	SitemapURLs, LLMsBytes, LLMsFullBytes int
}

// SetBounds sets the bounds until t ends. They are the package's: t must
// not run in parallel, and must set them before it starts its server.
func SetBounds(t testing.TB, b Bounds) {
	saved := bounds
	t.Cleanup(func() { bounds = saved })
	if b.SitemapURLs > 0 {
		bounds.sitemapURLs = b.SitemapURLs
	}
	if b.LLMsBytes > 0 {
		bounds.llmsBytes = b.LLMsBytes
	}
	if b.LLMsFullBytes > 0 {
		bounds.llmsFullBytes = b.LLMsFullBytes
	}
}
