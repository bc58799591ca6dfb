package graph

import (
	"net/url"
	"strings"
)

// URLs builds every address the API returns from one public base URL
// (DOCSAPI_PUBLIC_URL), so a deployment behind a proxy or on another host
// answers with addresses that work for its clients.
type URLs struct {
	base string // without a trailing slash
	// published is the base of published addresses (DOCSAPI_PUBLISHED_URL).
	published string
}

// NewURLs returns the builder for base, such as "https://api.example.com",
// with published sites under published (default: base + "/published").
func NewURLs(base string, published ...string) URLs {
	u := URLs{base: strings.TrimRight(base, "/")}
	u.published = u.base + "/published"
	if len(published) > 0 && published[0] != "" {
		u.published = strings.TrimRight(published[0], "/")
	}
	return u
}

// API is the address of an API path, such as "/v1/spaces/abc".
func (u URLs) API(path string) string { return u.base + path }

// App is the address of a page of the web application.
func (u URLs) App(path string) string { return u.base + "/app" + path }

// Published is the address where published content of an organization is served.
func (u URLs) Published(path string) string { return u.published + path }

// publishedAt is where published addresses are served under the published
// URL: its host (lower case, with its port unless the scheme's default)
// and path (no trailing slash).
func (u URLs) publishedAt() (host, prefix string) {
	p, err := url.Parse(u.published)
	if err != nil {
		return "", ""
	}
	host = strings.ToLower(p.Host)
	if port := p.Port(); (port == "80" && p.Scheme == "http") || (port == "443" && p.Scheme == "https") {
		host = strings.ToLower(p.Hostname())
	}
	return host, strings.TrimRight(p.Path, "/")
}

func pathEscape(s string) string { return url.PathEscape(s) }
