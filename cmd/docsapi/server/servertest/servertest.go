// Package servertest runs the real server for tests: a fresh database, the
// full HTTP stack on a loopback listener, and helpers to act as users.
package servertest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/docsapi/docsapi/cmd/docsapi/server"
	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/graph/jobs"
	"github.com/docsapi/docsapi/graph/outbound"
	"github.com/docsapi/docsapi/graph/translator"
	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/blob"
	"github.com/docsapi/docsapi/store/blob/blobtest"
	"github.com/docsapi/docsapi/store/pgtest"
)

// Env is one running server with its own database.
type Env struct {
	T          testing.TB
	URL        string
	DB         *store.DB
	Server     *server.Server
	Clock      *Clock
	AdminToken string
	// Jobs is the background job runner, when Options.Jobs is set.
	Jobs *jobs.Runner

	opts        Options
	databaseURL string
}

// Options tune New.
type Options struct {
	// Debug turns on query counts in responses.
	Debug bool
	// GenericExecution turns off the direct writer of hot GraphQL subtrees.
	GenericExecution bool
	// Jobs starts the background job runner (Env.Jobs), on the test clock.
	Jobs bool
	// OutboundTimeout is the outbound client's time limit (default 30s);
	// OutboundMaxBytes its response size limit (default 10 MiB).
	OutboundTimeout  time.Duration
	OutboundMaxBytes int64
	// Translator runs translations (nil: none configured).
	Translator translator.Provider
	// DeliveryAttempts is how many attempts a delivery of an integration
	// event makes (default 3); they are 20ms apart, then 40ms...
	DeliveryAttempts int
	// Logs receives the server's and the jobs' log lines at debug level
	// (default: discarded), for tests of what is logged.
	Logs io.Writer
	// StatementTimeout is the pool's statement_timeout (default
	// store.DefaultStatementTimeout, as in production).
	StatementTimeout time.Duration
	// SubscriptionRecheck is server.Config's (default: the server's).
	SubscriptionRecheck time.Duration
	// CORSOrigins is server.Config's.
	CORSOrigins []string
	// MetricsToken is server.Config's (default: /metrics is open).
	MetricsToken string
	// TrustedDocuments is server.Config's: a manifest or directory of the
	// only documents ordinary tokens may run.
	TrustedDocuments string
	// RateLimit and RateWindow are server.Config's (0: no budget);
	// RateExact counts every request in the database before it runs
	// (servers sharing a database then share the count exactly).
	RateLimit  int64
	RateWindow time.Duration
	RateExact  bool
	// The limits on subscriptions and websocket writes of server.Config
	// (default: the server's).
	SubscriptionsPerToken, SubscriptionsMax int
	WebsocketWriteTimeout                   time.Duration
	WebsocketSendBuffer                     int
	DeliveryLanes                           int
	// DB, when set, is the (migrated) database to serve instead of a new
	// one on the shared test cluster: tests of the database's faults run
	// on a server of their own (pgtest.NewCluster, store.Connect), which
	// they stop or kill. The test closes it; StatementTimeout is ignored.
	DB *store.DB
	// BlobURL is the bucket of uploaded files (default: a new directory;
	// with DOCSAPI_TEST_BLOB=s3 in the environment, a bucket of an
	// in-process S3 server, to run any test on object storage).
	// AnotherProcess shares it, as instances of one service do.
	BlobURL string
	// GitLimits bounds git imports (server.Config's; zero: the defaults);
	// MaxUploadBytes bounds a file (default 1 MiB).
	GitLimits      graph.GitLimits
	MaxUploadBytes int64
	// Tracing traces the server, its database's statements and its jobs
	// (server.Config.Tracing; nil: off). Tests give the SDK's, with its
	// in-memory exporter (go.opentelemetry.io/otel/sdk/trace/tracetest).
	Tracing trace.TracerProvider
}

// logger is the log the options ask for. DOCSAPI_TEST_LOGS=1 sends the
// logs of servers that keep none to standard error, to see why a test
// failed.
func (o Options) logger() *slog.Logger {
	if o.Logs == nil && os.Getenv("DOCSAPI_TEST_LOGS") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if o.Logs == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return slog.New(slog.NewTextHandler(o.Logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// New starts a server on a new database; it stops when the test ends.
func New(t testing.TB, opts ...Options) *Env {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	db, url := o.DB, ""
	if db == nil {
		url = pgtest.NewDatabase(t)
		db = openDB(t, url, o)
	}
	if o.BlobURL == "" {
		o.BlobURL = newBucket(t)
	}
	clock := &Clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	env := &Env{T: t, DB: db, Clock: clock, AdminToken: "admin-" + store.NewSecret(), opts: o, databaseURL: url}
	env.start()
	if o.Jobs {
		runner, err := jobs.Start(context.Background(), jobs.Config{DB: db, Resolver: env.Server.Resolver, Clock: clock.Now,
			Log: o.logger(), PollInterval: 20 * time.Millisecond, Tracing: o.Tracing})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = runner.Stop(ctx)
		})
		env.Jobs = runner
	}
	return env
}

// newBucket is a new bucket for a test's files: a directory, or S3 when
// DOCSAPI_TEST_BLOB=s3.
func newBucket(t testing.TB) string {
	if os.Getenv("DOCSAPI_TEST_BLOB") == "s3" {
		return blobtest.S3(t)
	}
	u, err := blob.FileURL(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// openDB opens the test server's pool on the database at url.
func openDB(t testing.TB, url string, o Options) *store.DB {
	t.Helper()
	db, err := store.OpenWith(context.Background(), url, store.Options{MaxConns: 10,
		StatementTimeout: cmp.Or(o.StatementTimeout, store.DefaultStatementTimeout), Tracing: o.Tracing})
	if err != nil {
		t.Fatalf("servertest: %v", err)
	}
	t.Cleanup(db.Close)
	return db
}

// AnotherProcessOwnPool starts a second server on e's database with a
// pool of its own, as another machine's process runs: nothing of the
// store is shared (the caller cache, what its own writes tell it), and
// what it hears of e's writes comes from PostgreSQL.
func (e *Env) AnotherProcessOwnPool() *Env {
	e.T.Helper()
	if e.databaseURL == "" {
		e.T.Fatal("servertest: AnotherProcessOwnPool needs a database servertest made")
	}
	other := &Env{T: e.T, DB: openDB(e.T, e.databaseURL, e.opts), Clock: e.Clock, AdminToken: e.AdminToken, opts: e.opts}
	other.start()
	return other
}

// AnotherProcess starts a second server on e's database, as another server
// process would run: its own listeners, caches and subscriptions.
func (e *Env) AnotherProcess() *Env {
	e.T.Helper()
	other := &Env{T: e.T, DB: e.DB, Clock: e.Clock, AdminToken: e.AdminToken, opts: e.opts}
	other.start()
	return other
}

// start starts e's server on a loopback listener; it stops when the test ends.
func (e *Env) start() {
	t, db, clock, env, o := e.T, e.DB, e.Clock, e, e.opts
	t.Helper()
	// The public URL is known only once the listener exists; a handler
	// indirection lets the server be built with it. Requests wait until it
	// is set: a client in another process (the GraphQL-over-HTTP audit)
	// connects after it is, but nothing the race detector can see says so.
	var handler http.Handler
	ready := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-ready
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	srv, err := server.New(db, server.Config{
		PublicURL: ts.URL, AdminToken: env.AdminToken, Debug: o.Debug, GenericExecution: o.GenericExecution, Clock: clock.Now,
		StrictAuthorization: true,
		BlobURL:             o.BlobURL, MaxUploadBytes: cmp.Or(o.MaxUploadBytes, 1<<20), GitFileRoot: os.TempDir(), SecretKey: []byte("test-key-for-integration-secret" + "s"), Log: o.logger(),
		// Test servers (spec sources, webhook receivers) listen on loopback,
		// which DOCSAPI_OUTBOUND_ALLOW_LOOPBACK=1 allows in production too.
		Outbound:   outbound.Config{AllowLoopback: true, Timeout: o.OutboundTimeout, MaxBytes: o.OutboundMaxBytes},
		Translator: o.Translator,
		Delivery:   graph.DeliveryConfig{Attempts: cmp.Or(o.DeliveryAttempts, 3), Backoff: 20 * time.Millisecond},
		// Tests of the periodic re-check shorten it.
		SubscriptionRecheck: o.SubscriptionRecheck,
		CORSOrigins:         o.CORSOrigins,
		MetricsToken:        o.MetricsToken,
		TrustedDocuments:    o.TrustedDocuments,
		RateLimit:           o.RateLimit, RateWindow: o.RateWindow, RateExact: o.RateExact,
		SubscriptionsPerToken: o.SubscriptionsPerToken, SubscriptionsMax: o.SubscriptionsMax,
		WebsocketWriteTimeout: o.WebsocketWriteTimeout, WebsocketSendBuffer: o.WebsocketSendBuffer,
		Tracing:       o.Tracing,
		DeliveryLanes: o.DeliveryLanes,
		GitLimits:     o.GitLimits,
	})
	if err != nil {
		handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "the test server did not start", http.StatusServiceUnavailable)
		})
		close(ready)
		t.Fatal(err)
	}
	handler = srv
	close(ready)
	t.Cleanup(srv.Close) // before ts.Close: subscriptions end first
	env.URL, env.Server = ts.URL, srv
}

// Clock is a settable clock.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// User is a user of the instance with an API token.
type User struct {
	Env   *Env
	ID    string
	Email string
	Token string
}

// NewUser creates a user named name.
func (e *Env) NewUser(name string) *User {
	e.T.Helper()
	email := strings.ToLower(strings.ReplaceAll(name, " ", ".")) + "-" + strings.ToLower(store.NewID()[:6]) + "@example.com"
	created, err := e.Server.Resolver.CreateUser(context.Background(), email, name)
	if err != nil {
		e.T.Fatal(err)
	}
	return &User{Env: e, ID: created.User.ID, Email: email, Token: created.Token}
}

// NewDeveloperToken issues u a developer token (what may run any document
// under trusted documents) and returns it, as an administrator would.
func (u *User) NewDeveloperToken() string {
	u.Env.T.Helper()
	token, err := u.Env.Server.Resolver.CreateToken(context.Background(), u.ID, true)
	if err != nil {
		u.Env.T.Fatal(err)
	}
	return token
}

// NewOrg creates an organization administered by u and returns its id.
func (u *User) NewOrg(title string) string {
	u.Env.T.Helper()
	res := u.Do("POST", "/v1/orgs", map[string]any{"title": title})
	res.Expect(http.StatusCreated)
	return res.String("id")
}

// Join adds u to orgID with role ("" for a guest).
func (u *User) Join(orgID string, role store.MemberRole) {
	u.Env.T.Helper()
	var r *store.MemberRole
	if role != "" {
		r = &role
	}
	if err := store.AddMember(context.Background(), u.Env.DB, orgID, u.ID, r, u.Env.Clock.Now()); err != nil {
		u.Env.T.Fatal(err)
	}
}

// Response is an HTTP response, read whole.
type Response struct {
	t      testing.TB
	Status int
	Header http.Header
	Body   []byte
	req    string
}

// Do sends a request as u. body is marshalled to JSON unless it is a string
// (sent as is) or nil.
func (u *User) Do(method, path string, body any) *Response {
	u.Env.T.Helper()
	return u.Env.Do(method, path, u.Token, body)
}

// Do sends a request with token (none when empty).
func (e *Env) Do(method, path, token string, body any) *Response {
	e.T.Helper()
	return e.DoWith(method, path, token, body, nil)
}

// DoWith sends a request as u with these headers besides.
func (u *User) DoWith(method, path string, body any, header http.Header) *Response {
	u.Env.T.Helper()
	return u.Env.DoWith(method, path, u.Token, body, header)
}

// DoWith sends a request with token (none when empty) and these headers besides.
func (e *Env) DoWith(method, path, token string, body any, header http.Header) *Response {
	e.T.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.T.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.URL+path, r)
	if err != nil {
		e.T.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.T.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		e.T.Fatal(err)
	}
	return &Response{t: e.T, Status: resp.StatusCode, Header: resp.Header, Body: raw, req: method + " " + path}
}

// Expect fails the test unless the status is status.
func (r *Response) Expect(status int) *Response {
	r.t.Helper()
	if r.Status != status {
		r.t.Fatalf("%s: status %d, want %d; body: %s", r.req, r.Status, status, r.Body)
	}
	return r
}

// JSON decodes the body into a map.
func (r *Response) JSON() map[string]any {
	r.t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		r.t.Fatalf("%s: body is not a JSON object: %v: %s", r.req, err, r.Body)
	}
	return m
}

// Decode decodes the body into v.
func (r *Response) Decode(v any) {
	r.t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		r.t.Fatalf("%s: %v: %s", r.req, err, r.Body)
	}
}

// String returns the string member key of the body.
func (r *Response) String(key string) string {
	r.t.Helper()
	s, ok := r.JSON()[key].(string)
	if !ok {
		r.t.Fatalf("%s: no string %q in %s", r.req, key, r.Body)
	}
	return s
}

// ErrorMessage returns the message of an error body, failing if the body is
// not the reference's error shape with the response's status as code.
func (r *Response) ErrorMessage() string {
	r.t.Helper()
	var body struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	r.Decode(&body)
	if body.Error == nil || body.Error.Code != r.Status || body.Error.Message == "" {
		r.t.Fatalf("%s: not an error body for status %d: %s", r.req, r.Status, r.Body)
	}
	return body.Error.Message
}

// GraphQL runs a GraphQL operation as u and returns the response.
func (u *User) GraphQL(query string, vars map[string]any) *GraphQLResponse {
	u.Env.T.Helper()
	res := u.Do("POST", "/graphql", map[string]any{"query": query, "variables": vars})
	var out GraphQLResponse
	res.Decode(&out)
	out.Status = res.Status
	return &out
}

// GraphQLResponse is a decoded GraphQL response.
type GraphQLResponse struct {
	Status     int             `json:"-"`
	Data       json.RawMessage `json:"data"`
	Errors     []GraphQLError  `json:"errors"`
	Extensions map[string]any  `json:"extensions"`
}

// GraphQLError is one error of a GraphQL response.
type GraphQLError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}
