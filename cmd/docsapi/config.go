package main

import (
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/docsapi/docsapi/cmd/docsapi/server"
	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/graph/engine"
	"github.com/docsapi/docsapi/graph/outbound"
	"github.com/docsapi/docsapi/graph/translator"
	"github.com/docsapi/docsapi/published"
	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/blob"
	"github.com/docsapi/docsapi/store/pgserver"
)

// config is the server's configuration: every setting is a DOCSAPI_*
// environment variable, mirrored by a flag that overrides it.
type config struct {
	Addr           string
	DatabaseURL    string
	DataDir        string
	PublicURL      string
	PublishedURL   string
	AppURL         string
	CacheBytes     int64
	BootstrapToken string
	BootstrapEmail string
	AdminToken     string
	MetricsToken   string
	Debug          bool
	// GenericExecution runs every GraphQL field through gqlgen, without
	// the direct writer of hot subtrees.
	GenericExecution bool
	LogFormat        string
	// LogLevel is the least level logged: debug, info, warn or error.
	LogLevel     string
	MaxBodyBytes int64
	// BlobURL is the bucket of uploaded files; BlobDir, of earlier
	// versions, names a local directory (file://).
	BlobURL         string
	BlobDir         string
	GitFileRoot     string
	GitAllowPrivate bool
	// What one git import may bring in (graph.GitLimits).
	GitMaxFiles     int
	GitMaxBytes     int64
	GitMaxFileBytes int64
	SSOTokenTTL     time.Duration
	MaxUploadBytes  int64
	// Outbound HTTP (graph/outbound): loopback and private addresses,
	// overall time limit and response size limit.
	OutboundAllowLoopback bool
	OutboundTimeout       time.Duration
	OutboundMaxBytes      int64
	// The translation provider: an OpenAI-compatible chat-completions API.
	TranslationURL, TranslationModel, TranslationAPIKey string
	SecretKey                                           string
	// Deliveries of integration events in development mode.
	DeliveryAttempts int
	DeliveryBackoff  time.Duration
	// CORSOrigins, WebsocketOrigins: comma-separated host patterns of the
	// browser origins allowed to call the API (and subscribe), or only to
	// open subscriptions' websockets.
	CORSOrigins, WebsocketOrigins string
	// Limits on subscriptions and websocket writes.
	SubscriptionsPerToken int
	SubscriptionsMax      int
	WebsocketWriteTimeout time.Duration
	MaxConns              int32
	// StatementTimeout is the pool's statement_timeout (0: none).
	StatementTimeout time.Duration
	ShutdownTimeout  time.Duration
	// TrustedDocuments: the manifest (or directory) of the only GraphQL
	// documents ordinary tokens may run; empty: any.
	TrustedDocuments string
	// The rate budget: points per window for each caller (0: none).
	RateLimit  int64
	RateWindow time.Duration
	// PGRestarts is how many restarts of a dead embedded PostgreSQL are
	// tried in a row before the server exits (0: none).
	PGRestarts int
	// ReplicaURLs: comma-separated URLs of streaming replicas of
	// DatabaseURL, which take the reads of read-only requests;
	// ReplicaMaxLag, how far behind the primary one may be and take them.
	ReplicaURLs   string
	ReplicaMaxLag time.Duration

	// tracing is the TracerProvider the OTEL_* variables made at start
	// (tracing/otlp), nil while tracing is off.
	tracing trace.TracerProvider

	// invalid holds what bindConfig could not parse, reported by check.
	invalid error
}

func bindConfig(fs *flag.FlagSet) *config {
	c := &config{}
	str := func(p *string, name, env, def, usage string) {
		fs.StringVar(p, name, envOr(env, def), usage+" ($"+env+")")
	}
	str(&c.Addr, "addr", "DOCSAPI_ADDR", "127.0.0.1:8080", "listen address")
	str(&c.DatabaseURL, "database-url", "DATABASE_URL", "", "PostgreSQL URL; empty starts an embedded server")
	str(&c.DataDir, "data-dir", "DOCSAPI_DATA_DIR", defaultDataDir(), "data directory of the embedded PostgreSQL")
	str(&c.PublicURL, "public-url", "DOCSAPI_PUBLIC_URL", "", "public base URL of every address returned (default http://<addr>)")
	str(&c.PublishedURL, "published-url", "DOCSAPI_PUBLISHED_URL", "", "base URL of published sites, such as https://docs.example.com (default <public URL>/published); another host than the API's is recommended")
	str(&c.AppURL, "app-url", "DOCSAPI_APP_URL", "", "base URL of an editing application of your own, where /app/... addresses go (default: pages of this server)")
	cacheBytes, _ := strconv.ParseInt(envOr("DOCSAPI_PUBLISHED_CACHE_BYTES", strconv.Itoa(published.DefaultCacheBytes)), 10, 64)
	fs.Int64Var(&c.CacheBytes, "published-cache-bytes", cacheBytes, "bytes of rendered published pages kept in memory ($DOCSAPI_PUBLISHED_CACHE_BYTES)")
	str(&c.BootstrapToken, "bootstrap-token", "DOCSAPI_BOOTSTRAP_TOKEN", "", "on an empty database, create an owner and an organization with this API token")
	str(&c.BootstrapEmail, "bootstrap-email", "DOCSAPI_BOOTSTRAP_EMAIL", "owner@example.com", "email of the bootstrap owner")
	str(&c.AdminToken, "admin-token", "DOCSAPI_ADMIN_TOKEN", "", "enables /admin with this bearer token")
	str(&c.MetricsToken, "metrics-token", "DOCSAPI_METRICS_TOKEN", "", "the bearer token /metrics requires (empty: /metrics is open)")
	str(&c.LogFormat, "log-format", "DOCSAPI_LOG_FORMAT", "text", "log format: text or json")
	str(&c.LogLevel, "log-level", "DOCSAPI_LOG_LEVEL", "info", "least level logged: debug, info (a line per request), warn or error")
	fs.BoolVar(&c.Debug, "debug", envOr("DOCSAPI_DEBUG", "") == "1", "report SQL query counts and timings in responses ($DOCSAPI_DEBUG=1)")
	fs.BoolVar(&c.GenericExecution, "generic-execution", envOr("DOCSAPI_GENERIC_EXECUTION", "") == "1", "run every GraphQL field through gqlgen's executor, turning off the direct writing of hot subtrees such as a site's structure ($DOCSAPI_GENERIC_EXECUTION=1)")
	max, _ := strconv.ParseInt(envOr("DOCSAPI_MAX_BODY_BYTES", "1048576"), 10, 64)
	fs.Int64Var(&c.MaxBodyBytes, "max-body-bytes", max, "largest request body accepted ($DOCSAPI_MAX_BODY_BYTES)")
	str(&c.GitFileRoot, "git-file-root", "DOCSAPI_GIT_FILE_ROOT", "", "directory file:// git URLs may point into (empty: file:// refused)")
	fs.BoolVar(&c.GitAllowPrivate, "git-allow-private", envOr("DOCSAPI_GIT_ALLOW_PRIVATE", "") == "1", "let git URLs name private or loopback hosts ($DOCSAPI_GIT_ALLOW_PRIVATE=1)")
	gitFiles, _ := strconv.Atoi(envOr("DOCSAPI_GIT_MAX_FILES", strconv.Itoa(graph.DefaultGitMaxFiles)))
	fs.IntVar(&c.GitMaxFiles, "git-max-files", gitFiles, "most files and directories a git import's commit may have ($DOCSAPI_GIT_MAX_FILES)")
	gitBytes, _ := strconv.ParseInt(envOr("DOCSAPI_GIT_MAX_BYTES", strconv.Itoa(graph.DefaultGitMaxBytes)), 10, 64)
	fs.Int64Var(&c.GitMaxBytes, "git-max-bytes", gitBytes, "most bytes a git import's files may come to, each path counted ($DOCSAPI_GIT_MAX_BYTES)")
	gitFileBytes, _ := strconv.ParseInt(envOr("DOCSAPI_GIT_MAX_FILE_BYTES", strconv.Itoa(graph.DefaultGitMaxFileBytes)), 10, 64)
	fs.Int64Var(&c.GitMaxFileBytes, "git-max-file-bytes", gitFileBytes, "largest file a git import accepts ($DOCSAPI_GIT_MAX_FILE_BYTES)")
	ssoTTL, _ := time.ParseDuration(envOr("DOCSAPI_SSO_TOKEN_TTL", graph.DefaultSSOTokenTTL.String()))
	fs.DurationVar(&c.SSOTokenTTL, "sso-token-ttl", ssoTTL, "how long an API token issued by a SAML sign-in works ($DOCSAPI_SSO_TOKEN_TTL)")
	str(&c.BlobURL, "blob-url", "DOCSAPI_BLOB_URL", "", "bucket uploaded files are stored in: file:///dir, s3://bucket?region=...&endpoint=... (S3 and S3-compatible stores, Cloud Storage among them), azblob://container (default file://<data-dir>/blobs); instances of one service share one")
	str(&c.BlobDir, "blob-dir", "DOCSAPI_BLOB_DIR", "", "local directory uploaded files are stored in, as file://dir in -blob-url (kept for earlier configurations)")
	upload, _ := strconv.ParseInt(envOr("DOCSAPI_MAX_UPLOAD_BYTES", "26214400"), 10, 64)
	fs.Int64Var(&c.MaxUploadBytes, "max-upload-bytes", upload, "largest uploaded file accepted ($DOCSAPI_MAX_UPLOAD_BYTES)")
	fs.BoolVar(&c.OutboundAllowLoopback, "outbound-allow-loopback", envOr("DOCSAPI_OUTBOUND_ALLOW_LOOPBACK", "") == "1", "let outbound requests (spec URLs, webhooks) reach loopback and private addresses ($DOCSAPI_OUTBOUND_ALLOW_LOOPBACK=1)")
	outTimeout, _ := time.ParseDuration(envOr("DOCSAPI_OUTBOUND_TIMEOUT", "30s"))
	fs.DurationVar(&c.OutboundTimeout, "outbound-timeout", outTimeout, "time limit of one outbound request ($DOCSAPI_OUTBOUND_TIMEOUT)")
	outMax, _ := strconv.ParseInt(envOr("DOCSAPI_OUTBOUND_MAX_BYTES", "10485760"), 10, 64)
	fs.Int64Var(&c.OutboundMaxBytes, "outbound-max-bytes", outMax, "largest outbound response body accepted ($DOCSAPI_OUTBOUND_MAX_BYTES)")
	str(&c.TranslationURL, "translation-url", "DOCSAPI_TRANSLATION_URL", "", "base URL of an OpenAI-compatible API translating content, such as https://api.openai.com/v1 (empty: translation runs fail)")
	str(&c.TranslationModel, "translation-model", "DOCSAPI_TRANSLATION_MODEL", "", "model of the translation API")
	// The key only from the environment: flags show in process lists.
	c.TranslationAPIKey = os.Getenv("DOCSAPI_TRANSLATION_API_KEY")
	str(&c.CORSOrigins, "cors-origins", "DOCSAPI_CORS_ORIGINS", "", "comma-separated host patterns (docs.example.com, *.example.com, https://*.example.com) of browser origins, besides the public URL's, whose pages may call /graphql and /v1 (CORS) and open GraphQL subscriptions")
	str(&c.WebsocketOrigins, "websocket-origins", "DOCSAPI_WEBSOCKET_ORIGINS", "", "comma-separated host patterns (docs.example.com, *.example.com) of browser origins, besides the public URL's, allowed to open GraphQL subscriptions")
	str(&c.SecretKey, "secret-key", "DOCSAPI_SECRET_KEY", "", "32-byte key, base64 or 64 hex digits, that encrypts integration secrets (empty: none can be stored)")
	attempts, _ := strconv.Atoi(envOr("DOCSAPI_DELIVERY_ATTEMPTS", "5"))
	fs.IntVar(&c.DeliveryAttempts, "delivery-attempts", attempts, "attempts to deliver an integration event in development mode before it fails ($DOCSAPI_DELIVERY_ATTEMPTS)")
	backoff, _ := time.ParseDuration(envOr("DOCSAPI_DELIVERY_BACKOFF", "10s"))
	fs.DurationVar(&c.DeliveryBackoff, "delivery-backoff", backoff, "wait after a failed delivery attempt, doubled after each ($DOCSAPI_DELIVERY_BACKOFF)")
	conns, _ := strconv.ParseInt(envOr("DOCSAPI_DB_MAX_CONNS", "20"), 10, 32)
	c.MaxConns = int32(conns)
	c.StatementTimeout = store.DefaultStatementTimeout
	if v, ok := os.LookupEnv("DOCSAPI_STATEMENT_TIMEOUT"); ok {
		// A typo must not turn the limit off, as a zero duration would.
		d, err := time.ParseDuration(v)
		if err != nil {
			c.invalid = fmt.Errorf("DOCSAPI_STATEMENT_TIMEOUT: %w", err)
		}
		c.StatementTimeout = d
	}
	fs.DurationVar(&c.StatementTimeout, "statement-timeout", c.StatementTimeout, "how long one SQL statement may run before PostgreSQL cancels it and the request answers 503; 0: no limit ($DOCSAPI_STATEMENT_TIMEOUT)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 30*time.Second, "how long SIGTERM waits for in-flight requests")
	restarts, err := strconv.Atoi(envOr("DOCSAPI_PG_RESTARTS", "5"))
	if err != nil && c.invalid == nil {
		// A typo must not turn the restarts off, as 0 would.
		c.invalid = fmt.Errorf("DOCSAPI_PG_RESTARTS: %w", err)
	}
	str(&c.TrustedDocuments, "trusted-documents", "DOCSAPI_TRUSTED_DOCUMENTS", "", "a JSON manifest of id → GraphQL document (GraphQL Code Generator, Relay, Apollo's manifest), or a directory of manifests and .graphql files: the only documents /graphql runs for tokens other than developer tokens (empty: any)")
	rateLimit, err := strconv.ParseInt(envOr("DOCSAPI_RATE_LIMIT", strconv.FormatInt(server.DefaultRateLimit, 10)), 10, 64)
	if err != nil && c.invalid == nil {
		c.invalid = fmt.Errorf("DOCSAPI_RATE_LIMIT: %w", err)
	}
	fs.Int64Var(&c.RateLimit, "rate-limit", rateLimit, "points (operation complexity) each token, or anonymous client address, may spend per rate window, over GraphQL and REST together; 0: no limit ($DOCSAPI_RATE_LIMIT)")
	rateWindow, err := time.ParseDuration(envOr("DOCSAPI_RATE_WINDOW", server.DefaultRateWindow.String()))
	if err != nil && c.invalid == nil {
		c.invalid = fmt.Errorf("DOCSAPI_RATE_WINDOW: %w", err)
	}
	fs.DurationVar(&c.RateWindow, "rate-window", rateWindow, "length of the rate window ($DOCSAPI_RATE_WINDOW)")
	perToken, err := strconv.Atoi(envOr("DOCSAPI_SUBSCRIPTIONS_PER_TOKEN", strconv.Itoa(graph.DefaultSubscriptionsPerToken)))
	if err != nil && c.invalid == nil {
		c.invalid = fmt.Errorf("DOCSAPI_SUBSCRIPTIONS_PER_TOKEN: %w", err)
	}
	fs.IntVar(&c.SubscriptionsPerToken, "subscriptions-per-token", perToken, "most GraphQL subscriptions one API token holds at once in this process ($DOCSAPI_SUBSCRIPTIONS_PER_TOKEN)")
	total, err := strconv.Atoi(envOr("DOCSAPI_SUBSCRIPTIONS_MAX", strconv.Itoa(graph.DefaultSubscriptionsMax)))
	if err != nil && c.invalid == nil {
		c.invalid = fmt.Errorf("DOCSAPI_SUBSCRIPTIONS_MAX: %w", err)
	}
	fs.IntVar(&c.SubscriptionsMax, "subscriptions-max", total, "most GraphQL subscriptions this process holds at once ($DOCSAPI_SUBSCRIPTIONS_MAX)")
	writeTimeout, err := time.ParseDuration(envOr("DOCSAPI_WEBSOCKET_WRITE_TIMEOUT", engine.DefaultWriteTimeout.String()))
	if err != nil && c.invalid == nil {
		c.invalid = fmt.Errorf("DOCSAPI_WEBSOCKET_WRITE_TIMEOUT: %w", err)
	}
	fs.DurationVar(&c.WebsocketWriteTimeout, "websocket-write-timeout", writeTimeout, "how long one websocket write may wait for a client that does not read before its connection is dropped ($DOCSAPI_WEBSOCKET_WRITE_TIMEOUT)")
	fs.IntVar(&c.PGRestarts, "pg-restarts", restarts, "restarts of a dead embedded PostgreSQL tried in a row before docsapi exits with an error; 0: exit at once ($DOCSAPI_PG_RESTARTS)")
	str(&c.ReplicaURLs, "replica-urls", "DOCSAPI_REPLICA_URLS", "", "comma-separated PostgreSQL URLs of streaming replicas of DATABASE_URL: GraphQL queries and REST GETs read there, a caller never older than its own writes (docs/scaling.md)")
	maxLag, err := time.ParseDuration(envOr("DOCSAPI_REPLICA_MAX_LAG", store.DefaultReplicaMaxLag.String()))
	if err != nil && c.invalid == nil {
		c.invalid = fmt.Errorf("DOCSAPI_REPLICA_MAX_LAG: %w", err)
	}
	fs.DurationVar(&c.ReplicaMaxLag, "replica-max-lag", maxLag, "how far behind the primary a replica may be and still take reads ($DOCSAPI_REPLICA_MAX_LAG)")
	return c
}

// check reports a setting that cannot be used.
func (c *config) check() error {
	if c.invalid != nil {
		return c.invalid
	}
	if c.PGRestarts < 0 {
		return fmt.Errorf("the number of restarts of the embedded PostgreSQL cannot be negative (%d)", c.PGRestarts)
	}
	if c.RateLimit < 0 {
		return fmt.Errorf("the rate limit cannot be negative (%d); 0 turns it off", c.RateLimit)
	}
	if c.RateLimit > 0 && c.RateWindow < time.Second {
		return fmt.Errorf("the rate window must be at least a second, not %s", c.RateWindow)
	}
	if c.BlobURL != "" && c.BlobDir != "" {
		return errors.New("DOCSAPI_BLOB_URL and DOCSAPI_BLOB_DIR both name where files are stored: set only one (DOCSAPI_BLOB_URL)")
	}
	if c.SubscriptionsPerToken < 1 || c.SubscriptionsMax < 1 {
		return fmt.Errorf("the limits on subscriptions must be at least 1 (per token %d, in total %d)", c.SubscriptionsPerToken, c.SubscriptionsMax)
	}
	if c.WebsocketWriteTimeout <= 0 {
		return fmt.Errorf("the websocket write timeout must be positive (%s)", c.WebsocketWriteTimeout)
	}
	if c.StatementTimeout < 0 {
		return fmt.Errorf("the statement timeout cannot be negative (%s); 0 turns it off", c.StatementTimeout)
	}
	if len(c.replicaURLs()) > 0 && c.DatabaseURL == "" {
		return errors.New("DOCSAPI_REPLICA_URLS names replicas of DATABASE_URL, which is not set: the embedded PostgreSQL has no replicas")
	}
	if c.ReplicaMaxLag <= 0 {
		return fmt.Errorf("the replicas' maximum lag must be positive, not %s", c.ReplicaMaxLag)
	}
	if _, err := c.logLevel(); err != nil {
		return err
	}
	return nil
}

// logLevel is the level of DOCSAPI_LOG_LEVEL.
func (c *config) logLevel() (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(c.LogLevel)) {
	case "debug":
		return slog.LevelDebug, nil
	case "info", "":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("DOCSAPI_LOG_LEVEL is %q: it is debug, info, warn or error", c.LogLevel)
}

// replicaURLs are the URLs of DOCSAPI_REPLICA_URLS.
func (c *config) replicaURLs() []string { return commaList(c.ReplicaURLs) }

// replicas configures the reads on the replicas: their pools are the
// primary's size and statement timeout.
func (c *config) replicas(log *slog.Logger) store.ReplicaOptions {
	return store.ReplicaOptions{MaxLag: c.ReplicaMaxLag, Log: log,
		Pool: store.Options{MaxConns: c.MaxConns, StatementTimeout: c.StatementTimeout}}
}

// logger is the configured logger (check has checked the level): its
// lines made with a request's context carry the request's id and trace.
func (c *config) logger() *slog.Logger {
	level, _ := c.logLevel()
	opts := &slog.HandlerOptions{Level: level}
	if c.LogFormat == "json" {
		return slog.New(server.LogHandler(slog.NewJSONHandler(os.Stderr, opts)))
	}
	return slog.New(server.LogHandler(slog.NewTextHandler(os.Stderr, opts)))
}

// secretKey decodes DOCSAPI_SECRET_KEY: 64 hex digits or base64 of 32 bytes.
func (c *config) secretKey() ([]byte, error) {
	if c.SecretKey == "" {
		return nil, nil
	}
	if b, err := hex.DecodeString(c.SecretKey); err == nil && len(b) == 32 {
		return b, nil
	}
	if b, err := base64.StdEncoding.DecodeString(c.SecretKey); err == nil && len(b) == 32 {
		return b, nil
	}
	return nil, errors.New("DOCSAPI_SECRET_KEY must be 32 bytes, as 64 hex digits or base64")
}

func (c *config) server(log *slog.Logger) server.Config {
	public := c.PublicURL
	if public == "" {
		public = "http://" + c.Addr
	}
	blobs := c.BlobURL
	if blobs == "" {
		// Where earlier versions kept files: existing installs keep theirs.
		dir := cmp.Or(c.BlobDir, filepath.Join(c.DataDir, "blobs"))
		blobs, _ = blob.FileURL(dir) // an error only for an unknown working directory
	}
	key, _ := c.secretKey() // checked at start-up (serve)
	var provider translator.Provider
	if c.TranslationURL != "" && c.TranslationModel != "" {
		provider = &translator.OpenAI{URL: c.TranslationURL, Model: c.TranslationModel, APIKey: c.TranslationAPIKey}
	}
	return server.Config{PublicURL: public, PublishedURL: c.PublishedURL, AppURL: c.AppURL, PublishedCacheBytes: c.CacheBytes, AdminToken: c.AdminToken, MetricsToken: c.MetricsToken, Debug: c.Debug, GenericExecution: c.GenericExecution, Translator: provider, SecretKey: key,
		CORSOrigins: commaList(c.CORSOrigins), WebsocketOrigins: commaList(c.WebsocketOrigins),
		TrustedDocuments: c.TrustedDocuments, RateLimit: c.RateLimit, RateWindow: c.RateWindow,
		MaxBodyBytes: c.MaxBodyBytes, BlobURL: blobs, MaxUploadBytes: c.MaxUploadBytes,
		GitFileRoot: c.GitFileRoot, GitAllowPrivate: c.GitAllowPrivate, SSOTokenTTL: c.SSOTokenTTL, Log: log, Tracing: c.tracing,
		SubscriptionsPerToken: c.SubscriptionsPerToken, SubscriptionsMax: c.SubscriptionsMax, WebsocketWriteTimeout: c.WebsocketWriteTimeout,
		Delivery:  graph.DeliveryConfig{Attempts: c.DeliveryAttempts, Backoff: c.DeliveryBackoff},
		GitLimits: graph.GitLimits{MaxFiles: c.GitMaxFiles, MaxBytes: c.GitMaxBytes, MaxFileBytes: c.GitMaxFileBytes},
		Outbound:  outbound.Config{AllowLoopback: c.OutboundAllowLoopback, Timeout: c.OutboundTimeout, MaxBytes: c.OutboundMaxBytes}}
}

// commaList splits a comma-separated setting, dropping empty items.
func commaList(s string) []string {
	var items []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}

// supervision is how the embedded PostgreSQL is restarted when it dies.
func (c *config) supervision() pgserver.Supervision {
	if c.PGRestarts == 0 {
		return pgserver.Supervision{Attempts: -1} // none
	}
	return pgserver.Supervision{Attempts: c.PGRestarts}
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// defaultDataDir is where the embedded database lives unless configured:
// a system directory for root (whose home the postgres user cannot enter),
// the user's data directory otherwise.
func defaultDataDir() string {
	if os.Geteuid() == 0 {
		return "/var/lib/docsapi"
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "docsapi")
	}
	return "docsapi-data"
}
