package published

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/docsapi/docsapi/graph"
)

// What a visitor brings, and what the reader keeps for it: the request's
// share key and token are handed to graph.Resolver.AdmitVisitor, which
// decides; the reader only carries them from the address to a cookie, so
// that a visitor who arrived with ?share= keeps reading without it.
// Nothing here reads or sets API credentials: an Authorization header is
// never looked at.

// The cookies of a site's visitors, each scoped to the site's path.
const (
	// shareCookie keeps the share key a visitor arrived with.
	shareCookie = "docsapi-share"
	// unsignedCookie is where a site's own scripts put unsigned claims
	// for adaptive content (GitBook's name).
	unsignedCookie = "gitbook-visitor-public"
)

// maxCookieClaims bounds the unsigned claims' cookie, in bytes.
const maxCookieClaims = 4 << 10

// admit admits the request's visitor to site a, keeping a share key that
// came in the address in a cookie.
func (rd *Reader) admit(w http.ResponseWriter, r *http.Request, a address) (*graph.Visitor, error) {
	q := r.URL.Query()
	req := graph.VisitorRequest{Hostname: a.hostname, OrganizationID: a.organization, SiteName: a.name,
		Unsigned: unsignedClaims(r)}
	fromQuery := q.Get("share")
	req.ShareKey = fromQuery
	if req.ShareKey == "" {
		if c, err := r.Cookie(shareCookie); err == nil {
			req.ShareKey = c.Value
		}
	}
	v, err := rd.res.AdmitVisitor(r.Context(), req)
	if err != nil {
		return nil, err
	}
	if v.Proof() == graph.ProofShareKey && fromQuery != "" {
		http.SetCookie(w, rd.siteCookie(r, a, shareCookie, fromQuery))
	}
	return v, nil
}

// siteCookie is a cookie of site a's visitors: not for scripts, sent on
// links from other sites (Lax) so a shared link opens, over https only when
// the site is served over https.
func (rd *Reader) siteCookie(r *http.Request, a address, name, value string) *http.Cookie {
	p := a.base
	if p == "" {
		p = "/"
	}
	return &http.Cookie{Name: name, Value: value, Path: p, HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: r.TLS != nil || a.hostname != "" || strings.HasPrefix(rd.publishedScheme, "https")}
}

// unsignedClaims are the unsigned claims a visitor offers: the JSON object
// of the gitbook-visitor-public cookie, and visitor.<claim> query
// parameters over it. Which of them count is the site's schema's
// business (graph decides).
func unsignedClaims(r *http.Request) map[string]any {
	claims := map[string]any{}
	if c, err := r.Cookie(unsignedCookie); err == nil && len(c.Value) <= maxCookieClaims {
		// JSON, percent-encoded as scripts write cookies (a cookie's value
		// may not hold quotes).
		value, err := url.PathUnescape(c.Value)
		var fromCookie map[string]any
		if err == nil && json.Unmarshal([]byte(value), &fromCookie) == nil {
			for k, v := range fromCookie {
				claims[k] = v
			}
		}
	}
	for k, values := range r.URL.Query() {
		if name, ok := strings.CutPrefix(k, "visitor."); ok && name != "" && len(values) > 0 {
			claims[name] = values[0]
		}
	}
	return claims
}
