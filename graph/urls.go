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
}

// NewURLs returns the builder for base, such as "https://docs.example.com".
func NewURLs(base string) URLs {
	return URLs{base: strings.TrimRight(base, "/")}
}

// API is the address of an API path, such as "/v1/spaces/abc".
func (u URLs) API(path string) string { return u.base + path }

// App is the address of a page of the web application.
func (u URLs) App(path string) string { return u.base + "/app" + path }

// Published is the address where published content of an organization is served.
func (u URLs) Published(path string) string { return u.base + "/published" + path }

func pathEscape(s string) string { return url.PathEscape(s) }
