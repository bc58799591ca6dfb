package wholeserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// Fan-out: one event to many subscribers is read once and decided from
// memory; what a slow subscriber may hold is bounded; subscriptions are
// limited per token and in total.

// queryCounter counts the queries the server runs, but those of contexts
// marked by the test itself.
type queryCounter struct{ n atomic.Int64 }

type byTestKey struct{}

func (q *queryCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	if ctx.Value(byTestKey{}) == nil {
		q.n.Add(1)
	}
	return ctx
}
func (q *queryCounter) AfterQuery(context.Context, *bun.QueryEvent) {}

// recordEvent records a live event about space, as a change would, in a
// context the query counter leaves out.
func recordEvent(t *testing.T, env *servertest.Env, org, space string) string {
	t.Helper()
	return recordEventBy(t, env, org, space, nil).ID
}

// recordEventBy records, as recordEvent does, a change of space made by
// actor (nil: no one).
func recordEventBy(t *testing.T, env *servertest.Env, org, space string, actor *servertest.User) *store.LiveEvent {
	t.Helper()
	e := &store.LiveEvent{Type: store.LiveContentUpdated, OrganizationID: org, SpaceID: &space, CreatedAt: env.Clock.Now()}
	if actor != nil {
		e.ActorID = &actor.ID
	}
	if err := store.RecordLiveEvent(context.WithValue(context.Background(), byTestKey{}, true), env.DB, e); err != nil {
		t.Fatal(err)
	}
	return e
}

// Delivering an event to N subscribers of one organization, admins and
// readers, costs the same few queries whatever N: the event, the space and
// the organization's access are read once, and each subscriber decides
// from memory.
func TestSubscriptionFanOutQueries(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	users := []*servertest.User{alice}
	for i := range 4 {
		u := env.NewUser(fmt.Sprint("Reader ", i))
		u.Join(org, store.RoleRead)
		users = append(users, u)
	}
	const perUser = 6
	var clients []*wsClient
	for _, u := range users {
		for range perUser {
			c := connectWS(t, env, u)
			c.subscribe(env, "s", spaceEventsQuery, map[string]any{"s": space}, len(clients)+1)
			clients = append(clients, c)
		}
	}
	counter := &queryCounter{}
	env.DB.DB.AddQueryHook(counter)

	for round := range 3 {
		before := counter.n.Load()
		id := recordEvent(t, env, org, space)
		for _, c := range clients {
			if ev := c.event("s", "spaceEvents"); ev["id"] != id {
				t.Fatalf("round %d: event %v, want %s", round, ev, id)
			}
		}
		// The event, the space and the organization's access at most
		// (the last two kept after the first round), for 30 subscribers.
		if n := counter.n.Load() - before; n > 3 {
			t.Fatalf("round %d: delivering one event to %d subscribers ran %d queries", round, len(clients), n)
		}
	}
}

// Losing access through the organization's access (a grant removed, a
// space's default level lowered) ends a subscription at once, without
// waiting for an event or the periodic re-check, and nothing more is
// delivered; those who keep access keep receiving.
func TestSubscriptionEndsWhenAccessChanges(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	guest := env.NewUser("Guest")
	guest.Join(org, "")
	alice.Do("POST", "/v1/spaces/"+space+"/permissions", map[string]any{"role": "read", "users": []string{guest.ID}}).Expect(http.StatusNoContent)
	reader := env.NewUser("Reader")
	reader.Join(org, store.RoleRead)

	a, g, r := connectWS(t, env, alice), connectWS(t, env, guest), connectWS(t, env, reader)
	a.subscribe(env, "a", spaceEventsQuery, map[string]any{"s": space}, 1)
	g.subscribe(env, "g", spaceEventsQuery, map[string]any{"s": space}, 2)
	r.subscribe(env, "r", spaceEventsQuery, map[string]any{"s": space}, 3)
	id := recordEvent(t, env, org, space)
	for c, sub := range map[*wsClient]string{a: "a", g: "g", r: "r"} {
		if ev := c.event(sub, "spaceEvents"); ev["id"] != id {
			t.Fatalf("%s: %v", sub, ev)
		}
	}

	// The guest's grant is removed: the subscription completes.
	alice.Do("DELETE", "/v1/spaces/"+space+"/permissions/users/"+guest.ID, nil).Expect(http.StatusResetContent)
	if got := g.next(); got.Type != "complete" || got.ID != "g" {
		t.Fatalf("after the grant's removal: %s %s", got.Type, got.Payload)
	}
	// The space is made private to its grants (guest level): the reader's
	// organization role no longer reaches it.
	alice.Do("PATCH", "/v1/spaces/"+space, map[string]any{"defaultLevel": nil}).Expect(http.StatusOK)
	if got := r.next(); got.Type != "complete" || got.ID != "r" {
		t.Fatalf("after the space was made private: %s %s", got.Type, got.Payload)
	}
	waitSubscribersAtMost(t, env, 1)
	// The admin still receives; the others hear nothing more.
	id = recordEvent(t, env, org, space)
	if ev := a.event("a", "spaceEvents"); ev["id"] != id {
		t.Fatalf("admin after: %v", ev)
	}
	for _, c := range []*wsClient{g, r} {
		select {
		case m := <-c.msgs:
			t.Fatalf("a subscriber who lost access received %s %s", m.Type, m.Payload)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// A subscriber that stops reading is closed once what it may hold is
// full (the events behind its kernel buffer, or a write past its
// deadline), while others keep receiving; with a single delivery lane,
// its stalled socket does not hold up the lane the others need (no write
// waits for a client: engine/wsconn.go).
func TestSubscriptionSlowReaderClosed(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{WebsocketWriteTimeout: 500 * time.Millisecond, WebsocketSendBuffer: 4096, DeliveryLanes: 1})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")

	slow := subscribeAndStopReading(t, env, alice, space)
	waitSubscribers(t, env, 1)

	good := connectWS(t, env, alice)
	good.subscribe(env, "good", spaceEventsQuery, map[string]any{"s": space}, 2)

	// Events until the slow subscriber is gone; the good one receives each.
	for i := 0; env.Server.Resolver.Live.Subscribers() > 1; i++ {
		if i == 5000 {
			t.Fatal("the subscriber that does not read was not closed")
		}
		id := recordEvent(t, env, org, space)
		if ev := good.event("good", "spaceEvents"); ev["id"] != id {
			t.Fatalf("good subscriber: %v", ev)
		}
	}
	id := recordEvent(t, env, org, space)
	if ev := good.event("good", "spaceEvents"); ev["id"] != id {
		t.Fatalf("good subscriber after: %v", ev)
	}
	expectClosedTooSlow(t, slow)
}

// subscribeAndStopReading connects as u with a small receive buffer,
// subscribes to space's events (as "slow") and reads nothing more.
func subscribeAndStopReading(t *testing.T, env *servertest.Env, u *servertest.User, space string) *websocket.Conn {
	t.Helper()
	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048) })
	}}
	ctx, cancel := context.WithTimeout(context.Background(), wsWait)
	defer cancel()
	slow, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(env.URL, "http")+"/graphql", &websocket.DialOptions{
		Subprotocols: []string{"graphql-transport-ws"},
		HTTPClient:   &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = slow.CloseNow() })
	send := func(m any) {
		data, _ := json.Marshal(m)
		if err := slow.Write(ctx, websocket.MessageText, data); err != nil {
			t.Fatal(err)
		}
	}
	send(map[string]any{"type": "connection_init", "payload": map[string]string{"Authorization": "Bearer " + u.Token}})
	if _, data, err := slow.Read(ctx); err != nil || !strings.Contains(string(data), "connection_ack") {
		t.Fatalf("slow client's ack: %s %v", data, err)
	}
	send(map[string]any{"id": "slow", "type": "subscribe", "payload": map[string]any{"query": spaceEventsQuery, "variables": map[string]any{"s": space}}})
	return slow
}

// expectClosedTooSlow reads what the server sent slow until its
// connection ends, which must be with 4008 (too slow) or, when its writes
// stalled, with no close frame.
func expectClosedTooSlow(t *testing.T, slow *websocket.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wsWait)
	defer cancel()
	for {
		_, r, err := slow.Reader(ctx)
		if err != nil {
			if code := websocket.CloseStatus(err); code != 4008 && code != -1 || ctx.Err() != nil {
				t.Fatalf("the slow connection ended with %v (code %d)", err, code)
			}
			return
		}
		_, _ = io.Copy(io.Discard, r)
	}
}

// Subscriptions are limited per API token and in total; over a limit a
// subscription is refused with TOO_MANY_SUBSCRIPTIONS in an error message,
// and /metrics counts both.
func TestSubscriptionLimits(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{SubscriptionsPerToken: 3, SubscriptionsMax: 5})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	bob, carol := env.NewUser("Bob"), env.NewUser("Carol")
	bob.Join(org, store.RoleRead)
	carol.Join(org, store.RoleRead)

	refused := func(c *wsClient, id string, status float64) {
		t.Helper()
		c.send(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": spaceEventsQuery, "variables": map[string]any{"s": space}}})
		m := c.next()
		var errs []servertest.GraphQLError
		if m.Type != "error" || m.ID != id || json.Unmarshal(m.Payload, &errs) != nil || len(errs) != 1 ||
			errs[0].Extensions["code"] != "TOO_MANY_SUBSCRIPTIONS" || errs[0].Extensions["status"] != status {
			t.Fatalf("subscription %s over a limit: %s %s", id, m.Type, m.Payload)
		}
	}
	// Alice's token: three, over two connections.
	a1, a2 := connectWS(t, env, alice), connectWS(t, env, alice)
	a1.subscribe(env, "1", spaceEventsQuery, map[string]any{"s": space}, 1)
	a1.subscribe(env, "2", spaceEventsQuery, map[string]any{"s": space}, 2)
	a2.subscribe(env, "3", spaceEventsQuery, map[string]any{"s": space}, 3)
	refused(a2, "4", http.StatusTooManyRequests)
	// Others' tokens, up to the total.
	b := connectWS(t, env, bob)
	b.subscribe(env, "1", spaceEventsQuery, map[string]any{"s": space}, 4)
	b.subscribe(env, "2", spaceEventsQuery, map[string]any{"s": space}, 5)
	refused(connectWS(t, env, carol), "1", http.StatusServiceUnavailable)

	metrics := string(env.Do("GET", "/metrics", "", nil).Expect(http.StatusOK).Body)
	for _, want := range []string{"docsapi_subscriptions 5", "docsapi_subscriptions_refused_total 2"} {
		if !strings.Contains(metrics, want+"\n") {
			t.Fatalf("/metrics lacks %q", want)
		}
	}
	// Completing one makes room for its token.
	a1.send(map[string]any{"id": "1", "type": "complete"})
	waitSubscribersAtMost(t, env, 4)
	a2.subscribe(env, "again", spaceEventsQuery, map[string]any{"s": space}, 5)
}
