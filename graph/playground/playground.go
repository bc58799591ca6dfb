// Package playground serves GraphiQL, the in-browser GraphQL IDE, at the
// GraphQL endpoint to browsers. Every asset (GraphiQL, React, ReactDOM, the
// page and its boot script) is embedded in the binary: the playground needs no
// CDN and works with no internet. static/README.md names the vendored
// packages and how to refresh them.
package playground

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed static
var static embed.FS

// AssetDir is the path, under the GraphQL endpoint's, of the playground's
// assets: Handler("/graphql") serves /graphql/playground/graphiql.min.js.
const AssetDir = "/playground/"

// ContentSecurityPolicy is the policy of the playground page. Scripts and
// style sheets come only from the server itself; GraphiQL's bundled
// react-remove-scroll adds <style> elements at run time, hence 'unsafe-inline'
// style elements, but no style attributes (the page sets styles through the
// CSSOM only). Its style sheet inlines its fonts and images as data: URLs,
// and nothing else is an image or a font. The page talks only to its own
// origin ('self' covers the ws:// or wss:// of subscriptions on the same
// host, CSP Level 3).
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"style-src-attr 'none'; img-src data:; font-src data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Placeholders of the example tabs' variables. Once the user gives a token,
// the page replaces them with the first organization the token's user
// belongs to (one with a site, if any) and that organization's first site.
const (
	OrganizationPlaceholder = "<organization id>"
	SitePlaceholder         = "<site id>"
)

// IDsQuery is what the page runs, with the token just given, to check it and
// to find the ids that fill the example tabs (see the placeholders).
const IDsQuery = `query PlaygroundIds {
  viewer { id displayName email }
  organizations(limit: 20) {
    items { id title sites(limit: 1) { items { id title } } }
  }
}`

// Example is an example tab of the playground.
type Example struct {
	// File is the query's file in static/examples/.
	File string
	// Variables is the JSON of the Variables editor ("" for none).
	Variables string
}

// Examples are the tabs a first visit opens, in order.
var Examples = []Example{
	{File: "viewer.graphql"},
	{File: "site-tree.graphql", Variables: "{\n  \"organizationId\": \"" + OrganizationPlaceholder + "\",\n  \"siteId\": \"" + SitePlaceholder + "\"\n}"},
	{File: "spaces.graphql", Variables: "{\n  \"organizationId\": \"" + OrganizationPlaceholder + "\"\n}"},
}

// Query is the example's GraphQL document.
func (e Example) Query() (string, error) {
	b, err := static.ReadFile("static/examples/" + e.File)
	return string(b), err
}

// An asset is one embedded file served under AssetDir.
type asset struct {
	data        []byte
	contentType string
	hash        string // hex SHA-256 prefix: the ETag and the ?v= of the page's references

	gzipOnce sync.Once
	gzipped  []byte // nil when compressing does not pay
}

// assets lists what is served, by name, with its type: only these files are
// reachable (not the page template, the examples or the README).
var assets = func() map[string]*asset {
	types := map[string]string{
		"graphiql.min.js":             "text/javascript; charset=utf-8",
		"graphiql.min.css":            "text/css; charset=utf-8",
		"react.production.min.js":     "text/javascript; charset=utf-8",
		"react-dom.production.min.js": "text/javascript; charset=utf-8",
		"boot.js":                     "text/javascript; charset=utf-8",
		"boot.css":                    "text/css; charset=utf-8",
		"LICENSE-graphiql.txt":        "text/plain; charset=utf-8",
		"LICENSE-react.txt":           "text/plain; charset=utf-8",
	}
	m := make(map[string]*asset, len(types))
	for name, ct := range types {
		data, err := static.ReadFile("static/" + name)
		if err != nil {
			panic(err) // the embed directive and this list disagree
		}
		sum := sha256.Sum256(data)
		m[name] = &asset{data: data, contentType: ct, hash: hex.EncodeToString(sum[:8])}
	}
	return m
}()

var pageTemplate = template.Must(template.New("index.html").Funcs(template.FuncMap{
	// Replaced per Handler; declared here so the template parses.
	"asset": func(string) (string, error) { return "", nil },
}).ParseFS(static, "static/index.html"))

// config is the page's #graphiql-config, read by boot.js. It holds no
// token: the page has a token field of its own, outside GraphiQL's editors,
// whose value lives in one variable of boot.js and nowhere else.
type config struct {
	Endpoint     string            `json:"endpoint"`
	Tabs         []tab             `json:"tabs"`
	IDsQuery     string            `json:"idsQuery"`
	Placeholders map[string]string `json:"placeholders"`
}

type tab struct {
	Query     string `json:"query"`
	Variables string `json:"variables,omitempty"`
}

// Handler serves the playground page at graphqlPath and its assets under
// graphqlPath + AssetDir. The page refers to the endpoint and to the assets by
// relative URLs, so it works behind any public URL or path prefix.
func Handler(graphqlPath string) http.Handler {
	graphqlPath = "/" + strings.Trim(graphqlPath, "/")
	// The page is at .../graphql: relative references start with its last segment.
	base := path.Base(graphqlPath)
	if graphqlPath == "/" {
		base = "."
	}
	cfg := config{Endpoint: base, IDsQuery: IDsQuery,
		Placeholders: map[string]string{"organization": OrganizationPlaceholder, "site": SitePlaceholder}}
	for _, e := range Examples {
		q, err := e.Query()
		if err != nil {
			panic(err)
		}
		cfg.Tabs = append(cfg.Tabs, tab{Query: q, Variables: e.Variables})
	}
	t := template.Must(pageTemplate.Clone()).Funcs(template.FuncMap{
		"asset": func(name string) (string, error) {
			a, ok := assets[name]
			if !ok {
				return "", fmt.Errorf("playground: no asset %q", name)
			}
			// ?v= is the content hash: the reference changes with the file,
			// so the file may be cached for good.
			return base + AssetDir + name + "?v=" + a.hash, nil
		},
	})
	var page bytes.Buffer
	if err := t.Execute(&page, struct {
		Endpoint string
		Config   config
	}{graphqlPath, cfg}); err != nil {
		panic(err)
	}
	return &handler{page: page.Bytes(), pagePath: graphqlPath, assetPrefix: strings.TrimSuffix(graphqlPath, "/") + AssetDir}
}

type handler struct {
	page        []byte
	pagePath    string
	assetPrefix string
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch {
	case r.URL.Path == h.pagePath:
		hd := w.Header()
		hd.Set("Content-Type", "text/html; charset=utf-8")
		hd.Set("Content-Security-Policy", ContentSecurityPolicy)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		// Small, and it names the current assets: always revalidate.
		hd.Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(h.page))
	case strings.HasPrefix(r.URL.Path, h.assetPrefix):
		a, ok := assets[strings.TrimPrefix(r.URL.Path, h.assetPrefix)]
		if !ok {
			http.NotFound(w, r)
			return
		}
		a.serve(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (a *asset) serve(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Type", a.contentType)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Vary", "Accept-Encoding")
	if r.URL.Query().Get("v") == a.hash {
		// The page's references: the URL names this exact content.
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		// Any other URL may serve other content after an upgrade: revalidate (ETag).
		hd.Set("Cache-Control", "public, no-cache")
	}
	data, etag := a.data, `"`+a.hash+`"`
	if acceptsGzip(r) {
		if gz := a.gzip(); gz != nil {
			data, etag = gz, `"`+a.hash+`-gzip"`
			hd.Set("Content-Encoding", "gzip")
		}
	}
	hd.Set("ETag", etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

// gzip compresses the asset once, on first use; nil when it does not pay.
func (a *asset) gzip() []byte {
	a.gzipOnce.Do(func() {
		if len(a.data) < 1024 {
			return
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(a.data)
		if zw.Close() == nil && buf.Len() < len(a.data)*9/10 {
			a.gzipped = buf.Bytes()
		}
	})
	return a.gzipped
}

func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
				return qValue(params) > 0
			}
		}
	}
	return false
}

// WantsPlayground reports whether r is a browser asking for a page at the
// GraphQL endpoint: a GET that prefers text/html to JSON and carries no
// GraphQL request (no `query` parameter, nor the `extensions` one of a
// persisted query), so GET /graphql?query=... still executes GraphQL and
// clients that accept anything (*/*) still get JSON.
func WantsPlayground(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	q := r.URL.Query()
	if q.Has("query") || q.Has("extensions") {
		return false
	}
	accept := strings.Join(r.Header.Values("Accept"), ",")
	html := acceptQ(accept, "text", "html")
	json := max(acceptQ(accept, "application", "json"), acceptQ(accept, "application", "graphql-response+json"))
	return html > 0 && html > json
}

// acceptQ is the quality an Accept header gives typ/sub: that of the most
// specific media range matching it (RFC 9110 §12.5.1), 0 when none does.
func acceptQ(accept, typ, sub string) float64 {
	best, q := -1, 0.0
	for part := range strings.SplitSeq(accept, ",") {
		mediaRange, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		t, s, ok := strings.Cut(strings.TrimSpace(mediaRange), "/")
		if !ok {
			continue
		}
		var specificity int
		switch {
		case strings.EqualFold(t, typ) && strings.EqualFold(s, sub):
			specificity = 2
		case strings.EqualFold(t, typ) && s == "*":
			specificity = 1
		case t == "*" && s == "*":
			specificity = 0
		default:
			continue
		}
		if specificity > best {
			best, q = specificity, qValue(params)
		}
	}
	return q
}

// qValue is the q parameter of a media range's or coding's parameters (1 when absent).
func qValue(params string) float64 {
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || f < 0 {
				return 0
			}
			return min(f, 1)
		}
	}
	return 1
}
