package wholeserver_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

// CORS: pages of allowed origins (DOCSAPI_CORS_ORIGINS and the public
// URL's) may call /graphql and /v1 from a browser; pages of any other origin
// find the server as it was, with no CORS header.
func TestCORS(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{CORSOrigins: []string{"app.example.com", "*.trusted.example"}})
	alice := env.NewUser("Alice")
	alice.NewOrg("Acme")

	paths := []string{"/graphql", "/v1/orgs", "/v1/openapi.json"}
	t.Run("preflight", func(t *testing.T) {
		for _, origin := range []string{"https://app.example.com", "http://app.example.com", "https://docs.trusted.example", env.URL} {
			for _, path := range paths {
				res := env.DoWith("OPTIONS", path, "", nil, http.Header{
					"Origin":                         {origin},
					"Access-Control-Request-Method":  {"POST"},
					"Access-Control-Request-Headers": {"authorization,content-type,apollo-require-preflight,if-match,x-request-id"},
				}).Expect(http.StatusNoContent)
				h := res.Header
				if got := h.Get("Access-Control-Allow-Origin"); got != origin {
					t.Errorf("%s %s: Allow-Origin %q", origin, path, got)
				}
				for _, want := range []string{"Authorization", "Content-Type", "If-Match", "If-None-Match", "X-Request-Id", "X-Write-Position", "Apollo-Require-Preflight"} {
					if !headerListHas(h.Get("Access-Control-Allow-Headers"), want) {
						t.Errorf("%s %s: Allow-Headers %q lacks %s", origin, path, h.Get("Access-Control-Allow-Headers"), want)
					}
				}
				for _, want := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
					if !headerListHas(h.Get("Access-Control-Allow-Methods"), want) {
						t.Errorf("%s %s: Allow-Methods %q lacks %s", origin, path, h.Get("Access-Control-Allow-Methods"), want)
					}
				}
				if !headerListHas(strings.Join(h.Values("Vary"), ","), "Origin") || h.Get("Access-Control-Max-Age") == "" {
					t.Errorf("%s %s: Vary %q, Max-Age %q", origin, path, h.Values("Vary"), h.Get("Access-Control-Max-Age"))
				}
				// Bearer tokens, no cookies: never credentials.
				if h.Get("Access-Control-Allow-Credentials") != "" {
					t.Errorf("%s %s: Allow-Credentials %q", origin, path, h.Get("Access-Control-Allow-Credentials"))
				}
			}
		}
		// Refused origins: the answer an OPTIONS request got before CORS
		// (400 on /graphql, 401 on /v1...), without a CORS header.
		for _, origin := range []string{"https://evil.example", "https://app.example.com.evil.example", "https://trusted.example.evil", "null"} {
			for _, path := range paths {
				plain := env.DoWith("OPTIONS", path, "", nil, nil)
				res := env.DoWith("OPTIONS", path, "", nil, http.Header{"Origin": {origin}, "Access-Control-Request-Method": {"POST"}})
				if res.Status != plain.Status || res.Status == http.StatusNoContent || string(res.Body) != string(plain.Body) {
					t.Errorf("%s %s: %d %s; without an Origin %d %s", origin, path, res.Status, res.Body, plain.Status, plain.Body)
				}
				noCORSHeaders(t, origin+" "+path, res.Header)
			}
		}
	})

	t.Run("requests", func(t *testing.T) {
		const origin = "https://app.example.com"
		for _, tc := range []struct {
			name, method, path, token string
			body                      any
			status                    int
		}{
			{"REST GET", "GET", "/v1/orgs", alice.Token, nil, http.StatusOK},
			{"OpenAPI document", "GET", "/v1/openapi.json", "", nil, http.StatusOK},
			{"GraphQL POST", "POST", "/graphql", alice.Token, `{"query":"{ viewer { id } }"}`, http.StatusOK},
			{"GraphQL GET", "GET", "/graphql?query=%7Bviewer%7Bid%7D%7D", alice.Token, nil, http.StatusOK},
			// Errors are readable too, to tell the user why.
			{"REST without a token", "GET", "/v1/orgs", "", nil, http.StatusUnauthorized},
			{"GraphQL with a bad token", "POST", "/graphql", "nobody", `{"query":"{ viewer { id } }"}`, http.StatusUnauthorized},
		} {
			t.Run(tc.name, func(t *testing.T) {
				plain := env.DoWith(tc.method, tc.path, tc.token, tc.body, nil).Expect(tc.status)
				res := env.DoWith(tc.method, tc.path, tc.token, tc.body, http.Header{"Origin": {origin}}).Expect(tc.status)
				if res.Header.Get("Access-Control-Allow-Origin") != origin || !headerListHas(strings.Join(res.Header.Values("Vary"), ","), "Origin") {
					t.Fatalf("Allow-Origin %q, Vary %q", res.Header.Get("Access-Control-Allow-Origin"), res.Header.Values("Vary"))
				}
				for _, want := range []string{"ETag", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After", "X-Request-Id", "Location", "X-Write-Position"} {
					if !headerListHas(res.Header.Get("Access-Control-Expose-Headers"), want) {
						t.Errorf("Expose-Headers %q lacks %s", res.Header.Get("Access-Control-Expose-Headers"), want)
					}
				}
				if res.Header.Get("Access-Control-Allow-Credentials") != "" {
					t.Errorf("Allow-Credentials %q", res.Header.Get("Access-Control-Allow-Credentials"))
				}
				if tc.status == http.StatusOK && tc.path == "/v1/orgs" && string(res.Body) != string(plain.Body) {
					t.Errorf("body %s, without an Origin %s", res.Body, plain.Body)
				}

				// A refused origin's request works as it did, without CORS headers
				// (the browser then keeps the answer from the page).
				refused := env.DoWith(tc.method, tc.path, tc.token, tc.body, http.Header{"Origin": {"https://evil.example"}}).Expect(tc.status)
				noCORSHeaders(t, "refused origin", refused.Header)
				if tc.path == "/v1/orgs" && string(refused.Body) != string(plain.Body) {
					t.Errorf("refused origin: body %s, without an Origin %s", refused.Body, plain.Body)
				}
			})
		}
	})

	// Outside /graphql and /v1, no CORS: the instance admin API, health.
	res := env.DoWith("OPTIONS", "/healthz", "", nil, http.Header{"Origin": {"https://app.example.com"}, "Access-Control-Request-Method": {"GET"}})
	noCORSHeaders(t, "/healthz", res.Header)
}

// headerListHas tells whether a comma-separated header value lists item
// (case-insensitively, as header names compare).
func headerListHas(list, item string) bool {
	return slices.ContainsFunc(strings.Split(list, ","), func(s string) bool { return strings.EqualFold(strings.TrimSpace(s), item) })
}

func noCORSHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	for name := range h {
		if strings.HasPrefix(strings.ToLower(name), "access-control-") {
			t.Errorf("%s: CORS header %s: %q", what, name, h.Values(name))
		}
	}
}
