package engine

import (
	"net/http"
	"net/url"
	"path"
	"strings"
)

// Origins are the browser origins allowed to call the API from their pages:
// the public URL's origin, the request's own host, and host patterns. It is
// the one matcher of the websocket's upgrades and of CORS (the server's
// middleware), so one origin is let in or kept out of both alike.
//
// A pattern is matched as coder/websocket matches its OriginPatterns, which
// the websocket used before this matcher and whose configuration
// (DOCSAPI_WEBSOCKET_ORIGINS) keeps its meaning: path.Match,
// case-insensitively, against the origin's host and port
// ("docs.example.com", "*.example.com", "localhost:*"), or against
// "scheme://host[:port]" when the pattern names a scheme
// ("https://*.example.com").
type Origins struct {
	patterns []string
}

// NewOrigins allows publicURL's origin and patterns.
func NewOrigins(publicURL string, patterns []string) Origins {
	var o Origins
	for _, p := range patterns {
		if p = strings.TrimSpace(p); p != "" {
			o.patterns = append(o.patterns, strings.ToLower(p))
		}
	}
	if u, err := url.Parse(publicURL); err == nil && u.Scheme != "" && u.Host != "" {
		o.patterns = append(o.patterns, strings.ToLower(u.Scheme+"://"+u.Host))
	}
	return o
}

// Allowed tells whether the page of origin (an Origin header) may call the
// API at r. An origin that is not a URL with a host ("null": a sandboxed
// page, a file) is refused.
func (o Origins) Allowed(r *http.Request, origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	// The page's own server: not a cross-origin call at all (behind a
	// proxy that keeps Host).
	if strings.EqualFold(r.Host, u.Host) {
		return true
	}
	host := strings.ToLower(u.Host)
	withScheme := strings.ToLower(u.Scheme) + "://" + host
	for _, p := range o.patterns {
		target := host
		if strings.Contains(p, "://") {
			target = withScheme
		}
		// A malformed pattern matches nothing (path.ErrBadPattern).
		if ok, _ := path.Match(p, target); ok {
			return true
		}
	}
	return false
}
