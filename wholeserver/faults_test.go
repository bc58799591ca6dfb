package wholeserver_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/pgserver"
	"github.com/docsapi/docsapi/store/pgtest"
)

// expectUnavailable fails unless res is the REST answer of a database out of
// reach: 503, the reference's error shape, Retry-After.
func expectUnavailable(t *testing.T, what string, res *servertest.Response) {
	t.Helper()
	if res.Status != http.StatusServiceUnavailable {
		t.Errorf("%s: status %d, want 503: %s", what, res.Status, res.Body)
		return
	}
	if msg := res.ErrorMessage(); msg != "the database is unavailable; try again shortly" {
		t.Errorf("%s: message %q", what, msg)
	}
	if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || s <= 0 {
		t.Errorf("%s: Retry-After %q", what, res.Header.Get("Retry-After"))
	}
}

// gqlUnavailable reports whether a GraphQL answer is the database out of
// reach: one error with code UNAVAILABLE and status 503, answered before
// execution (authentication: HTTP 503 with Retry-After) or during it
// (HTTP 200, as every error of an executed operation).
func gqlUnavailable(t *testing.T, what string, user *servertest.User, query string, vars map[string]any) {
	t.Helper()
	expectGQLUnavailable(t, what, user.Do("POST", "/graphql", map[string]any{"query": query, "variables": vars}))
}

// expectGQLUnavailable is gqlUnavailable's check of an answer.
func expectGQLUnavailable(t *testing.T, what string, res *servertest.Response) {
	t.Helper()
	var out servertest.GraphQLResponse
	res.Decode(&out)
	if len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "UNAVAILABLE" || out.Errors[0].Extensions["status"] != 503.0 ||
		out.Errors[0].Message != "the database is unavailable; try again shortly" {
		t.Errorf("%s: %d %s", what, res.Status, res.Body)
	}
	switch res.Status {
	case http.StatusServiceUnavailable:
		if res.Header.Get("Retry-After") == "" {
			t.Errorf("%s: 503 without Retry-After", what)
		}
	case http.StatusOK:
	default:
		t.Errorf("%s: status %d", what, res.Status)
	}
}

// eventually polls f every 20ms for up to d, until it returns true.
func eventually(d time.Duration, f func() bool) bool {
	deadline := time.Now().Add(d)
	for !f() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// PostgreSQL stopped under a running server: requests in flight, and every
// request while it is down, authentication included, answer 503
// UNAVAILABLE with Retry-After on REST and GraphQL, never 500. Once it is
// back, the pool reconnects and the same requests succeed.
func TestDatabaseDownAnswers503(t *testing.T) {
	t.Parallel()
	cluster := pgtest.NewCluster(t, pgserver.Options{})
	ctx := context.Background()
	db, err := store.OpenWith(ctx, cluster.NewDatabase(), store.Options{MaxConns: 10, StatementTimeout: store.DefaultStatementTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	env := servertest.New(t, servertest.Options{DB: db})
	alice, bob := env.NewUser("Alice"), env.NewUser("Bob")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Handbook"}`).Expect(http.StatusCreated).String("id")
	const rename = `mutation($id: ID!) { updateSpace(id: $id, input: {title: "Renamed"}) { title } }`

	// Requests in flight when the server stops: both wait for a row
	// another session holds, and their connections are cut under them.
	conn, err := pgx.Connect(ctx, db.Pool.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT id FROM spaces WHERE id = $1 FOR UPDATE", space); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	// At the stop, the session holding the row ends first, and a waiting
	// request may get the row and commit before its own session is ended:
	// it then answers its write done (200), which is as right. Any other
	// answer is 503.
	go func() {
		defer wg.Done()
		res := alice.Do("PATCH", "/v1/spaces/"+space, `{"title":"Renamed"}`)
		if res.Status == http.StatusOK && res.String("title") == "Renamed" {
			return
		}
		expectUnavailable(t, "REST request in flight", res)
	}()
	go func() {
		defer wg.Done()
		res := alice.Do("POST", "/graphql", map[string]any{"query": rename, "variables": map[string]any{"id": space}})
		var out struct {
			Data struct{ UpdateSpace struct{ Title string } }
		}
		res.Decode(&out)
		if res.Status == http.StatusOK && out.Data.UpdateSpace.Title == "Renamed" {
			return
		}
		expectGQLUnavailable(t, "GraphQL request in flight", res)
	}()
	// Watched from another session: a transaction sees pg_stat_activity as
	// it was at its first look.
	if !eventually(10*time.Second, func() bool {
		var waiting int
		err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'").Scan(&waiting)
		return err == nil && waiting == 2
	}) {
		t.Fatal("the requests never waited for the lock")
	}
	cluster.Stop()
	wg.Wait()

	// While it is down: cached token or not, REST or GraphQL, read or write.
	expectUnavailable(t, "REST read", alice.Do("GET", "/v1/spaces/"+space, nil))
	expectUnavailable(t, "REST write", alice.Do("PATCH", "/v1/spaces/"+space, `{"title":"Renamed"}`))
	expectUnavailable(t, "REST, a token never cached", bob.Do("GET", "/v1/orgs", nil))
	gqlUnavailable(t, "GraphQL read", alice, `{ viewer { id } }`, nil)
	gqlUnavailable(t, "GraphQL write", alice, rename, map[string]any{"id": space})
	res := bob.Do("POST", "/graphql", map[string]any{"query": `{ viewer { id } }`})
	if res.Status != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || !strings.Contains(string(res.Body), `"UNAVAILABLE"`) {
		t.Errorf("GraphQL authentication of a token never cached: %d %q %s", res.Status, res.Header.Get("Retry-After"), res.Body)
	}
	env.Do("GET", "/readyz", "", nil).Expect(http.StatusServiceUnavailable)
	// The database is another process's (a URL): this one is healthy.
	env.Do("GET", "/healthz", "", nil).Expect(http.StatusOK)

	cluster.Start()
	if !eventually(10*time.Second, func() bool { return alice.Do("GET", "/v1/spaces/"+space, nil).Status == http.StatusOK }) {
		t.Fatal("requests still fail after the database is back")
	}
	if title := alice.Do("PATCH", "/v1/spaces/"+space, `{"title":"Renamed"}`).Expect(http.StatusOK).String("title"); title != "Renamed" {
		t.Errorf("title %q", title)
	}
	bob.Do("GET", "/v1/orgs", nil).Expect(http.StatusOK)
	if gql := bob.GraphQL(`{ viewer { id } }`, nil); gql.Status != http.StatusOK || len(gql.Errors) != 0 {
		t.Errorf("GraphQL once the database is back: %d %+v", gql.Status, gql.Errors)
	}
	env.Do("GET", "/readyz", "", nil).Expect(http.StatusOK)
}

// The embedded PostgreSQL killed with SIGKILL (as the OOM killer kills)
// under a running server: /healthz says it is down, every request answers
// 503 with Retry-After or succeeds, never 500; the supervisor restarts it
// within seconds, and a write acknowledged just before the kill is there
// after it. This is the production path (store.Connect): a durable,
// supervised server.
func TestEmbeddedDatabaseKilledIsRestarted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, closeDB, err := store.Connect(ctx, store.ConnectOptions{DataDir: pgtest.NewDataDir(t), MaxConns: 10,
		StatementTimeout: store.DefaultStatementTimeout, Supervision: pgserver.Supervision{Backoff: 300 * time.Millisecond},
		OnFailure: func(err error) { t.Errorf("the supervisor gave up: %v", err) },
		Log:       slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeDB)
	if err := db.Migrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// Nothing turns the durability of commits off: the server's settings
	// nor the pool's.
	for _, setting := range []string{"fsync", "synchronous_commit", "full_page_writes"} {
		var v string
		if err := db.QueryRowContext(ctx, "SHOW "+setting).Scan(&v); err != nil || v != "on" {
			t.Errorf("%s = %q, %v", setting, v, err)
		}
	}
	env := servertest.New(t, servertest.Options{DB: db})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	env.Do("GET", "/healthz", "", nil).Expect(http.StatusOK)

	// Acknowledged, then the server is killed at once.
	alice.Do("PATCH", "/v1/orgs/"+org, `{"title":"Acknowledged"}`).Expect(http.StatusOK)
	pid := db.Embedded().PID()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if !eventually(5*time.Second, func() bool { return env.Do("GET", "/healthz", "", nil).Status == http.StatusServiceUnavailable }) {
		t.Error("/healthz never said the embedded database was down")
	}
	unavailable := 0
	if !eventually(15*time.Second, func() bool {
		res := alice.Do("GET", "/v1/orgs/"+org, nil)
		switch res.Status {
		case http.StatusOK:
			if title := res.String("title"); title != "Acknowledged" {
				t.Fatalf("after the restart the title is %q: an acknowledged write was lost", title)
			}
			return true
		case http.StatusServiceUnavailable:
			unavailable++
			expectUnavailable(t, "REST while restarting", res)
		default:
			t.Fatalf("while restarting: %d %s", res.Status, res.Body)
		}
		return false
	}) {
		t.Fatalf("requests still fail 15s after the kill: %v", db.Health())
	}
	t.Logf("back %s after the kill (%d answers 503 meanwhile)", time.Since(killed).Round(time.Millisecond), unavailable)
	// The supervisor may be a poll behind the first requests.
	if !eventually(5*time.Second, func() bool { return env.Do("GET", "/healthz", "", nil).Status == http.StatusOK }) {
		t.Errorf("/healthz still says down: %v", db.Health())
	}
	if db.Embedded().PID() == pid {
		t.Error("the same pid after the restart")
	}
	alice.Do("PATCH", "/v1/orgs/"+org, `{"title":"After"}`).Expect(http.StatusOK)
	if gql := alice.GraphQL(`{ viewer { id } }`, nil); gql.Status != http.StatusOK || len(gql.Errors) != 0 {
		t.Errorf("GraphQL after the restart: %d %+v", gql.Status, gql.Errors)
	}
}
