// Package server is the HTTP server of docsapi: one mux with its middleware
// (request ids, logs and metrics, body limits, per-request loaders and
// query counters, authentication), serving GraphQL at /graphql (with its
// websocket and playground), the REST adapter at /v1, files and documents
// at signed addresses, SAML sign-in, the instance admin API, and health and
// metrics.
package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/graph/engine"
	"github.com/docsapi/docsapi/graph/outbound"
	"github.com/docsapi/docsapi/graph/playground"
	"github.com/docsapi/docsapi/graph/translator"
	"github.com/docsapi/docsapi/rest"
	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/blob"
)

// Config configures the HTTP server.
type Config struct {
	// PublicURL is the base of every address the API returns.
	PublicURL string
	// AdminToken enables /admin when set.
	AdminToken string
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
	// BlobDir is where uploaded files are stored (default: a docsapi-blobs
	// directory of the system's temporary directory).
	BlobDir string
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
	// WebsocketOrigins are the browser origins, besides the public URL's,
	// allowed to open subscriptions' websockets: host patterns such as
	// "docs.example.com" or "*.example.com".
	WebsocketOrigins []string
	// SubscriptionRecheck is how often, at the longest, a subscription's
	// caller and permission are re-checked with no event and no change heard
	// (default graph.DefaultLiveRecheck).
	SubscriptionRecheck time.Duration
	// SubscriptionsPerToken and SubscriptionsMax bound the subscriptions
	// one API token, and everyone together, hold at once in this process
	// (0: graph.DefaultSubscriptionsPerToken, graph.DefaultSubscriptionsMax).
	SubscriptionsPerToken, SubscriptionsMax int
	// WebsocketWriteTimeout bounds one websocket write (0:
	// engine.DefaultWriteTimeout); WebsocketSendBuffer is a websocket's
	// kernel send buffer in bytes (0: engine.DefaultSendBuffer).
	WebsocketWriteTimeout time.Duration
	WebsocketSendBuffer   int
	// SecretKey is the 32-byte AES-256 key integration secrets are sealed
	// with; empty, publishing secrets is refused.
	SecretKey []byte
	// Delivery configures the delivery of integration events in
	// development mode (attempts, backoff).
	Delivery graph.DeliveryConfig
	// Clock is the current time (default time.Now); tests move it.
	Clock func() time.Time
	Log   *slog.Logger
}

// Server is the HTTP surface: /graphql, /v1, /admin and the operational endpoints.
type Server struct {
	Resolver *graph.Resolver
	handler  http.Handler
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
	if cfg.BlobDir == "" {
		cfg.BlobDir = filepath.Join(os.TempDir(), "docsapi-blobs")
	}
	blobs, err := blob.NewDir(cfg.BlobDir)
	if err != nil {
		return nil, err
	}
	blobs.Clock = cfg.Clock // when a blob was stored, for its garbage collection
	log := slog.New(requestIDHandler{cfg.Log.Handler()})
	live := graph.NewLiveHub(db, log)
	live.MaxPerToken, live.MaxTotal = cfg.SubscriptionsPerToken, cfg.SubscriptionsMax
	res := &graph.Resolver{DB: db, URLs: graph.NewURLs(cfg.PublicURL), Log: log, Clock: cfg.Clock,
		Blobs: blobs, MaxUpload: cfg.MaxUploadBytes, GitFileRoot: cfg.GitFileRoot, GitAllowPrivate: cfg.GitAllowPrivate, GitLimits: cfg.GitLimits,
		SSOTokenTTL: cfg.SSOTokenTTL, Outbound: outbound.New(cfg.Outbound), Translator: cfg.Translator, SecretKey: cfg.SecretKey,
		Delivery: cfg.Delivery, Live: live, GenericExecution: cfg.GenericExecution,
		StrictAuthorization: cfg.StrictAuthorization}
	// Events recorded for delivery are enqueued once their transaction commits.
	db.OnDeliveries = res.EnqueueDeliveries
	eng := res.Engine(cfg.Debug)
	api, err := rest.New(eng, cfg.PublicURL, log, db.Serialize)
	if err != nil {
		return nil, err
	}
	auth := authenticator{res: res, log: log}

	mux := http.NewServeMux()
	mux.Handle("/v1/", auth.require(api.Handler(labelled)))
	// Served without a token (see rest.API.OpenAPIHandler); more specific
	// than "/v1/", so it never reaches the authenticated /v1 mux.
	mux.Handle(rest.OpenAPIPath, labelled("GET "+rest.OpenAPIPath, api.OpenAPIHandler()))
	// Browsers get GraphiQL at /graphql (a GET preferring text/html with no
	// ?query=); everything else is GraphQL. The page and its embedded assets
	// need no token: they hold no data, and the user pastes the token into
	// the playground's Headers editor.
	ws := engine.Websocket(engine.Sockets{PublicURL: cfg.PublicURL, Origins: cfg.WebsocketOrigins,
		Open: res.Sessions(cfg.SubscriptionRecheck), Log: log,
		WriteTimeout: cfg.WebsocketWriteTimeout, SendBuffer: cfg.WebsocketSendBuffer})
	gql := labelled("/graphql", auth.optional(eng.Handler(cfg.MaxUploadBytes, ws)))
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
	mux.Handle("GET /metrics", labelled("GET /metrics", metricsHandler(live)))

	h := perRequest(db, cfg.Debug, mux)
	h = limitBody(cfg.MaxBodyBytes, cfg.MaxUploadBytes+cfg.MaxBodyBytes, h)
	h = observe(log, h)
	return &Server{Resolver: res, handler: h}, nil
}

// Close ends the server's subscriptions and stops listening for their events.
func (s *Server) Close() { s.Resolver.Live.Close() }

// ServeHTTP serves a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }
