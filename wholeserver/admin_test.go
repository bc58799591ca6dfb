package wholeserver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

func TestAdminCreatesUsersAndTokens(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)

	env.Do("POST", "/admin/users", "", `{"email":"a@example.com","displayName":"A"}`).Expect(http.StatusUnauthorized).ErrorMessage()
	env.Do("POST", "/admin/users", "wrong", `{"email":"a@example.com","displayName":"A"}`).Expect(http.StatusUnauthorized)

	created := env.Do("POST", "/admin/users", env.AdminToken, `{"email":"carol@example.com","displayName":"Carol"}`).
		Expect(http.StatusCreated).JSON()
	user := created["user"].(map[string]any)
	token := created["token"].(string)
	if user["email"] != "carol@example.com" || user["displayName"] != "Carol" || len(token) < 32 {
		t.Fatalf("created = %v", created)
	}
	me := env.Do("GET", "/v1/user", token, nil).Expect(http.StatusOK).JSON()
	if me["id"] != user["id"] {
		t.Fatalf("the new token authenticates %v", me)
	}
	// A user with no organization creates one and becomes its admin.
	org := env.Do("POST", "/v1/orgs", token, `{"title":"Carol's"}`).Expect(http.StatusCreated).JSON()
	if org["permissions"].(map[string]any)["admin"] != true {
		t.Fatalf("creator is not admin: %v", org["permissions"])
	}

	second := env.Do("POST", "/admin/users/"+user["id"].(string)+"/tokens", env.AdminToken, nil).Expect(http.StatusCreated).JSON()
	env.Do("GET", "/v1/user", second["token"].(string), nil).Expect(http.StatusOK)
	env.Do("POST", "/admin/users/nobody/tokens", env.AdminToken, nil).Expect(http.StatusNotFound).ErrorMessage()

	for _, body := range []string{`{"email":"not-an-email","displayName":"X"}`, `{"email":"x@example.com","displayName":""}`, `{"email":"x@example.com"}`, `[]`} {
		env.Do("POST", "/admin/users", env.AdminToken, body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	msg := env.Do("POST", "/admin/users", env.AdminToken, `{"email":"CAROL@example.com","displayName":"Again"}`).
		Expect(http.StatusConflict).ErrorMessage()
	if !strings.Contains(msg, "exists") {
		t.Errorf("duplicate email message = %q", msg)
	}
}

func TestBootstrap(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	res := env.Server.Resolver
	ctx := context.Background()
	if _, err := res.Bootstrap(ctx, "short", "owner@example.com", "Org"); err == nil {
		t.Fatal("a short bootstrap token was accepted")
	}
	token := "bootstrap-secret-0123456789"
	created, err := res.Bootstrap(ctx, token, "owner@example.com", "First org")
	if err != nil || !created {
		t.Fatalf("Bootstrap = %v, %v", created, err)
	}
	list := env.Do("GET", "/v1/orgs", token, nil).Expect(http.StatusOK).JSON()
	items := list["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["title"] != "First org" ||
		items[0].(map[string]any)["permissions"].(map[string]any)["admin"] != true {
		t.Fatalf("orgs of the bootstrap owner = %v", list)
	}
	// A second start, with users present, changes nothing.
	created, err = res.Bootstrap(ctx, "another-secret-0123456789", "other@example.com", "Second")
	if err != nil || created {
		t.Fatalf("second Bootstrap = %v, %v", created, err)
	}
	env.Do("GET", "/v1/user", "another-secret-0123456789", nil).Expect(http.StatusUnauthorized)
}

// With a metrics token, /metrics answers only that token: not anonymous
// clients, not users' API tokens, not the admin token.
func TestMetricsToken(t *testing.T) {
	t.Parallel()
	const secret = "scrape-secret-0123456789"
	env := servertest.New(t, servertest.Options{MetricsToken: secret})
	alice := env.NewUser("Alice")
	for name, token := range map[string]string{"no token": "", "a user's token": alice.Token,
		"the admin token": env.AdminToken, "another secret": secret + "x"} {
		res := env.Do("GET", "/metrics", token, nil).Expect(http.StatusUnauthorized)
		if !strings.Contains(res.Header.Get("WWW-Authenticate"), `realm="docsapi-metrics"`) || !strings.Contains(res.ErrorMessage(), "DOCSAPI_METRICS_TOKEN") {
			t.Errorf("%s: %v %s", name, res.Header, res.Body)
		}
	}
	if body := string(env.Do("GET", "/metrics", secret, nil).Expect(http.StatusOK).Body); !strings.Contains(body, "docsapi_http_requests_total") {
		t.Fatalf("/metrics: %.300s", body)
	}
}
