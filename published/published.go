// Package published is the reader: the published sites, served as HTML
// pages to their visitors, from the same engine that serves /graphql and
// /v1.
//
// It is the third adapter beside the REST one (package rest): a request to
// a published address is admitted as a visitor of the site it names
// (graph.Resolver.AdmitVisitor decides, as it decides for API tokens), then
// the reader runs its declared GraphQL operations (operations/*.graphql)
// in-process as that visitor and renders their data with html/template.
// The resolvers, loaders and read rules are those of the API: the reader
// has no read path of its own and decides nothing about who may read what.
// What the read rules do not hand a visitor (a hidden section, another
// site, a draft) is not found here as everywhere.
//
// Addresses (routes.go): a site is served at its published base, the
// organization's published address and the site's basename or id
// (/published/{organizationId}/{basename}), or at the root of its custom
// hostname; under it, a section's path, a site space's path and a page's
// path, each left out for the defaults (site.go). The reader's own
// resources sit under /~gitbook/: its styles and script, and the files of
// the revisions it shows, at addresses made of their content.
package published

import (
	"context"
	"html/template"
	"log/slog"
	"net/url"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/graph/engine"
)

// Config configures the reader.
type Config struct {
	// URL is where published content is served: the base of the
	// published addresses the API returns (graph.URLs.Published), such as
	// http://localhost:8080/published or https://sites.example.com.
	URL string
	// AppURL, when set, is the editing application's base: /app/...
	// addresses the API returns go there (app.go).
	AppURL string
	// PublicURL is the API's base, for the pages that lead to it (the
	// playground, from an /app/ address).
	PublicURL string
	// CacheBytes bounds the pages kept in memory (default DefaultCacheBytes).
	CacheBytes int64
	Log        *slog.Logger
}

// Reader serves published sites.
type Reader struct {
	res    *graph.Resolver
	engine *engine.Engine
	ops    operations
	pages  *template.Template
	log    *slog.Logger
	// host and prefix are where published addresses are served: the
	// published URL's host ("" when it is the API's own) and path.
	host, prefix string
	// publishedScheme is the published URL's scheme: cookies are Secure
	// under https.
	publishedScheme string
	appURL          string
	publicURL       string
	assets          assets
	cache           *pageCache
	// revisions are the pages and files of revisions read, by revision id:
	// a revision never changes, and each page of a site space needs its
	// whole tree. Only a visitor's read of a space's live revision leads to
	// one (loadContent).
	revisions *lru.Cache[string, *content]
}

// New builds the reader over the engine and resolvers; its operations are
// validated against the schema here, once.
func New(eng *engine.Engine, res *graph.Resolver, cfg Config) (*Reader, error) {
	ops, err := loadOperations(eng.Schema)
	if err != nil {
		return nil, err
	}
	pages, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, err
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	revisions, err := lru.New[string, *content](maxRevisions)
	if err != nil {
		return nil, err
	}
	return &Reader{res: res, engine: eng, ops: ops, pages: pages, log: log, revisions: revisions,
		host: strings.ToLower(u.Host), prefix: strings.TrimRight(u.Path, "/"), publishedScheme: u.Scheme,
		appURL: strings.TrimRight(cfg.AppURL, "/"), publicURL: strings.TrimRight(cfg.PublicURL, "/"),
		assets: newAssets(), cache: newPageCache(res.PublishedChanges, cfg.CacheBytes)}, nil
}

// maxRevisions bounds the revisions whose pages the reader keeps (a
// thousand pages' tree is some hundreds of kilobytes).
const maxRevisions = 64

// Prefix is the path published addresses start with on the published
// URL's host ("" when they are at its root).
func (rd *Reader) Prefix() string { return rd.prefix }

// Host is the published URL's host (lower case, with its port).
func (rd *Reader) Host() string { return rd.host }

// run runs one of the reader's operations as the caller of ctx and decodes
// its data into out; errors are the first GraphQL error, as graph.Error's
// status tells it (not found, unavailable...).
func (rd *Reader) run(ctx context.Context, name string, vars map[string]any, out any) error {
	op := rd.ops[name]
	resp := rd.engine.RunServerDocument(ctx, op.source, name, vars)
	return decodeResponse(resp, out)
}
