package server

import (
	"net/http"
	"strings"

	"github.com/docsapi/docsapi/graph/engine"
)

// CORS lets the pages of allowed origins (engine.Origins: the public URL's,
// DOCSAPI_CORS_ORIGINS) call /graphql and /v1 from a browser. A small
// middleware rather than github.com/rs/cors: what it must do is a fixed
// answer (the lists below), the origin check is the websocket's matcher,
// and an origin not allowed must find the server exactly as before, which
// rs/cors does not do for preflights (it answers them 204 itself, allowed
// or not, unless told to pass every preflight through, allowed ones
// included).
//
// No Access-Control-Allow-Credentials: the API authenticates by a bearer
// token in the Authorization header, never by cookie (SAML sign-in ends by
// showing a token, it sets no session), so a page needs no credentials
// mode, and without it a browser never attaches cookies or client
// certificates to a cross-origin call.
type cors struct {
	origins engine.Origins
}

const (
	// corsMethods are the methods of /v1's routes and /graphql's.
	corsMethods = "GET, POST, PUT, PATCH, DELETE"
	// corsAllowHeaders are the request headers the API reads (the token,
	// JSON bodies, conditional requests, the caller's request id, the
	// position of its last write) and those GraphQL clients add: Apollo
	// Client's CSRF-prevention header, operation name and client
	// awareness.
	corsAllowHeaders = "Authorization, Content-Type, If-Match, If-None-Match, X-Request-Id, X-Write-Position, " +
		"Apollo-Require-Preflight, X-Apollo-Operation-Name, Apollographql-Client-Name, Apollographql-Client-Version"
	// corsExposeHeaders are the response headers a page may read besides
	// the safelisted ones: ETag for conditional requests, the rate
	// budget, the request id to quote, where a created object is, and the
	// position of the caller's last write (replicas.go).
	corsExposeHeaders = "ETag, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, X-Request-Id, Location, WWW-Authenticate, X-Write-Position"
	// corsMaxAge is how long a browser may reuse a preflight's answer
	// (Chromium caps it at two hours): /v1's paths name ids, so each is a
	// preflight of its own.
	corsMaxAge = "7200"
)

// corsPath tells the paths browsers may call across origins: GraphQL and
// the REST API, its OpenAPI document included (hosted API explorers load
// it).
func corsPath(p string) bool {
	return p == "/graphql" || strings.HasPrefix(p, "/v1/")
}

// isPreflight tells a CORS preflight: the browser asking, before the real
// request, whether it may send it.
func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" && r.Header.Get("Access-Control-Request-Method") != ""
}

// handler answers allowed origins' preflights, before authentication (a
// browser sends no Authorization with them), and marks their requests'
// answers readable by them.
func (c cors) handler(next http.Handler) http.Handler {
	preflight := labelled("OPTIONS (CORS preflight)", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Methods", corsMethods)
		h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
		h.Set("Access-Control-Max-Age", corsMaxAge)
		w.WriteHeader(http.StatusNoContent)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !corsPath(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		// Whether the answer is readable depends on Origin: a cache must
		// not hand one origin's answer to another (/v1/openapi.json is
		// public and cacheable).
		w.Header().Add("Vary", "Origin")
		origin := r.Header.Get("Origin")
		if origin == "" || !c.origins.Allowed(r, origin) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Access-Control-Allow-Origin", origin)
		if isPreflight(r) {
			preflight.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Access-Control-Expose-Headers", corsExposeHeaders)
		next.ServeHTTP(w, r)
	})
}
