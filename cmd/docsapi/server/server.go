// Package server is the HTTP server of docsapi: one mux with its middleware
// (request ids, logs and metrics, CORS, body limits, per-request loaders and
// query counters, authentication), serving GraphQL at /graphql (with its
// websocket and playground), the REST adapter at /v1, the published sites
// (package published, at the published URL and on sites' own hostnames),
// files and documents at signed addresses, SAML sign-in, the instance admin
// API, and health and metrics.
package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/graph/budget"
	"github.com/docsapi/docsapi/graph/engine"
	"github.com/docsapi/docsapi/graph/outbound"
	"github.com/docsapi/docsapi/graph/playground"
	"github.com/docsapi/docsapi/graph/translator"
	"github.com/docsapi/docsapi/published"
	"github.com/docsapi/docsapi/rest"
	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/blob"
	"github.com/docsapi/docsapi/tracing"
)

// Config configures the HTTP server.
type Config struct {
	// PublicURL is the base of every address the API returns.
	PublicURL string
	// PublishedURL is the base of published sites' addresses (default
	// PublicURL + "/published"); on another host than PublicURL's, the
	// server serves the reader there (published.Reader).
	PublishedURL string
	// AppURL, when set, is where /app/... addresses go: an editing
	// application of the operator's own.
	AppURL string
	// PublishedCacheBytes bounds the published pages kept in memory
	// (default published.DefaultCacheBytes).
	PublishedCacheBytes int64
	// AdminToken enables /admin when set.
	AdminToken string
	// MetricsToken, when set, is the bearer token /metrics requires (its
	// series name routes and their traffic); empty, /metrics is open.
	MetricsToken string
	// Debug adds query counts and timings to responses.
	Debug bool
	// GenericExecution turns off the engine's direct writer of hot GraphQL
	// subtrees: every field runs through gqlgen.
	GenericExecution bool
	// StrictAuthorization fails requests whose resolvers let through an
	// object the caller may not read (graph/authorize.go); tests set it.
	StrictAuthorization bool
	// MaxBodyBytes bounds request bodies (default 1 MiB).
	MaxBodyBytes int64
	// BlobURL is the bucket uploaded files are stored in (store/blob.Open):
	// file:///dir, s3://bucket?region=..., gs://bucket, azblob://container
	// (default: a docsapi-blobs directory of the system's temporary
	// directory). Instances of one service share one bucket.
	BlobURL string
	// MaxUploadBytes bounds an uploaded file (default 25 MiB).
	MaxUploadBytes int64
	// GitFileRoot is the directory file:// git URLs may point into (empty:
	// file:// is refused); GitAllowPrivate lets git URLs name private hosts.
	GitFileRoot     string
	GitAllowPrivate bool
	// GitLimits bounds what a git import takes in (zero fields: the
	// defaults, graph.DefaultGitMaxFiles...).
	GitLimits graph.GitLimits
	// SSOTokenTTL is how long a token issued by a SAML sign-in works
	// (default graph.DefaultSSOTokenTTL).
	SSOTokenTTL time.Duration
	// Outbound configures the guarded client for user-named addresses.
	Outbound outbound.Config
	// Translator runs translations (nil: runs fail, saying none is configured).
	Translator translator.Provider
	// CORSOrigins are the browser origins, besides the public URL's,
	// whose pages may call /graphql and /v1 (CORS) and open subscriptions'
	// websockets: host patterns such as "docs.example.com" or
	// "*.example.com" (engine.Origins).
	CORSOrigins []string
	// WebsocketOrigins are further origins allowed to open websockets only.
	WebsocketOrigins []string
	// SubscriptionRecheck is how often, at the longest, a subscription's
	// caller and permission are re-checked with no event and no change heard
	// (default live.DefaultRecheck).
	SubscriptionRecheck time.Duration
	// SubscriptionsPerToken and SubscriptionsMax bound the subscriptions
	// one API token, and everyone together, hold at once in this process
	// (0: live.DefaultSubscriptionsPerToken, live.DefaultSubscriptionsMax).
	SubscriptionsPerToken, SubscriptionsMax int
	// WebsocketWriteTimeout bounds one websocket write (0:
	// engine.DefaultWriteTimeout); WebsocketSendBuffer is a websocket's
	// kernel send buffer in bytes (0: engine.DefaultSendBuffer).
	WebsocketWriteTimeout time.Duration
	WebsocketSendBuffer   int
	// DeliveryLanes is how many goroutines at most deliver subscription
	// events at once (graph.LiveHub.Lanes; 0: one fewer than the CPUs, at
	// least one).
	DeliveryLanes int
	// SecretKey is the 32-byte AES-256 key integration secrets are sealed
	// with; empty, publishing secrets is refused.
	SecretKey []byte
	// Delivery configures the delivery of integration events in
	// development mode (attempts, backoff).
	Delivery graph.DeliveryConfig
	// TrustedDocuments is a JSON manifest, or a directory of manifests and
	// .graphql files, of the only GraphQL documents callers other than
	// developer tokens may run (engine.LoadTrustedDocuments); empty: any.
	// The REST adapter's documents are registered with them.
	TrustedDocuments string
	// RateLimit is the points each caller may spend per RateWindow, shared
	// by every instance on the database (graph/budget); 0: no budget.
	// RateAllowance is what an instance may admit beyond what it last
	// heard (budget.Config.Allowance; default RateLimit/100), RateExact
	// makes it 0.
	RateLimit     int64
	RateWindow    time.Duration
	RateAllowance int64
	RateExact     bool
	// Clock is the current time (default time.Now); tests move it.
	Clock func() time.Time
	Log   *slog.Logger
	// Tracing, when set, gives each request a span (tracing.go), and the
	// jobs it enqueues its trace context; nil: tracing is off. The store's
	// statements are traced by its own (store.Options.Tracing).
	Tracing trace.TracerProvider
}

// The rate budget of the docsapi command unless configured
// (DOCSAPI_RATE_LIMIT, DOCSAPI_RATE_WINDOW): points per caller and window,
// far above what a person or a front end spends, and above what the test
// suite and cmd/docsbench spend with one token; a stop to runaway scripts.
const (
	DefaultRateLimit  = 10_000_000
	DefaultRateWindow = time.Minute
)

// Server is the HTTP surface: /graphql, /v1, /admin and the operational endpoints.
type Server struct {
	Resolver *graph.Resolver
	// API is the REST adapter.
	API     *rest.API
	handler http.Handler
}

// New builds the server over db.
func New(db *store.DB, cfg Config) (*Server, error) {
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.MaxUploadBytes == 0 {
		cfg.MaxUploadBytes = 25 << 20
	}
	if n := len(cfg.SecretKey); n != 0 && n != 32 {
		return nil, fmt.Errorf("the secret key must be 32 bytes, not %d", n)
	}
	if cfg.BlobURL == "" {
		u, err := blob.FileURL(filepath.Join(os.TempDir(), "docsapi-blobs"))
		if err != nil {
			return nil, err
		}
		cfg.BlobURL = u
	}
	openCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	blobs, err := blob.Open(openCtx, cfg.BlobURL)
	cancel()
	if err != nil {
		return nil, err
	}
	blobs.Clock = cfg.Clock // when a blob was stored, for its garbage collection
	log := slog.New(LogHandler(cfg.Log.Handler()))
	live := graph.NewLiveHub(db, log)
	live.MaxPerToken, live.MaxTotal, live.Lanes = cfg.SubscriptionsPerToken, cfg.SubscriptionsMax, cfg.DeliveryLanes
	if cfg.PublishedURL == "" {
		cfg.PublishedURL = strings.TrimRight(cfg.PublicURL, "/") + "/published"
	}
	res := &graph.Resolver{DB: db, URLs: graph.NewURLs(cfg.PublicURL, cfg.PublishedURL), Log: log, Clock: cfg.Clock,
		Blobs: blobs, MaxUpload: cfg.MaxUploadBytes, GitFileRoot: cfg.GitFileRoot, GitAllowPrivate: cfg.GitAllowPrivate, GitLimits: cfg.GitLimits,
		SSOTokenTTL: cfg.SSOTokenTTL, Outbound: outbound.New(cfg.Outbound), Translator: cfg.Translator, SecretKey: cfg.SecretKey,
		Delivery: cfg.Delivery, Live: live, GenericExecution: cfg.GenericExecution,
		PublishedChanges:    graph.NewPublishedChanges(db, log),
		StrictAuthorization: cfg.StrictAuthorization, Tracing: cfg.Tracing}
	// Events recorded for delivery are enqueued once their transaction commits.
	db.OnDeliveries = res.EnqueueDeliveries
	if cfg.TrustedDocuments != "" {
		if res.TrustedDocuments, err = engine.LoadTrustedDocuments(cfg.TrustedDocuments); err != nil {
			return nil, err
		}
	}
	if cfg.RateLimit > 0 {
		if cfg.RateWindow <= 0 {
			return nil, fmt.Errorf("the rate window must be positive, not %s", cfg.RateWindow)
		}
		res.Budget = budget.New(db, budget.Config{Limit: cfg.RateLimit, Window: cfg.RateWindow,
			Allowance: cfg.RateAllowance, ExactAllowance: cfg.RateExact, Clock: cfg.Clock, Log: log})
	}
	eng := res.Engine(cfg.Debug)
	api, err := rest.New(eng, cfg.PublicURL, log, db.Serialize)
	if err != nil {
		res.Budget.Close()
		return nil, err
	}
	if res.TrustedDocuments != nil {
		// REST keeps working (its documents are the server's own), and
		// front ends may run its operations by id as well.
		for _, doc := range api.Documents() {
			if err := res.TrustedDocuments.Add("", doc); err != nil {
				res.Budget.Close()
				return nil, err
			}
		}
		log.Info("trusted documents: only registered GraphQL documents run for tokens other than developer tokens",
			"ids", res.TrustedDocuments.Len())
	}
	reader, err := published.New(eng, res, published.Config{URL: cfg.PublishedURL, AppURL: cfg.AppURL, PublicURL: cfg.PublicURL,
		CacheBytes: cfg.PublishedCacheBytes, Log: log})
	if err != nil {
		res.Budget.Close()
		return nil, err
	}
	res.PublishedChanges.Start()
	auth := authenticator{res: res, log: log}
	// /graphql and /v1 also read as the visitor of a visitor API token
	// (graph/visitor_token.go); the SAML endpoints are for members only.
	readers := authenticator{res: res, log: log, visitorTokens: true}

	mux := http.NewServeMux()
	mux.Handle("/v1/", readers.require(writePositions(db, true, client(res.Budget, cfg.Clock, api.Handler(labelled)))))
	// Served without a token (see rest.API.OpenAPIHandler); more specific
	// than "/v1/", so it never reaches the authenticated /v1 mux.
	mux.Handle(rest.OpenAPIPath, labelled("GET "+rest.OpenAPIPath, api.OpenAPIHandler()))
	// Browsers get GraphiQL at /graphql (a GET preferring text/html with no
	// ?query=); everything else is GraphQL. The page and its embedded assets
	// need no token: they hold no data, and the user pastes the token into
	// the page, which keeps it in memory (graph/playground/static/boot.js).
	// An origin whose pages may call /graphql may also subscribe.
	socketOrigins := engine.NewOrigins(cfg.PublicURL, append(append([]string(nil), cfg.CORSOrigins...), cfg.WebsocketOrigins...))
	ws := engine.Websocket(engine.Sockets{Origins: socketOrigins,
		Open: res.Sessions(cfg.SubscriptionRecheck), Log: log,
		WriteTimeout: cfg.WebsocketWriteTimeout, SendBuffer: cfg.WebsocketSendBuffer})
	gql := labelled("/graphql", readers.optional(writePositions(db, false, client(res.Budget, cfg.Clock, eng.Handler(cfg.MaxUploadBytes, ws)))))
	pg := playground.Handler("/graphql")
	pgPage := labelled("GET /graphql (playground)", pg)
	mux.Handle("/graphql", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if playground.WantsPlayground(r) {
			pgPage.ServeHTTP(w, r)
			return
		}
		gql.ServeHTTP(w, r)
	}))
	mux.Handle("/graphql"+playground.AssetDir, labelled("GET /graphql"+playground.AssetDir, pg))
	// Files, PDFs and documents at the server's own addresses, and SAML
	// sign-in: no token (linking a provider to one's account takes one).
	mountDocuments(mux, res, log)
	// The editing application's addresses the API returns (urls.app).
	mux.Handle("GET /app/", labelled("GET /app/", appHandler(cfg.AppURL, cfg.PublicURL)))
	// Published sites, for their visitors: no API token is read there.
	publishedSites := labelled("GET /published", reader)
	if reader.Host() == publicHost(cfg.PublicURL) {
		mux.Handle(reader.Prefix()+"/", publishedSites)
	}
	mountSAML(mux, res, auth, log)
	if cfg.AdminToken != "" {
		mux.Handle("/admin/", adminHandler(res, cfg.AdminToken))
	}
	// /healthz: is this process fit to serve, its embedded PostgreSQL
	// included (restarted by store/pgserver's supervisor when it dies; the
	// logs say why it is down). /readyz: does the database answer.
	mux.Handle("GET /healthz", labelled("GET /healthz", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if db.Health() != nil {
			rest.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "embedded database down"})
			return
		}
		rest.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})))
	mux.Handle("GET /readyz", labelled("GET /readyz", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := db.Pool.Ping(ctx); err != nil {
			rest.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "database unavailable"})
			return
		}
		rest.WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})))
	mux.Handle("GET /metrics", labelled("GET /metrics", operatorToken(cfg.MetricsToken, "docsapi-metrics",
		"/metrics needs Authorization: Bearer <DOCSAPI_METRICS_TOKEN>", metricsHandler(live, db, reader, res.PublishedChanges))))

	h := canonicalPaths(perRequest(db, cfg.Debug, sitesByHost(reader, publicHost(cfg.PublicURL), publishedSites, mux)))
	h = limitBody(cfg.MaxBodyBytes, cfg.MaxUploadBytes+cfg.MaxBodyBytes, h)
	// Outside every handler, so that errors (401, 413, 503...) are
	// readable by an allowed page too.
	h = cors{origins: engine.NewOrigins(cfg.PublicURL, cfg.CORSOrigins)}.handler(h)
	var tracer trace.Tracer
	if cfg.Tracing != nil {
		tracer = cfg.Tracing.Tracer(tracing.Scope)
	}
	h = observe(log, tracer, h)
	return &Server{Resolver: res, API: api, handler: h}, nil
}

// Close ends the server's subscriptions and stops listening for their
// events, and adds what its rate budget has pending to the shared count.
func (s *Server) Close() {
	s.Resolver.Live.Close()
	s.Resolver.PublishedChanges.Close()
	s.Resolver.Budget.Close()
	if c, ok := s.Resolver.Blobs.(io.Closer); ok {
		_ = c.Close()
	}
}

// ServeHTTP serves a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// sitesByHost sends requests to published sites' own hosts to the reader:
// the published URL's host when it is not the API's, and sites' custom
// hostnames; every other request goes to the API's mux.
func sitesByHost(reader *published.Reader, apiHost string, publishedSites, api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := strings.ToLower(r.Host)
		switch {
		case host == apiHost:
			api.ServeHTTP(w, r)
		case host == reader.Host():
			publishedSites.ServeHTTP(w, r)
		case !reader.ServeHostname(w, r, hostOnly(host)):
			api.ServeHTTP(w, r)
		}
	})
}

// publicHost is the host (with its port) of a base URL, lower case.
func publicHost(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Host)
}

// hostOnly is host without its port.
func hostOnly(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return host
}
