package wholeserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/graph/jobs"
	"github.com/docsapi/docsapi/store"
)

// wsMessage is a graphql-transport-ws message.
type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// wsClient is a graphql-transport-ws client over a real websocket: it
// answers the server's pings and queues every other message.
type wsClient struct {
	t      *testing.T
	conn   *websocket.Conn
	msgs   chan wsMessage
	closed chan error
}

const wsWait = 10 * time.Second

// dialWS opens a websocket to env's /graphql with header, and sends
// connection_init with payload (nil: none).
func dialWS(t *testing.T, env *servertest.Env, header http.Header, payload any) (*wsClient, *http.Response, error) {
	t.Helper()
	c, res, err := dialSocket(t, env, header, "graphql-transport-ws")
	if err != nil {
		return nil, res, err
	}
	init := map[string]any{"type": "connection_init"}
	if payload != nil {
		init["payload"] = payload
	}
	c.send(init)
	return c, res, nil
}

// dialSocket opens a websocket to env's /graphql with header, speaking
// protocol, and sends nothing.
func dialSocket(t *testing.T, env *servertest.Env, header http.Header, protocol string) (*wsClient, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wsWait)
	defer cancel()
	conn, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(env.URL, "http")+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{protocol}, HTTPHeader: header})
	if err != nil {
		return nil, res, err
	}
	c := &wsClient{t: t, conn: conn, msgs: make(chan wsMessage, 100), closed: make(chan error, 1)}
	t.Cleanup(func() { _ = conn.CloseNow() })
	go c.read()
	return c, res, nil
}

// connectWS opens an authenticated connection as u and waits for its ack.
func connectWS(t *testing.T, env *servertest.Env, u *servertest.User) *wsClient {
	t.Helper()
	c, _, err := dialWS(t, env, nil, map[string]string{"Authorization": "Bearer " + u.Token})
	if err != nil {
		t.Fatal(err)
	}
	if m := c.next(); m.Type != "connection_ack" {
		t.Fatalf("expected connection_ack, got %+v", m)
	}
	return c
}

func (c *wsClient) read() {
	for {
		_, data, err := c.conn.Read(context.Background())
		if err != nil {
			c.closed <- err
			close(c.msgs)
			return
		}
		var m wsMessage
		if err := json.Unmarshal(data, &m); err != nil {
			c.closed <- err
			close(c.msgs)
			return
		}
		switch m.Type {
		case "ping":
			c.send(map[string]any{"type": "pong"})
			continue
		case "ka": // graphql-ws's keep-alive
			continue
		}
		c.msgs <- m
	}
}

func (c *wsClient) send(m any) {
	c.t.Helper()
	data, _ := json.Marshal(m)
	ctx, cancel := context.WithTimeout(context.Background(), wsWait)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, data); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// next is the next message (Type "" once the connection is closed).
func (c *wsClient) next() wsMessage {
	c.t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			return wsMessage{}
		}
		return m
	case <-time.After(wsWait):
		c.t.Fatal("no message from the server")
		return wsMessage{}
	}
}

// closeStatus waits for the connection to end and returns its close code.
func (c *wsClient) closeStatus() websocket.StatusCode {
	c.t.Helper()
	for m := range c.msgs {
		_ = m
	}
	return websocket.CloseStatus(<-c.closed)
}

// subscribe starts subscription id with query and waits until the server
// serving it holds want subscriptions (so a change made next is heard).
func (c *wsClient) subscribe(env *servertest.Env, id, query string, vars map[string]any, want int) {
	c.t.Helper()
	c.send(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": query, "variables": vars}})
	waitSubscribers(c.t, env, want)
}

// waitSubscribers waits until the server holds at least want
// subscriptions; waitSubscribersAtMost until it holds at most want.
func waitSubscribers(t *testing.T, env *servertest.Env, want int) {
	t.Helper()
	waitSubscriberCount(t, env, want, func(n int) bool { return n >= want })
}

func waitSubscribersAtMost(t *testing.T, env *servertest.Env, want int) {
	t.Helper()
	waitSubscriberCount(t, env, want, func(n int) bool { return n <= want })
}

func waitSubscriberCount(t *testing.T, env *servertest.Env, want int, done func(int) bool) {
	t.Helper()
	deadline := time.Now().Add(wsWait)
	for !done(env.Server.Resolver.Live.Subscribers()) {
		if time.Now().After(deadline) {
			t.Fatalf("the server holds %d subscriptions, not %d", env.Server.Resolver.Live.Subscribers(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// goroutines is how many goroutines the process runs, once the idle
// connections of HTTP clients are closed.
func goroutines() int {
	http.DefaultClient.CloseIdleConnections()
	return runtime.NumGoroutine()
}

// waitGoroutinesAtMost waits until the process runs at most want
// goroutines (what connections started has ended).
func waitGoroutinesAtMost(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(wsWait)
	for n := goroutines(); n > want; n = goroutines() {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, at most %d expected:\n%s", n, want, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// event is the next message, which must be a "next" of subscription id
// carrying field; it returns the event.
func (c *wsClient) event(id, field string) map[string]any {
	c.t.Helper()
	m := c.next()
	if m.Type != "next" || m.ID != id {
		c.t.Fatalf("expected an event of %s, got %s %s", id, m.Type, m.Payload)
	}
	var p struct {
		Data   map[string]map[string]any
		Errors []any
	}
	if err := json.Unmarshal(m.Payload, &p); err != nil || len(p.Errors) > 0 || p.Data[field] == nil {
		c.t.Fatalf("event payload: %s (%v)", m.Payload, err)
	}
	return p.Data[field]
}

// failure is the answer to a subscription refused: its errors, then
// complete. It returns the errors' JSON.
func (c *wsClient) failure(id string) string {
	c.t.Helper()
	m := c.next()
	if (m.Type != "next" && m.Type != "error") || m.ID != id || !strings.Contains(string(m.Payload), `"errors"`) && m.Type == "next" {
		c.t.Fatalf("expected subscription %s to fail, got %s %s", id, m.Type, m.Payload)
	}
	if m.Type == "next" {
		if done := c.next(); done.Type != "complete" || done.ID != id {
			c.t.Fatalf("expected subscription %s to complete, got %s %s", id, done.Type, done.Payload)
		}
	}
	return string(m.Payload)
}

const spaceEventsQuery = `subscription($s: ID!) { spaceEvents(spaceId: $s) { id type organizationId spaceId changeRequestId commentId revisionId actorId createdAt } }`

func TestSubscriptionAuthentication(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")

	// No token anywhere, a token that matches no one, a payload that is not
	// a bearer token: refused after connection_init, before any operation.
	for name, payload := range map[string]any{
		"none":      nil,
		"unknown":   map[string]string{"Authorization": "Bearer nobody"},
		"malformed": map[string]string{"Authorization": alice.Token},
	} {
		c, _, err := dialWS(t, env, nil, payload)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m := c.next()
		if m.Type == "connection_ack" {
			t.Fatalf("%s: an unauthenticated connection was acknowledged", name)
		}
		if code := c.closeStatus(); code != 4403 {
			t.Errorf("%s: close status %d, want 4403", name, code)
		}
	}
	// An invalid token in the upgrade request is refused with 401, as over HTTP.
	if _, res, err := dialWS(t, env, http.Header{"Authorization": {"Bearer nobody"}}, nil); err == nil || res == nil || res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("invalid header token: %v %v", res, err)
	}
	// A browser page of another origin cannot open one.
	if _, res, err := dialWS(t, env, http.Header{"Origin": {"https://evil.example"}}, nil); err == nil || res == nil || res.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin: %v %v", res, err)
	}
	// The upgrade request's Authorization header authenticates too.
	c, _, err := dialWS(t, env, http.Header{"Authorization": {"Bearer " + alice.Token}, "Origin": {env.URL}}, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if m := c.next(); m.Type != "connection_ack" {
		t.Fatalf("header token: %+v", m)
	}
	c.subscribe(env, "1", spaceEventsQuery, map[string]any{"s": space}, 1)

	// At most graph.MaxSubscriptionsPerConnection at once.
	for i := 2; i <= graph.MaxSubscriptionsPerConnection; i++ {
		c.subscribe(env, fmt.Sprint(i), spaceEventsQuery, map[string]any{"s": space}, i)
	}
	c.send(map[string]any{"id": "over", "type": "subscribe", "payload": map[string]any{"query": spaceEventsQuery, "variables": map[string]any{"s": space}}})
	if got := c.failure("over"); !strings.Contains(got, "TOO_MANY_SUBSCRIPTIONS") {
		t.Fatalf("subscription over the limit: %s", got)
	}
	// Completing one makes room (once the server has ended it: the
	// subscription's goroutine frees its slot as it ends).
	c.send(map[string]any{"id": "1", "type": "complete"})
	waitSubscribersAtMost(t, env, graph.MaxSubscriptionsPerConnection-1)
	c.subscribe(env, "again", spaceEventsQuery, map[string]any{"s": space}, graph.MaxSubscriptionsPerConnection)
}

func TestSubscriptionSpaceEvents(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	bob := e.env.NewUser("Bob")
	bob.Join(e.org, store.RoleRead)
	mallory := e.env.NewUser("Mallory")
	malloryOrg := mallory.NewOrg("Evil")
	mallorySpace := mallory.Do("POST", "/v1/orgs/"+malloryOrg+"/spaces", `{"title":"Mine"}`).Expect(http.StatusCreated).String("id")

	c := connectWS(t, e.env, bob)
	c.subscribe(e.env, "s", spaceEventsQuery, map[string]any{"s": e.space}, 1)

	// Another tenant cannot subscribe to the space: an error, as for a
	// query, and nothing of the space reaches them.
	m := connectWS(t, e.env, mallory)
	m.send(map[string]any{"id": "x", "type": "subscribe", "payload": map[string]any{"query": spaceEventsQuery, "variables": map[string]any{"s": e.space}}})
	if got := m.failure("x"); !strings.Contains(got, "NOT_FOUND") {
		t.Fatalf("another tenant's subscription: %s", got)
	}
	m.subscribe(e.env, "own", spaceEventsQuery, map[string]any{"s": mallorySpace}, 2)

	// A change request opened, edited and merged through the REST API.
	cr := e.open("Fix")
	ev := c.event("s", "spaceEvents")
	if ev["type"] != "change_request_opened" || ev["spaceId"] != e.space || ev["changeRequestId"] != cr || ev["actorId"] != e.alice.ID || ev["organizationId"] != e.org {
		t.Fatalf("opened: %v", ev)
	}
	e.mustEdit(cr, e.pageA, "changed")
	if ev := c.event("s", "spaceEvents"); ev["type"] != "change_request_updated" || ev["changeRequestId"] != cr {
		t.Fatalf("edited: %v", ev)
	}
	merged := e.alice.Do("POST", e.crBase+"/"+cr+"/merge", nil).Expect(http.StatusOK).JSON()
	ev = c.event("s", "spaceEvents")
	if ev["type"] != "change_request_merged" || ev["changeRequestId"] != cr || ev["revisionId"] != merged["revision"] {
		t.Fatalf("merged: %v (merge answered %v)", ev, merged)
	}
	// A comment posted and resolved.
	comment := e.alice.Do("POST", e.spaceBase+"/comments", map[string]any{"body": map[string]any{"markdown": "Look"}}).Expect(http.StatusOK).String("id")
	if ev := c.event("s", "spaceEvents"); ev["type"] != "comment_posted" || ev["commentId"] != comment || ev["changeRequestId"] != nil {
		t.Fatalf("comment: %v", ev)
	}
	e.alice.Do("PUT", e.spaceBase+"/comments/"+comment, map[string]any{"resolved": true}).Expect(http.StatusOK)
	if ev := c.event("s", "spaceEvents"); ev["type"] != "comment_resolved" || ev["commentId"] != comment {
		t.Fatalf("resolved: %v", ev)
	}
	// An edit of the space's own content.
	e.mustEdit("", e.pageB, "direct")
	if ev := c.event("s", "spaceEvents"); ev["type"] != "content_updated" || ev["changeRequestId"] != nil {
		t.Fatalf("content: %v", ev)
	}
	// A change that fails changes nothing and tells no one.
	e.alice.Do("POST", e.crBase+"/"+cr+"/merge", nil).Expect(http.StatusConflict)

	// Mallory received none of it: the next thing she hears of is her own space.
	createPage(t, mallory, mallorySpace, "Mine", "x")
	if ev := m.event("own", "spaceEvents"); ev["spaceId"] != mallorySpace || ev["type"] != "content_updated" {
		t.Fatalf("mallory: %v", ev)
	}

	// Bob loses access: the next event is not delivered and his
	// subscription completes.
	e.alice.Do("DELETE", "/v1/orgs/"+e.org+"/members/"+bob.ID, nil).Expect(http.StatusNoContent)
	e.open("After")
	if got := c.next(); got.Type != "complete" || got.ID != "s" {
		t.Fatalf("after losing access: %s %s", got.Type, got.Payload)
	}
}

func TestSubscriptionTwoProcesses(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	a, b := e.env, e.env.AnotherProcess()
	// A subscriber on each process; changes made through one reach both.
	ca, cb := connectWS(t, a, e.alice), connectWS(t, b, e.alice)
	ca.subscribe(a, "a", spaceEventsQuery, map[string]any{"s": e.space}, 1)
	cb.subscribe(b, "b", spaceEventsQuery, map[string]any{"s": e.space}, 1)

	cr := e.open("Through A")
	for _, c := range []*wsClient{ca, cb} {
		if ev := c.event(map[*wsClient]string{ca: "a", cb: "b"}[c], "spaceEvents"); ev["type"] != "change_request_opened" || ev["changeRequestId"] != cr {
			t.Fatalf("opened through A: %v", ev)
		}
	}
	// Through B.
	viaB := &servertest.User{Env: b, ID: e.alice.ID, Email: e.alice.Email, Token: e.alice.Token}
	viaB.Do("POST", e.crBase+"/"+cr+"/merge", nil).Expect(http.StatusOK)
	for _, c := range []*wsClient{ca, cb} {
		if ev := c.event(map[*wsClient]string{ca: "a", cb: "b"}[c], "spaceEvents"); ev["type"] != "change_request_merged" {
			t.Fatalf("merged through B: %v", ev)
		}
	}
}

func TestSubscriptionSiteAndIntegrationEvents(t *testing.T) {
	t.Parallel()
	f := newSiteFixture(t, 2)
	site := f.site(map[string]any{"title": "Docs", "spaces": f.spaces[:1]})
	c := connectWS(t, f.env, f.admin)
	c.subscribe(f.env, "site", `subscription($o: ID!, $s: ID!) { siteEvents(organizationId: $o, siteId: $s) { type siteId organizationId spaceId } }`,
		map[string]any{"o": f.org, "s": site}, 1)

	f.admin.Do("POST", f.path(site, "/sections"), map[string]any{"spaceId": f.spaces[1], "title": "Guides"}).Expect(http.StatusCreated)
	if ev := c.event("site", "siteEvents"); ev["type"] != "site_structure_updated" || ev["siteId"] != site || ev["organizationId"] != f.org || ev["spaceId"] != nil {
		t.Fatalf("site event: %v", ev)
	}

	// Another tenant cannot subscribe to the site.
	mallory := f.env.NewUser("Mallory")
	mallory.NewOrg("Evil")
	m := connectWS(t, f.env, mallory)
	m.send(map[string]any{"id": "x", "type": "subscribe", "payload": map[string]any{
		"query": `subscription($o: ID!, $s: ID!) { siteEvents(organizationId: $o, siteId: $s) { type } }`, "variables": map[string]any{"o": f.org, "s": site}}})
	if got := m.failure("x"); !strings.Contains(got, "NOT_FOUND") {
		t.Fatalf("another tenant's site subscription: %s", got)
	}

	// An integration's events reach those who administer the organization
	// it is installed on.
	f.admin.Do("POST", "/v1/integrations/live-test", publishBody(f.org, nil)).Expect(http.StatusOK)
	c.subscribe(f.env, "int", `subscription { integrationEvents(name: "live-test") { id integrationId installationId payload status } }`, nil, 2)
	inst := f.admin.Do("POST", "/v1/integrations/live-test/installations", map[string]any{"organization": f.org}).Expect(http.StatusCreated).String("id")
	ev := c.event("int", "integrationEvents")
	if ev["installationId"] != inst || ev["payload"].(map[string]any)["type"] != "installation_setup" {
		t.Fatalf("integration event: %v", ev)
	}
}

// The listener reconnects when its connection drops, and delivery resumes.
func TestSubscriptionListenerReconnects(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	c := connectWS(t, e.env, e.alice)
	c.subscribe(e.env, "s", spaceEventsQuery, map[string]any{"s": e.space}, 1)

	ctx := context.Background()
	listeners := func() []int {
		var pids []int
		err := e.env.DB.NewRaw(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = ?`,
			"LISTEN "+store.IntegrationEventsChannel).Scan(ctx, &pids)
		if err != nil {
			t.Fatal(err)
		}
		return pids
	}
	old := listeners()
	if len(old) != 1 {
		t.Fatalf("listener connections: %v", old)
	}
	if _, err := e.env.DB.ExecContext(ctx, `SELECT pg_terminate_backend(?)`, old[0]); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(wsWait)
	for now := listeners(); len(now) != 1 || now[0] == old[0]; now = listeners() {
		if time.Now().After(deadline) {
			t.Fatalf("the listener did not come back: %v", now)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cr := e.open("After the reconnection")
	if ev := c.event("s", "spaceEvents"); ev["type"] != "change_request_opened" || ev["changeRequestId"] != cr {
		t.Fatalf("after reconnecting: %v", ev)
	}
}

// Live events are kept a week as history, then pruned by the hourly job.
func TestLiveEventsArePruned(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Jobs: true})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Docs"}).Expect(http.StatusCreated).String("id")
	createPage(t, alice, space, "Old", "Recorded a week ago")
	env.Clock.Advance(jobs.LiveEventRetention + time.Minute)
	createPage(t, alice, space, "New", "Recorded now")
	count := func() int64 {
		n, err := env.DB.NewSelect().Table("live_events").Count(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// The periodic prune (jobs are on) may already have run once the clock
	// moved: the old event is then gone before the job is run here.
	if n := count(); n != 1 && n != 2 {
		t.Fatalf("%d live events before pruning, want 2 (or 1, pruned already)", n)
	}
	runJob(t, env, jobs.PruneLiveEvents{})
	if n := count(); n != 1 {
		t.Errorf("%d live events after pruning, want the recent one", n)
	}
}
