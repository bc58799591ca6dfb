package playground_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/graph/playground"
)

func serve(h http.Handler, method, target string, header map[string]string) *http.Response {
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var refPattern = regexp.MustCompile(`(?:src|href)="([^"]*)"`)

// The page is HTML under a strict policy, and everything it loads is one of
// the embedded assets, by a relative URL.
func TestPage(t *testing.T) {
	t.Parallel()
	h := playground.Handler("/graphql")
	res := serve(h, "GET", "/graphql", map[string]string{"Accept": "text/html"})
	page := body(t, res)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("status %d, Content-Type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	csp := res.Header.Get("Content-Security-Policy")
	if csp != playground.ContentSecurityPolicy || !strings.Contains(csp, "script-src 'self';") || !strings.Contains(csp, "default-src 'none'") {
		t.Fatalf("Content-Security-Policy %q", csp)
	}
	if res.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("Cache-Control %q", res.Header.Get("Cache-Control"))
	}
	refs := refPattern.FindAllStringSubmatch(string(page), -1)
	var scripts, styles int
	for _, m := range refs {
		ref := m[1]
		if ref == "data:," { // the empty favicon
			continue
		}
		u, err := url.Parse(ref)
		if err != nil || u.IsAbs() || u.Host != "" || strings.HasPrefix(u.Path, "/") {
			t.Fatalf("reference %q is not relative", ref)
		}
		// Resolved against the page, as a browser does.
		abs := (&url.URL{Path: "/graphql"}).ResolveReference(u)
		if !strings.HasPrefix(abs.Path, "/graphql/playground/") || abs.Query().Get("v") == "" {
			t.Fatalf("reference %q resolves to %s", ref, abs)
		}
		ares := serve(h, "GET", abs.String(), nil)
		if ares.StatusCode != http.StatusOK || len(body(t, ares)) == 0 {
			t.Fatalf("%s: status %d", abs, ares.StatusCode)
		}
		if cc := ares.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("%s: Cache-Control %q", abs, cc)
		}
		switch {
		case strings.HasSuffix(abs.Path, ".js"):
			scripts++
		case strings.HasSuffix(abs.Path, ".css"):
			styles++
		}
	}
	if scripts != 4 || styles != 2 {
		t.Fatalf("%d scripts and %d style sheets referenced, want 4 and 2:\n%s", scripts, styles, page)
	}

	// The configuration boot.js reads: the endpoint, relative; one tab per
	// example, with no headers (the token has a field of its own); the query
	// that checks a token and finds the ids replacing the placeholders.
	m := regexp.MustCompile(`(?s)<script type="application/json" id="graphiql-config">(.*?)</script>`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("no #graphiql-config in\n%s", page)
	}
	var cfg struct {
		Endpoint     string
		Tabs         []map[string]string
		IDsQuery     string
		Placeholders map[string]string
	}
	if err := json.Unmarshal(m[1], &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Endpoint != "graphql" || len(cfg.Tabs) != len(playground.Examples) || cfg.IDsQuery != playground.IDsQuery ||
		cfg.Placeholders["organization"] != playground.OrganizationPlaceholder || cfg.Placeholders["site"] != playground.SitePlaceholder {
		t.Fatalf("config %+v", cfg)
	}
	for i, tab := range cfg.Tabs {
		if !strings.Contains(tab["query"], "query ") {
			t.Errorf("tab %d: %+v", i, tab)
		}
		if _, ok := tab["headers"]; ok {
			t.Errorf("tab %d has headers: %+v", i, tab)
		}
		if v := tab["variables"]; v != "" && !json.Valid([]byte(v)) {
			t.Errorf("tab %d: variables are not JSON: %s", i, v)
		}
	}
	if strings.Contains(string(page), "Authorization") {
		t.Errorf("the page suggests an Authorization header:\n%s", page)
	}
	if !strings.Contains(cfg.Tabs[1]["query"], "query SiteTree($organizationId: ID!, $siteId: ID!)") {
		t.Errorf("second tab is not the site tree:\n%s", cfg.Tabs[1]["query"])
	}

	// HEAD works; other methods do not.
	if res := serve(h, "HEAD", "/graphql", nil); res.StatusCode != http.StatusOK {
		t.Errorf("HEAD: %d", res.StatusCode)
	}
	if res := serve(h, "POST", "/graphql", nil); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", res.StatusCode)
	}
}

// A page mounted elsewhere refers to its own endpoint and assets.
func TestPageUnderPrefix(t *testing.T) {
	t.Parallel()
	h := playground.Handler("/api/gql")
	page := string(body(t, serve(h, "GET", "/api/gql", nil)))
	if !strings.Contains(page, `src="gql/playground/boot.js?v=`) || !strings.Contains(page, `"endpoint":"gql"`) {
		t.Fatalf("page:\n%s", page)
	}
	if res := serve(h, "GET", "/api/gql/playground/boot.js", nil); res.StatusCode != http.StatusOK {
		t.Fatalf("asset: %d", res.StatusCode)
	}
}

func TestAssets(t *testing.T) {
	t.Parallel()
	h := playground.Handler("/graphql")
	for name, want := range map[string]struct {
		contentType string
		contains    string
	}{
		"graphiql.min.js":             {"text/javascript; charset=utf-8", "GraphiQL"},
		"graphiql.min.css":            {"text/css; charset=utf-8", ".graphiql-container"},
		"react.production.min.js":     {"text/javascript; charset=utf-8", "react.production.min.js"},
		"react-dom.production.min.js": {"text/javascript; charset=utf-8", "react-dom.production.min.js"},
		"boot.js":                     {"text/javascript; charset=utf-8", "GraphiQL.createFetcher"},
		"boot.css":                    {"text/css; charset=utf-8", "#graphiql"},
		"LICENSE-graphiql.txt":        {"text/plain; charset=utf-8", "MIT License"},
		"LICENSE-react.txt":           {"text/plain; charset=utf-8", "MIT License"},
	} {
		t.Run(name, func(t *testing.T) {
			res := serve(h, "GET", "/graphql/playground/"+name, nil)
			b := body(t, res)
			if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != want.contentType {
				t.Fatalf("status %d, Content-Type %q", res.StatusCode, res.Header.Get("Content-Type"))
			}
			if !bytes.Contains(b, []byte(want.contains)) {
				t.Fatalf("%d bytes without %q", len(b), want.contains)
			}
			if res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("ETag") == "" {
				t.Errorf("headers %v", res.Header)
			}
			// Without the page's ?v= the URL may change content: revalidate.
			if cc := res.Header.Get("Cache-Control"); cc != "public, no-cache" {
				t.Errorf("Cache-Control %q", cc)
			}
			// Revalidation by ETag.
			res = serve(h, "GET", "/graphql/playground/"+name, map[string]string{"If-None-Match": res.Header.Get("ETag")})
			if res.StatusCode != http.StatusNotModified {
				t.Errorf("If-None-Match: status %d", res.StatusCode)
			}
			// Compressed for clients that take gzip, the same content.
			res = serve(h, "GET", "/graphql/playground/"+name, map[string]string{"Accept-Encoding": "gzip, br"})
			if res.Header.Get("Content-Encoding") == "gzip" {
				zr, err := gzip.NewReader(res.Body)
				if err != nil {
					t.Fatal(err)
				}
				unzipped, err := io.ReadAll(zr)
				if err != nil || !bytes.Equal(unzipped, b) {
					t.Fatalf("gzip body differs (%v)", err)
				}
			} else if len(b) > 100_000 {
				t.Errorf("%d bytes not compressed", len(b))
			}
		})
	}
	for _, path := range []string{"/graphql/playground/index.html", "/graphql/playground/README.md",
		"/graphql/playground/examples/viewer.graphql", "/graphql/playground/", "/graphql/playground/../playground.go", "/graphql/other"} {
		if res := serve(h, "GET", path, nil); res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", path, res.StatusCode)
		}
	}
}

func TestWantsPlayground(t *testing.T) {
	t.Parallel()
	const chrome = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"
	const firefox = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	for _, c := range []struct {
		name, method, target, accept string
		want                         bool
	}{
		{"chrome", "GET", "/graphql", chrome, true},
		{"firefox", "GET", "/graphql", firefox, true},
		{"text/html", "GET", "/graphql", "text/html", true},
		{"html over json", "GET", "/graphql", "application/json;q=0.5, text/html", true},
		{"other parameters", "GET", "/graphql?foo=bar", firefox, true},
		{"application/json", "GET", "/graphql", "application/json", false},
		{"graphql-response+json", "GET", "/graphql", "application/graphql-response+json, application/json;q=0.9", false},
		{"json over html", "GET", "/graphql", "text/html;q=0.5, application/json", false},
		{"tie", "GET", "/graphql", "text/html, application/json", false},
		{"anything (curl)", "GET", "/graphql", "*/*", false},
		{"no Accept", "GET", "/graphql", "", false},
		{"html refused", "GET", "/graphql", "text/html;q=0, */*", false},
		{"query parameter", "GET", "/graphql?query=%7B__typename%7D", chrome, false},
		{"empty query parameter", "GET", "/graphql?query=", chrome, false},
		{"persisted query", "GET", `/graphql?extensions=%7B%7D`, chrome, false},
		{"POST", "POST", "/graphql", chrome, false},
		{"HEAD", "HEAD", "/graphql", chrome, false},
	} {
		req := httptest.NewRequest(c.method, c.target, nil)
		if c.accept != "" {
			req.Header.Set("Accept", c.accept)
		}
		if got := playground.WantsPlayground(req); got != c.want {
			t.Errorf("%s: %s %s Accept %q: %v, want %v", c.name, c.method, c.target, c.accept, got, c.want)
		}
	}
}

// The playground runs subscriptions: the vendored GraphiQL bundles the
// graphql-ws client (graphql-transport-ws, createFetcher's subscriptionUrl),
// and boot.js gives it the websocket beside the page's address.
func TestPlaygroundSubscriptions(t *testing.T) {
	h := playground.Handler("/graphql")
	get := func(name string) string {
		res := serve(h, "GET", "/graphql"+playground.AssetDir+name, nil)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", name, res.StatusCode)
		}
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	if js := get("graphiql.min.js"); !strings.Contains(js, `"graphql-transport-ws"`) || !strings.Contains(js, "subscriptionUrl") {
		t.Fatal("the vendored GraphiQL does not carry the graphql-transport-ws client")
	}
	boot := get("boot.js")
	for _, want := range []string{"subscriptionUrl: wsURL.href", "'wss:'", "'ws:'"} {
		if !strings.Contains(boot, want) {
			t.Errorf("boot.js lacks %q", want)
		}
	}
}
