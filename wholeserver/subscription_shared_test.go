package wholeserver_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// An event's response is made once for all the subscribers that share a
// selection (document and variables) and a visibility, and written to
// each under its own id; who receives an event at all is decided for each
// subscriber, as its caller is now (graph/live/delivery.go).

// liveCounts are the server's counts of responses made to events and of
// messages carrying them (/metrics).
type liveCounts struct{ responses, messages int }

func readLiveCounts(t *testing.T, env *servertest.Env) liveCounts {
	t.Helper()
	metrics := string(env.Do("GET", "/metrics", "", nil).Expect(http.StatusOK).Body)
	value := func(name string) int {
		for line := range strings.Lines(metrics) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+" "); ok {
				n, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatalf("/metrics: %s", line)
				}
				return int(n)
			}
		}
		t.Fatalf("/metrics lacks %s", name)
		return 0
	}
	return liveCounts{value("docsapi_subscription_responses_total"), value("docsapi_subscription_messages_total")}
}

// expectLiveCounts waits until the server has made responses and sent
// messages since before, exactly (a message is counted once written,
// which may be just after its client read it).
func expectLiveCounts(t *testing.T, env *servertest.Env, before liveCounts, responses, messages int) {
	t.Helper()
	want := liveCounts{before.responses + responses, before.messages + messages}
	deadline := time.Now().Add(wsWait)
	for got := readLiveCounts(t, env); got != want; got = readLiveCounts(t, env) {
		if got.responses > want.responses || got.messages > want.messages || time.Now().After(deadline) {
			t.Fatalf("responses and messages since: %d and %d, want %d and %d",
				got.responses-before.responses, got.messages-before.messages, responses, messages)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// expectData reads c's next messages, one for each of its subscriptions
// in data (in any order): a result carrying exactly its data.
func (c *wsClient) expectData(data map[string]map[string]any) {
	c.t.Helper()
	for range len(data) {
		m := c.next()
		d, ok := data[m.ID]
		var got any
		if m.Type != "next" || !ok || json.Unmarshal(m.Payload, &got) != nil {
			c.t.Fatalf("expected a result of one of %v, got %s %q %s", slices.Collect(maps.Keys(data)), m.Type, m.ID, m.Payload)
		}
		delete(data, m.ID)
		// Through JSON, as the client got it.
		var want any
		raw, _ := json.Marshal(map[string]any{"data": d})
		_ = json.Unmarshal(raw, &want)
		if !reflect.DeepEqual(got, want) {
			c.t.Fatalf("subscription %s got %s, want %s", m.ID, m.Payload, raw)
		}
	}
}

// eventsByID reads c's next n messages, results of n subscriptions
// carrying field, in any order, and returns each subscription's event.
func (c *wsClient) eventsByID(field string, n int) map[string]map[string]any {
	c.t.Helper()
	events := map[string]map[string]any{}
	for range n {
		m := c.next()
		var p struct{ Data map[string]map[string]any }
		if m.Type != "next" || events[m.ID] != nil || json.Unmarshal(m.Payload, &p) != nil || p.Data[field] == nil {
			c.t.Fatalf("expected an event of another subscription, got %s %q %s", m.Type, m.ID, m.Payload)
		}
		events[m.ID] = p.Data[field]
	}
	return events
}

// expectNothing checks that c receives no message for a while.
func (c *wsClient) expectNothing(who string) {
	c.t.Helper()
	select {
	case m := <-c.msgs:
		c.t.Fatalf("%s received %s %s %s", who, m.Type, m.ID, m.Payload)
	case <-time.After(200 * time.Millisecond):
	}
}

// Subscribers of one space with several selections, as an admin, a
// reader and a guest given the space: each gets exactly its selection under
// its own id, from one response per distinct selection. The guest whose
// grant is removed stops receiving; the others go on.
func TestSubscriptionResponsesSharedBySelection(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	bob := env.NewUser("Bob")
	bob.Join(org, store.RoleRead)
	carol := env.NewUser("Carol")
	carol.Join(org, "")
	alice.Do("POST", "/v1/spaces/"+space+"/permissions", map[string]any{"role": "read", "users": []string{carol.ID}}).Expect(http.StatusNoContent)

	const (
		plain   = `subscription($s: ID!) { spaceEvents(spaceId: $s) { id type spaceId } }`
		aliased = `subscription Watch($s: ID!) { event: spaceEvents(spaceId: $s) { __typename kind: type ...ids } } fragment ids on LiveEvent { id organizationId }`
		actor   = `subscription($s: ID!, $who: Boolean!) { spaceEvents(spaceId: $s) { id actorId @include(if: $who) } }`
	)
	a1, a2, b, c := connectWS(t, env, alice), connectWS(t, env, alice), connectWS(t, env, bob), connectWS(t, env, carol)
	vars := map[string]any{"s": space}
	a1.subscribe(env, "plain", plain, vars, 1)
	a1.subscribe(env, "aliased", aliased, vars, 2)
	a2.subscribe(env, "plain", plain, vars, 3)
	b.subscribe(env, "bob-plain", plain, vars, 4)
	b.subscribe(env, "bob-actor", actor, map[string]any{"s": space, "who": true}, 5)
	c.subscribe(env, "carol-plain", plain, vars, 6)
	c.subscribe(env, "carol-actor", actor, map[string]any{"s": space, "who": false}, 7)

	before := readLiveCounts(t, env)
	e := recordEventBy(t, env, org, space, alice)
	plainData := map[string]any{"spaceEvents": map[string]any{"id": e.ID, "type": "content_updated", "spaceId": space}}
	aliasedData := map[string]any{"event": map[string]any{"__typename": "LiveEvent", "kind": "content_updated", "id": e.ID, "organizationId": org}}
	a1.expectData(map[string]map[string]any{"plain": plainData, "aliased": aliasedData})
	a2.expectData(map[string]map[string]any{"plain": plainData})
	b.expectData(map[string]map[string]any{"bob-plain": plainData,
		"bob-actor": {"spaceEvents": map[string]any{"id": e.ID, "actorId": alice.ID}}})
	c.expectData(map[string]map[string]any{"carol-plain": plainData,
		"carol-actor": {"spaceEvents": map[string]any{"id": e.ID}}})
	// Four selections (the actor's with two sets of variables), seven
	// subscribers.
	expectLiveCounts(t, env, before, 4, 7)

	// Carol's grant is removed: both her subscriptions complete, and she
	// receives nothing more.
	alice.Do("DELETE", "/v1/spaces/"+space+"/permissions/users/"+carol.ID, nil).Expect(http.StatusResetContent)
	completed := map[string]bool{}
	for range 2 {
		if m := c.next(); m.Type == "complete" {
			completed[m.ID] = true
		} else {
			t.Fatalf("after the grant's removal: %s %s %s", m.Type, m.ID, m.Payload)
		}
	}
	if !completed["carol-plain"] || !completed["carol-actor"] {
		t.Fatalf("completed: %v", completed)
	}
	waitSubscribersAtMost(t, env, 5)
	before = readLiveCounts(t, env)
	e = recordEventBy(t, env, org, space, nil)
	plainData = map[string]any{"spaceEvents": map[string]any{"id": e.ID, "type": "content_updated", "spaceId": space}}
	aliasedData = map[string]any{"event": map[string]any{"__typename": "LiveEvent", "kind": "content_updated", "id": e.ID, "organizationId": org}}
	a1.expectData(map[string]map[string]any{"plain": plainData, "aliased": aliasedData})
	a2.expectData(map[string]map[string]any{"plain": plainData})
	b.expectData(map[string]map[string]any{"bob-plain": plainData,
		"bob-actor": {"spaceEvents": map[string]any{"id": e.ID, "actorId": nil}}})
	c.expectNothing("a guest who lost access")
	expectLiveCounts(t, env, before, 3, 5)
}

// A selection with fields a resolver answers (an integration event's
// payload and status) may depend on who reads it: its response is made as
// each caller (each connection's), and shared only by the subscriptions
// of one connection. Only the admins of the organization an event is in
// receive it, whoever else subscribes with the same selection.
func TestSubscriptionResponsesPerCallerWhenNotPlain(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice, bob, dave := env.NewUser("Alice"), env.NewUser("Bob"), env.NewUser("Dave")
	org := alice.NewOrg("Acme")
	bobOrg := bob.NewOrg("Bob Co")
	dave.Join(org, store.RoleRead)
	alice.Do("POST", "/v1/integrations/shared-test", publishBody(org, nil)).Expect(http.StatusOK)

	const (
		resolved = `subscription { integrationEvents(name: "shared-test") { id installationId payload status } }`
		plain    = `subscription { integrationEvents(name: "shared-test") { id installationId deliveryStatus } }`
	)
	a1, a2, b, d := connectWS(t, env, alice), connectWS(t, env, alice), connectWS(t, env, bob), connectWS(t, env, dave)
	a1.subscribe(env, "x", resolved, nil, 1)
	a1.subscribe(env, "y", resolved, nil, 2)
	a1.subscribe(env, "z", plain, nil, 3)
	a2.subscribe(env, "w", resolved, nil, 4)
	b.subscribe(env, "v", resolved, nil, 5)
	d.subscribe(env, "u", resolved, nil, 6) // sees the integration, administers nothing

	event := func(c *wsClient, id, inst string) map[string]any {
		t.Helper()
		ev := c.event(id, "integrationEvents")
		if ev["installationId"] != inst {
			t.Fatalf("%s: %v, want installation %s", id, ev, inst)
		}
		return ev
	}
	before := readLiveCounts(t, env)
	inst := alice.Do("POST", "/v1/integrations/shared-test/installations", map[string]any{"organization": org}).Expect(http.StatusCreated).String("id")
	got := a1.eventsByID("integrationEvents", 3)
	x, y, z, w := got["x"], got["y"], got["z"], event(a2, "w", inst)
	if x["installationId"] != inst || z["installationId"] != inst {
		t.Fatalf("alice's events: %v", got)
	}
	if !reflect.DeepEqual(x, y) || !reflect.DeepEqual(x, w) || x["payload"].(map[string]any)["type"] != "installation_setup" || x["status"] != "success" {
		t.Fatalf("alice's events: %v, %v, %v", x, y, w)
	}
	if len(z) != 3 || z["id"] != x["id"] || z["deliveryStatus"] == nil {
		t.Fatalf("the plain selection: %v", z)
	}
	b.expectNothing("the admin of another organization")
	d.expectNothing("a reader")
	// Alice's two connections, each its own caller, for the resolved
	// selection; one response for the plain one.
	expectLiveCounts(t, env, before, 3, 4)

	before = readLiveCounts(t, env)
	bobInst := bob.Do("POST", "/v1/integrations/shared-test/installations", map[string]any{"organization": bobOrg}).Expect(http.StatusCreated).String("id")
	event(b, "v", bobInst)
	for _, c := range []*wsClient{a1, a2, d} {
		c.expectNothing("someone who does not administer Bob's organization")
	}
	expectLiveCounts(t, env, before, 1, 1)
}

// While a connection resolves its caller again (callers changed: a member
// joined), its events wait for it, in order; none is lost or repeated.
func TestSubscriptionEventsInOrderWhileCallersChange(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	var clients []*wsClient
	for i := range 4 {
		c := connectWS(t, env, alice)
		c.subscribe(env, "s", spaceEventsQuery, map[string]any{"s": space}, i+1)
		clients = append(clients, c)
	}
	for round := range 3 {
		env.NewUser(fmt.Sprint("Newcomer ", round)).Join(org, store.RoleRead)
		var ids []string
		for range 10 {
			ids = append(ids, recordEvent(t, env, org, space))
		}
		for i, c := range clients {
			for _, id := range ids {
				if ev := c.event("s", "spaceEvents"); ev["id"] != id {
					t.Fatalf("round %d, client %d: event %v, want %s", round, i, ev["id"], id)
				}
			}
		}
	}
}

// Delivering bursts to many subscribers, one of which stops reading and is
// closed, leaves nothing running once the connections are gone: no lane,
// no writer of a backlog, no subscription's goroutine.
//
// Not parallel: it counts the process's goroutines.
func TestSubscriptionDeliveryLeavesNoGoroutines(t *testing.T) {
	env := servertest.New(t, servertest.Options{WebsocketWriteTimeout: 500 * time.Millisecond, WebsocketSendBuffer: 4096})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	// A subscription and an event first, so that what the first ones
	// start once (the hub's listener) is counted.
	warm := connectWS(t, env, alice)
	warm.subscribe(env, "warm", spaceEventsQuery, map[string]any{"s": space}, 1)
	recordEvent(t, env, org, space)
	warm.event("warm", "spaceEvents")
	_ = warm.conn.Close(websocket.StatusNormalClosure, "")
	warm.closeStatus()
	waitSubscribersAtMost(t, env, 0)
	time.Sleep(100 * time.Millisecond)
	before := goroutines()

	slow := subscribeAndStopReading(t, env, alice, space)
	var clients []*wsClient
	for i := range 10 {
		c := connectWS(t, env, alice)
		for j := range 3 {
			c.subscribe(env, fmt.Sprint(j), spaceEventsQuery, map[string]any{"s": space}, 2+3*i+j)
		}
		clients = append(clients, c)
	}
	// receive reads a burst from c: each of its subscriptions gets every
	// event, in order.
	receive := func(c *wsClient, ids []string) {
		t.Helper()
		got := map[string][]string{}
		for range 3 * len(ids) {
			m := c.next()
			var p struct {
				Data struct{ SpaceEvents struct{ ID string } }
			}
			if m.Type != "next" || json.Unmarshal(m.Payload, &p) != nil {
				t.Fatalf("expected an event, got %s %s", m.Type, m.Payload)
			}
			got[m.ID] = append(got[m.ID], p.Data.SpaceEvents.ID)
		}
		for sub, seen := range got {
			if !reflect.DeepEqual(seen, ids) {
				t.Fatalf("subscription %s received %v, want %v", sub, seen, ids)
			}
		}
	}
	burst := func() []string {
		var ids []string
		for range 20 {
			ids = append(ids, recordEvent(t, env, org, space))
		}
		return ids
	}
	for n := 0; env.Server.Resolver.Live.Subscribers() > 30; n++ {
		if n == 100 {
			t.Fatal("the subscriber that does not read was not closed")
		}
		ids := burst()
		for _, c := range clients {
			receive(c, ids)
		}
	}
	expectClosedTooSlow(t, slow)
	// Half the clients go while a burst is delivered, the others once
	// they have it.
	ids := burst()
	for i, c := range clients {
		if i%2 == 0 {
			_ = c.conn.CloseNow()
		} else {
			receive(c, ids)
			_ = c.conn.Close(websocket.StatusNormalClosure, "")
		}
	}
	waitSubscribersAtMost(t, env, 0)
	waitGoroutinesAtMost(t, before+2)
}
