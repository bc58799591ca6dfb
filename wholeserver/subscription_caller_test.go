package wholeserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// A websocket is authenticated once, at connection_init, but every
// operation on it runs as its caller is now: these tests change the caller
// (membership, token, data) after the connection is acknowledged.

// wsResult is how an operation sent over a websocket ended: its one
// result ("next" then "complete"), or an "error" message.
type wsResult struct {
	Data    map[string]any
	Errors  []servertest.GraphQLError
	Errored bool
}

// code is the code of the result's first error ("" without errors).
func (r wsResult) code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	code, _ := r.Errors[0].Extensions["code"].(string)
	return code
}

// operation runs a query or mutation over c as operation id.
func (c *wsClient) operation(id, query string, vars map[string]any) wsResult {
	c.t.Helper()
	c.send(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": query, "variables": vars}})
	m := c.next()
	if m.ID != id {
		c.t.Fatalf("operation %s: got %s for %q: %s", id, m.Type, m.ID, m.Payload)
	}
	var r wsResult
	switch m.Type {
	case "error":
		r.Errored = true
		if err := json.Unmarshal(m.Payload, &r.Errors); err != nil {
			c.t.Fatalf("operation %s: error payload %s: %v", id, m.Payload, err)
		}
		return r
	case "next":
		if err := json.Unmarshal(m.Payload, &r); err != nil {
			c.t.Fatalf("operation %s: payload %s: %v", id, m.Payload, err)
		}
		if done := c.next(); done.Type != "complete" || done.ID != id {
			c.t.Fatalf("operation %s: expected complete, got %s %s", id, done.Type, done.Payload)
		}
		return r
	}
	c.t.Fatalf("operation %s: got %s %s", id, m.Type, m.Payload)
	return r
}

// must is the data of a result that has no errors.
func (r wsResult) must(t *testing.T) map[string]any {
	t.Helper()
	if r.Errored || len(r.Errors) > 0 {
		t.Fatalf("unexpected errors: %+v", r.Errors)
	}
	return r.Data
}

const (
	wsReadSpace   = `query($s: ID!) { space(id: $s) { title } }`
	wsRenameSpace = `mutation($s: ID!, $t: String!) { updateSpace(id: $s, input: {title: $t}) { title } }`
	wsReadOrg     = `query($o: ID!) { organization(id: $o) { title } }`
	wsViewer      = `{ viewer { id displayName } }`
)

// Removed from the organization after connection_init, a member can
// neither read nor change its content over the same socket.
func TestSocketMemberRemovedLosesAccess(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	bob := env.NewUser("Bob")
	bob.Join(org, store.RoleAdmin)

	c := connectWS(t, env, bob)
	if got := c.operation("1", wsReadSpace, map[string]any{"s": space}).must(t)["space"]; got.(map[string]any)["title"] != "Docs" {
		t.Fatalf("read before: %v", got)
	}
	if got := c.operation("2", wsRenameSpace, map[string]any{"s": space, "t": "Bob's"}).must(t)["updateSpace"]; got.(map[string]any)["title"] != "Bob's" {
		t.Fatalf("rename before: %v", got)
	}

	alice.Do("DELETE", "/v1/orgs/"+org+"/members/"+bob.ID, nil).Expect(http.StatusNoContent)

	if r := c.operation("3", wsReadSpace, map[string]any{"s": space}); r.Data["space"] != nil || r.code() != "NOT_FOUND" {
		t.Fatalf("read after removal: %+v", r)
	}
	if r := c.operation("4", wsReadOrg, map[string]any{"o": org}); r.Data["organization"] != nil || r.code() != "NOT_FOUND" {
		t.Fatalf("organization after removal: %+v", r)
	}
	if r := c.operation("5", wsRenameSpace, map[string]any{"s": space, "t": "Still Bob's"}); r.Data["updateSpace"] != nil || r.code() != "NOT_FOUND" {
		t.Fatalf("rename after removal: %+v", r)
	}
	if title := alice.Do("GET", "/v1/spaces/"+space, nil).Expect(http.StatusOK).String("title"); title != "Bob's" {
		t.Fatalf("the space was renamed after Bob's removal: %q", title)
	}
	// His token is still good: the socket stays open for what is his.
	if got := c.operation("6", wsViewer, nil).must(t)["viewer"]; got.(map[string]any)["id"] != bob.ID {
		t.Fatalf("viewer: %v", got)
	}
}

// A token deleted, or expired, after connection_init: the next operation is
// UNAUTHENTICATED and the socket is closed with 4403, as connection_init
// refuses such a token.
func TestSocketTokenNoLongerValid(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	ctx := context.Background()

	t.Run("deleted", func(t *testing.T) {
		bob := env.NewUser("Bob")
		c := connectWS(t, env, bob)
		c.operation("1", wsViewer, nil).must(t)
		if _, err := env.DB.ExecContext(ctx, `DELETE FROM api_tokens WHERE user_id = ?`, bob.ID); err != nil {
			t.Fatal(err)
		}
		if r := c.operation("2", wsViewer, nil); !r.Errored || r.code() != "UNAUTHENTICATED" || r.Data != nil {
			t.Fatalf("after the token was deleted: %+v", r)
		}
		if code := c.closeStatus(); code != 4403 {
			t.Fatalf("close status %d, want 4403", code)
		}
	})

	t.Run("expired", func(t *testing.T) {
		carol := env.NewUser("Carol")
		expires := env.Clock.Now().Add(time.Hour)
		secret := store.NewSecret()
		if _, err := store.AddToken(ctx, env.DB, carol.ID, secret, "expiring", env.Clock.Now(), &expires); err != nil {
			t.Fatal(err)
		}
		c := connectWS(t, env, &servertest.User{Env: env, ID: carol.ID, Token: secret})
		c.operation("1", wsViewer, nil).must(t)
		env.Clock.Advance(time.Hour)
		if r := c.operation("2", wsViewer, nil); !r.Errored || r.code() != "UNAUTHENTICATED" {
			t.Fatalf("after the token expired: %+v", r)
		}
		if code := c.closeStatus(); code != 4403 {
			t.Fatalf("close status %d, want 4403", code)
		}
	})
}

// Loaders (and the caller) are the operation's: data changed between two
// operations on one socket is seen by the second.
func TestSocketLoadersPerOperation(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	bob := env.NewUser("Bob")
	bob.Join(org, store.RoleRead)
	ctx := context.Background()

	c := connectWS(t, env, bob)
	members := `query($o: ID!) { organization(id: $o) { members { items { user { id displayName } } } } }`
	names := func(id string) []string {
		t.Helper()
		data := c.operation(id, members, map[string]any{"o": org}).must(t)
		var out []string
		for _, m := range data["organization"].(map[string]any)["members"].(map[string]any)["items"].([]any) {
			out = append(out, m.(map[string]any)["user"].(map[string]any)["displayName"].(string))
		}
		slices.Sort(out)
		return out
	}
	if got := names("1"); !slices.Equal(got, []string{"Alice", "Bob"}) {
		t.Fatalf("members before: %v", got)
	}
	if got := c.operation("2", wsViewer, nil).must(t)["viewer"].(map[string]any)["displayName"]; got != "Bob" {
		t.Fatalf("viewer before: %v", got)
	}
	for id, name := range map[string]string{alice.ID: "Alicia", bob.ID: "Robert"} {
		if _, err := env.DB.ExecContext(ctx, `UPDATE users SET display_name = ? WHERE id = ?`, name, id); err != nil {
			t.Fatal(err)
		}
	}
	if got := names("3"); !slices.Equal(got, []string{"Alicia", "Robert"}) {
		t.Fatalf("members after the renames: %v", got)
	}
	if got := c.operation("4", wsViewer, nil).must(t)["viewer"].(map[string]any)["displayName"]; got != "Robert" {
		t.Fatalf("viewer after the rename: %v", got)
	}
}

// A subscription ends as soon as its caller loses access, without waiting
// for an event: it completes when the member is removed; it errors
// (UNAUTHENTICATED), and the socket closes with 4403, when the token is
// deleted. Others' subscriptions go on.
func TestSubscriptionEndsWhenCallerLosesAccess(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	bob := e.env.NewUser("Bob")
	bob.Join(e.org, store.RoleRead)
	carol := e.env.NewUser("Carol")
	carol.Join(e.org, store.RoleRead)

	a := connectWS(t, e.env, e.alice)
	a.subscribe(e.env, "a", spaceEventsQuery, map[string]any{"s": e.space}, 1)
	b := connectWS(t, e.env, bob)
	b.subscribe(e.env, "b", spaceEventsQuery, map[string]any{"s": e.space}, 2)
	c := connectWS(t, e.env, carol)
	c.subscribe(e.env, "c", spaceEventsQuery, map[string]any{"s": e.space}, 3)

	// Bob is removed: his subscription completes with no event made.
	e.alice.Do("DELETE", "/v1/orgs/"+e.org+"/members/"+bob.ID, nil).Expect(http.StatusNoContent)
	if got := b.next(); got.Type != "complete" || got.ID != "b" {
		t.Fatalf("after Bob's removal: %s %s", got.Type, got.Payload)
	}
	waitSubscribersAtMost(t, e.env, 2)
	// His socket is still his: he may subscribe to what he can read.
	if r := b.operation("v", wsViewer, nil); r.must(t)["viewer"].(map[string]any)["id"] != bob.ID {
		t.Fatalf("Bob's viewer: %+v", r)
	}

	// Carol's token is deleted: her subscription errors, her socket closes.
	if _, err := e.env.DB.ExecContext(context.Background(), `DELETE FROM api_tokens WHERE user_id = ?`, carol.ID); err != nil {
		t.Fatal(err)
	}
	got := c.next()
	var errs []servertest.GraphQLError
	if got.Type != "error" || got.ID != "c" || json.Unmarshal(got.Payload, &errs) != nil || len(errs) == 0 || errs[0].Extensions["code"] != "UNAUTHENTICATED" {
		t.Fatalf("after Carol's token was deleted: %s %s", got.Type, got.Payload)
	}
	if code := c.closeStatus(); code != 4403 {
		t.Fatalf("Carol's socket: close status %d, want 4403", code)
	}
	waitSubscribersAtMost(t, e.env, 1)

	// Alice's subscription goes on.
	cr := e.open("After")
	if ev := a.event("a", "spaceEvents"); ev["changeRequestId"] != cr {
		t.Fatalf("Alice's event: %v", ev)
	}
}

// A token that expires changes no row, so no notification tells of it: the
// periodic re-check ends its subscriptions.
func TestSubscriptionEndsWhenTokenExpires(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{SubscriptionRecheck: 50 * time.Millisecond})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	expires := env.Clock.Now().Add(time.Hour)
	secret := store.NewSecret()
	if _, err := store.AddToken(context.Background(), env.DB, alice.ID, secret, "expiring", env.Clock.Now(), &expires); err != nil {
		t.Fatal(err)
	}
	c := connectWS(t, env, &servertest.User{Env: env, ID: alice.ID, Token: secret})
	c.subscribe(env, "s", spaceEventsQuery, map[string]any{"s": space}, 1)

	env.Clock.Advance(time.Hour)
	got := c.next()
	var errs []servertest.GraphQLError
	if got.Type != "error" || got.ID != "s" || json.Unmarshal(got.Payload, &errs) != nil || len(errs) == 0 || errs[0].Extensions["code"] != "UNAUTHENTICATED" {
		t.Fatalf("after the token expired: %s %s", got.Type, got.Payload)
	}
	if code := c.closeStatus(); code != 4403 {
		t.Fatalf("close status %d, want 4403", code)
	}
	waitSubscribersAtMost(t, env, 0)
}
