package published

import (
	"encoding/json"
	"errors"
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
	// shareCookie keeps the share key a visitor arrived with;
	// sessionCookie the visitor token of a visitor-auth site, for as long
	// as the token is valid (the token is the session: a new site key
	// ends it at once).
	shareCookie   = "docsapi-share"
	sessionCookie = "docsapi-visitor"
	// adaptiveCookie holds signed claims for adaptive content, set by the
	// site owner's own scripts or backend (GitBook's name).
	adaptiveCookie = "gitbook-visitor-token"
	// unsignedCookie is where a site's own scripts put unsigned claims
	// for adaptive content (GitBook's name).
	unsignedCookie = "gitbook-visitor-public"
)

// maxCookieClaims bounds the unsigned claims' cookie, in bytes.
const maxCookieClaims = 4 << 10

// admit admits the request's visitor to site a. A share key or a visitor
// token that came in the address is kept in a cookie of the site; then,
// for a token, the visitor is sent to the address without it (ok false:
// answered), so that it is not kept in histories and logs.
func (rd *Reader) admit(w http.ResponseWriter, r *http.Request, a address) (v *graph.Visitor, ok bool, err error) {
	q := r.URL.Query()
	keyInAddress, tokenInAddress := q.Get("share") != "", q.Get("jwt_token") != ""
	_, sessionErr := r.Cookie(sessionCookie)
	v, err = rd.admitRequest(r, a, false)
	var authRequired *graph.VisitorAuthRequired
	if errors.As(err, &authRequired) && sessionErr == nil {
		// The session's token is no longer valid: forget it.
		gone := rd.siteCookie(r, a, sessionCookie, "")
		gone.MaxAge = -1
		http.SetCookie(w, gone)
	}
	if err != nil {
		return nil, false, err
	}
	switch {
	case v.Proof() == graph.ProofShareKey && keyInAddress:
		http.SetCookie(w, rd.siteCookie(r, a, shareCookie, q.Get("share")))
	case v.Proof() == graph.ProofToken && tokenInAddress:
		http.SetCookie(w, rd.siteCookie(r, a, sessionCookie, q.Get("jwt_token")))
		clean := *r.URL
		q.Del("jwt_token")
		clean.RawQuery = q.Encode()
		http.Redirect(w, r, clean.RequestURI(), http.StatusFound)
		return nil, false, nil
	}
	return v, true, nil
}

// admitRequest admits r's visitor to site a with what r brings: a share key
// and a visitor token in its address, else in the site's cookies, and, for
// a client that is no browser (bearer: an MCP client), a visitor token as
// an Authorization bearer header, which is read nowhere else.
func (rd *Reader) admitRequest(r *http.Request, a address, bearer bool) (*graph.Visitor, error) {
	q := r.URL.Query()
	req := graph.VisitorRequest{Hostname: a.hostname, OrganizationID: a.organization, SiteName: a.name,
		ShareKey: q.Get("share"), Token: q.Get("jwt_token"), Unsigned: unsignedClaims(r)}
	if c, err := r.Cookie(shareCookie); err == nil && req.ShareKey == "" {
		req.ShareKey = c.Value
	}
	if c, err := r.Cookie(sessionCookie); err == nil && req.Token == "" {
		req.Token = c.Value
	}
	if token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && bearer && req.Token == "" {
		req.Token = token
	}
	if c, err := r.Cookie(adaptiveCookie); err == nil {
		req.AdaptiveToken = c.Value
	}
	return rd.res.AdmitVisitor(r.Context(), req)
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
