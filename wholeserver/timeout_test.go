package wholeserver_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

// A request stuck behind a lock is cut by the statement timeout and answers
// 503 TIMEOUT, in the reference's error shape, with Retry-After; GraphQL says
// so in extensions. Once the lock is gone, the same request succeeds.
func TestStatementTimeoutAnswers503(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	env := servertest.New(t, servertest.Options{StatementTimeout: timeout})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Handbook"}`).Expect(http.StatusCreated).String("id")

	// Another session holds the space's row, as a long transaction would.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, env.DB.Pool.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT id FROM spaces WHERE organization_id = $1 AND id = $2 FOR UPDATE", org, space); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	res := alice.Do("PATCH", "/v1/spaces/"+space, `{"title":"Renamed"}`)
	elapsed := time.Since(start)
	res.Expect(http.StatusServiceUnavailable)
	if msg := res.ErrorMessage(); !strings.Contains(msg, "did not answer in time") {
		t.Errorf("message %q", msg)
	}
	if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || s <= 0 {
		t.Errorf("Retry-After %q", res.Header.Get("Retry-After"))
	}
	if elapsed < timeout || elapsed > timeout+5*time.Second {
		t.Errorf("answered after %s with a statement timeout of %s", elapsed, timeout)
	}
	// Reads take no row lock: they go on.
	alice.Do("GET", "/v1/spaces/"+space, nil).Expect(http.StatusOK)

	gql := alice.GraphQL(`mutation($id: ID!) { updateSpace(id: $id, input: {title: "Renamed"}) { title } }`, map[string]any{"id": space})
	if len(gql.Errors) != 1 || gql.Errors[0].Extensions["code"] != "TIMEOUT" || gql.Errors[0].Extensions["status"] != 503.0 ||
		!strings.Contains(gql.Errors[0].Message, "did not answer in time") {
		t.Errorf("GraphQL: %+v", gql.Errors)
	}

	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	res = alice.Do("PATCH", "/v1/spaces/"+space, `{"title":"Renamed"}`).Expect(http.StatusOK)
	if res.String("title") != "Renamed" {
		t.Errorf("after the lock: %s", res.Body)
	}

	// Authentication is a statement too: with the tokens' table locked, a
	// token not cached yet answers 503, on REST and on GraphQL.
	bob := env.NewUser("Bob")
	tx, err = conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "LOCK TABLE api_tokens IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	res = bob.Do("GET", "/v1/orgs", nil).Expect(http.StatusServiceUnavailable)
	if msg := res.ErrorMessage(); !strings.Contains(msg, "did not answer in time") || res.Header.Get("Retry-After") == "" {
		t.Errorf("authentication cut: %q, Retry-After %q", msg, res.Header.Get("Retry-After"))
	}
	gql = bob.GraphQL(`{ viewer { id } }`, nil)
	if gql.Status != http.StatusServiceUnavailable || len(gql.Errors) != 1 || gql.Errors[0].Extensions["code"] != "TIMEOUT" {
		t.Errorf("GraphQL authentication cut: %d %+v", gql.Status, gql.Errors)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	bob.Do("GET", "/v1/orgs", nil).Expect(http.StatusOK)
}
