package wholeserver_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server"
	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/pgtest"
)

// replicated is a primary with a streaming replica (pgtest.Replicated),
// one migrated database on them, and servers of it: each its own process
// as far as routing goes (its pools, its memory of callers' writes).
type replicated struct {
	t       *testing.T
	cluster *pgtest.Replicated
	name    string
	opts    store.ReplicaOptions
}

// newReplicated starts the primary and its replica and makes the database.
// Replicas are checked every 20 ms; maxLag is DOCSAPI_REPLICA_MAX_LAG.
func newReplicated(t *testing.T, maxLag time.Duration) *replicated {
	t.Helper()
	c := pgtest.NewReplicated(t)
	return &replicated{t: t, cluster: c, name: c.NewDatabase(),
		opts: store.ReplicaOptions{MaxLag: maxLag, CheckEvery: 20 * time.Millisecond,
			Log: slog.New(slog.NewTextHandler(testLog{t}, nil))}}
}

// testLog writes a test's log lines into its output (shown when it fails,
// or with -v).
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// server starts a server (another process) on the database, its reads
// routed to the replica.
func (r *replicated) server(opts servertest.Options) *servertest.Env {
	r.t.Helper()
	opts.DB = r.cluster.Open(r.name, r.opts)
	if opts.Logs == nil {
		opts.Logs = testLog{r.t}
	}
	return servertest.New(r.t, opts)
}

// replicaReads is how many reads the replica of env's database answered.
func replicaReads(t *testing.T, env *servertest.Env) int64 {
	t.Helper()
	stats, ok := env.DB.ReplicaStats()
	if !ok || len(stats.Replicas) != 1 {
		t.Fatalf("no replica: %+v", stats)
	}
	return stats.Replicas[0].Reads
}

// A caller's own writes are visible to them at once, whatever the replica's
// lag: over REST and GraphQL, in single reads and in lists, on the
// instance they wrote through, and on another one when they send back the
// position the write answered with. Meanwhile a caller who has not written
// reads from the replica, which has not replayed the writes yet.
func TestOwnWritesAreVisibleAtOnceWithALaggingReplica(t *testing.T) {
	t.Parallel()
	r := newReplicated(t, time.Minute)
	env := r.server(servertest.Options{})
	other := r.server(servertest.Options{})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	bob := env.NewUser("Bob")
	bob.Join(org, store.RoleRead)
	older := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Older"}).Expect(http.StatusCreated).String("id")
	r.cluster.WaitCaughtUp()
	// From here on the replica applies each commit 15 s after it was made:
	// longer than the test takes.
	r.cluster.SetApplyDelay(15 * time.Second)

	created := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Handbook"}).Expect(http.StatusCreated)
	position := created.Header.Get(server.WritePositionHeader)
	if _, err := store.ParseLSN(position); err != nil {
		t.Fatalf("the write answered no position: %q (%v)", position, err)
	}
	id := created.String("id")
	withPosition := http.Header{server.WritePositionHeader: {position}}
	aliceOn := func(e *servertest.Env) *servertest.User { u := *alice; u.Env = e; return &u }

	// alice, through the instance she wrote through, and through the other
	// with her position.
	for _, c := range []struct {
		name   string
		user   *servertest.User
		header http.Header
	}{
		{"same instance", alice, nil},
		{"same instance, position sent", alice, withPosition},
		{"other instance, position sent", aliceOn(other), withPosition},
	} {
		got := c.user.DoWith("GET", "/v1/spaces/"+id, nil, c.header).Expect(http.StatusOK)
		if title := got.String("title"); title != "Handbook" {
			t.Errorf("%s: GET space: title %q", c.name, title)
		}
		if got.Header.Get(server.WritePositionHeader) == "" {
			t.Errorf("%s: a read answered no position though the caller wrote", c.name)
		}
		if ids := listedSpaces(t, c.user, org, c.header); !strings.Contains(ids, id) || !strings.Contains(ids, older) {
			t.Errorf("%s: list of spaces %s lacks the new space %s or the older %s", c.name, ids, id, older)
		}
		gql := graphQLWith(t, c.user, `query($id: ID!) { space(id: $id) { title } }`, map[string]any{"id": id}, c.header)
		if !strings.Contains(string(gql), `"title":"Handbook"`) {
			t.Errorf("%s: GraphQL space: %s", c.name, gql)
		}
	}

	// An update through GraphQL, read back over REST and GraphQL.
	updated := alice.DoWith("POST", "/graphql", map[string]any{
		"query":     `mutation($id: ID!) { updateSpace(id: $id, input: {title: "Guide"}) { title } }`,
		"variables": map[string]any{"id": id}}, withPosition).Expect(http.StatusOK)
	if !strings.Contains(string(updated.Body), `"Guide"`) {
		t.Fatalf("update: %s", updated.Body)
	}
	later := http.Header{server.WritePositionHeader: {updated.Header.Get(server.WritePositionHeader)}}
	if a, b := mustLSN(t, position), mustLSN(t, later.Get(server.WritePositionHeader)); b <= a {
		t.Errorf("the update's position %s is not past the create's %s", b, a)
	}
	for _, c := range []struct {
		name   string
		user   *servertest.User
		header http.Header
	}{{"same instance", alice, nil}, {"other instance", aliceOn(other), later}} {
		if title := c.user.DoWith("GET", "/v1/spaces/"+id, nil, c.header).Expect(http.StatusOK).String("title"); title != "Guide" {
			t.Errorf("%s: title after the update %q", c.name, title)
		}
		if gql := graphQLWith(t, c.user, `query($o: ID!) { organization(id: $o) { spaces(limit: 100) { items { title } } } }`,
			map[string]any{"o": org}, c.header); !strings.Contains(string(gql), `"Guide"`) {
			t.Errorf("%s: GraphQL list after the update: %s", c.name, gql)
		}
	}

	// bob has written nothing: he reads from the replica, which has not
	// replayed alice's writes yet; so does alice on the other instance when
	// she does not say where she wrote.
	before := replicaReads(t, env)
	if ids := listedSpaces(t, bob, org, nil); strings.Contains(ids, id) || !strings.Contains(ids, older) {
		t.Errorf("bob's list %s: want the older space %s and not yet the new %s (the replica lags)", ids, older, id)
	}
	bob.Do("GET", "/v1/spaces/"+id, nil).Expect(http.StatusNotFound)
	if replicaReads(t, env) == before {
		t.Error("bob's reads did not go to the replica")
	}
	aliceOn(other).Do("GET", "/v1/spaces/"+id, nil).Expect(http.StatusNotFound)
}

// listedSpaces is the ids of the organization's spaces user lists.
func listedSpaces(t *testing.T, user *servertest.User, org string, header http.Header) string {
	t.Helper()
	var list struct{ Items []struct{ ID string } }
	user.DoWith("GET", "/v1/orgs/"+org+"/spaces", nil, header).Expect(http.StatusOK).Decode(&list)
	var ids []string
	for _, s := range list.Items {
		ids = append(ids, s.ID)
	}
	return strings.Join(ids, ",")
}

// graphQLWith runs a GraphQL query as user with header and returns its
// data, failing on errors.
func graphQLWith(t *testing.T, user *servertest.User, query string, vars map[string]any, header http.Header) json.RawMessage {
	t.Helper()
	res := user.DoWith("POST", "/graphql", map[string]any{"query": query, "variables": vars}, header).Expect(http.StatusOK)
	var out servertest.GraphQLResponse
	res.Decode(&out)
	if len(out.Errors) > 0 {
		t.Fatalf("%s: %+v", query, out.Errors)
	}
	return out.Data
}

func mustLSN(t *testing.T, s string) store.LSN {
	t.Helper()
	l, err := store.ParseLSN(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// With the replica caught up, a caller who has not written reads there:
// of the statements their GET space and site tree requests run (as the
// server counts them: X-SQL-Queries, extensions.stats.sqlQueries), at
// least 70 % run on the replica (the goal; all of them, in fact, once the
// caller's token is in the caller cache).
func TestNonWritingCallerReadsOnTheReplica(t *testing.T) {
	t.Parallel()
	r := newReplicated(t, time.Minute)
	env := r.server(servertest.Options{Debug: true})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	site := buildSiteTree(t, env, alice, org, 2, 2, 2, 1)
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Handbook"}).Expect(http.StatusCreated).String("id")
	bob := env.NewUser("Bob")
	bob.Join(org, store.RoleRead)
	r.cluster.WaitCaughtUp()
	bob.Do("GET", "/v1/spaces/"+space, nil).Expect(http.StatusOK) // his token into the caller cache

	before := replicaReads(t, env)
	statements := 0
	for range 20 {
		res := bob.Do("GET", "/v1/spaces/"+space, nil).Expect(http.StatusOK)
		statements += atoi(t, res.Header.Get("X-SQL-Queries"))
		tree := bob.GraphQL(siteTreeQuery, map[string]any{"o": org, "s": site})
		if len(tree.Errors) > 0 || !strings.Contains(string(tree.Data), `"G1 S1"`) {
			t.Fatalf("site tree: %s %+v", tree.Data, tree.Errors)
		}
		statements += int(tree.Extensions["stats"].(map[string]any)["sqlQueries"].(float64))
	}
	onReplica := replicaReads(t, env) - before
	t.Logf("%d of bob's %d statements ran on the replica", onReplica, statements)
	if share := float64(onReplica) / float64(statements); share < 0.7 {
		t.Errorf("%d of bob's %d statements ran on the replica (%.0f %%), want at least 70 %%", onReplica, statements, 100*share)
	}
}

// A replica killed while requests run changes no answer: readers get the
// same bodies before, during and after, a writer reads its writes back,
// and no request fails. Once the replica is back, reads go to it again.
func TestReplicaKilledMidRunChangesNoAnswer(t *testing.T) {
	t.Parallel()
	r := newReplicated(t, time.Minute)
	env := r.server(servertest.Options{})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	site := buildSiteTree(t, env, alice, org, 2, 2, 2, 1)
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Handbook"}).Expect(http.StatusCreated).String("id")
	edited := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Draft 0"}).Expect(http.StatusCreated).String("id")
	bob := env.NewUser("Bob")
	bob.Join(org, store.RoleRead)
	r.cluster.WaitCaughtUp()
	wantSpace := string(bob.Do("GET", "/v1/spaces/"+space, nil).Expect(http.StatusOK).Body)
	wantTree := string(bob.GraphQL(siteTreeQuery, map[string]any{"o": org, "s": site}).Data)
	before := replicaReads(t, env)

	var failures []string
	var mu sync.Mutex
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, fmt.Sprintf(format, args...))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if res := env.Do("GET", "/v1/spaces/"+space, bob.Token, nil); res.Status != http.StatusOK || string(res.Body) != wantSpace {
					fail("GET space: %d %s", res.Status, res.Body)
				}
				res := env.Do("POST", "/graphql", bob.Token, map[string]any{"query": siteTreeQuery, "variables": map[string]any{"o": org, "s": site}})
				var out servertest.GraphQLResponse
				if res.Status != http.StatusOK || json.Unmarshal(res.Body, &out) != nil || len(out.Errors) > 0 || string(out.Data) != wantTree {
					fail("site tree: %d %s", res.Status, res.Body)
				}
			}
		})
	}
	wg.Go(func() {
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			title := fmt.Sprintf("Draft %d", i)
			if res := env.Do("PATCH", "/v1/spaces/"+edited, alice.Token, map[string]any{"title": title}); res.Status != http.StatusOK {
				fail("PATCH: %d %s", res.Status, res.Body)
			}
			if res := env.Do("GET", "/v1/spaces/"+edited, alice.Token, nil); res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"title":"`+title+`"`) {
				fail("GET after PATCH to %q: %d %s", title, res.Status, res.Body)
			}
		}
	})
	time.Sleep(700 * time.Millisecond)
	r.cluster.KillStandby()
	time.Sleep(700 * time.Millisecond)
	close(stop)
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	if replicaReads(t, env) == before {
		t.Error("no read went to the replica before it was killed")
	}
	stats, _ := env.DB.ReplicaStats()
	if stats.Replicas[0].Up || stats.Fallbacks["down"]+stats.Fallbacks["read_failed"] == 0 {
		t.Errorf("the killed replica is not counted down: %+v", stats)
	}

	r.cluster.StartStandby()
	downAt := replicaReads(t, env)
	deadline := time.Now().Add(30 * time.Second)
	for replicaReads(t, env) == downAt {
		if time.Now().After(deadline) {
			t.Fatal("reads did not go back to the replica after it started again")
		}
		if res := bob.Do("GET", "/v1/spaces/"+space, nil); res.Status != http.StatusOK || string(res.Body) != wantSpace {
			t.Fatalf("GET space: %d %s", res.Status, res.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A replica lagging past the maximum (DOCSAPI_REPLICA_MAX_LAG) takes no
// reads: a caller who has not written then reads on the primary, and sees
// others' writes. /metrics tells the replica's lag, the reads of each
// pool, and why the primary answered.
func TestLaggingReplicaIsSkipped(t *testing.T) {
	t.Parallel()
	r := newReplicated(t, 300*time.Millisecond)
	env := r.server(servertest.Options{})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	bob := env.NewUser("Bob")
	bob.Join(org, store.RoleRead)
	r.cluster.WaitCaughtUp()
	listedSpaces(t, bob, org, nil)
	r.cluster.SetApplyDelay(15 * time.Second)

	id := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Handbook"}).Expect(http.StatusCreated).String("id")
	// Past the maximum lag (and a check or two), bob's reads go to the
	// primary.
	time.Sleep(600 * time.Millisecond)
	if ids := listedSpaces(t, bob, org, nil); !strings.Contains(ids, id) {
		t.Errorf("bob's list %s lacks %s: read on a replica lagging past the maximum", ids, id)
	}
	metrics := string(env.Do("GET", "/metrics", "", nil).Expect(http.StatusOK).Body)
	stats, _ := env.DB.ReplicaStats()
	replica := stats.Replicas[0].Name
	for _, want := range []string{
		`docsapi_db_replica_up{replica="` + replica + `"} 1`,
		`docsapi_db_reads_total{pool="` + replica + `"}`,
		`docsapi_db_reads_total{pool="primary"}`,
		`docsapi_db_replica_fallbacks_total{reason="lagging"}`,
		`docsapi_db_replica_lag_seconds{replica="` + replica + `"} `,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if stats.Fallbacks["lagging"] == 0 || stats.Replicas[0].Lag < 300*time.Millisecond {
		t.Errorf("stats = %+v, want reads past the lag on the primary", stats)
	}
}

// X-Write-Position is what the server wrote there, or a 400 naming it,
// with replicas or without.
func TestWritePositionHeaderIsChecked(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	for _, bad := range []string{"nope", "16", "16/", "/1", "1/2/3", "G/0", "123456789/0", "-1/0", "+1/0"} {
		header := http.Header{server.WritePositionHeader: {bad}}
		msg := alice.DoWith("GET", "/v1/user", nil, header).Expect(http.StatusBadRequest).ErrorMessage()
		if !strings.Contains(msg, server.WritePositionHeader) {
			t.Errorf("%q: message %q does not name the header", bad, msg)
		}
		res := alice.DoWith("POST", "/graphql", map[string]any{"query": "{ viewer { id } }"}, header).Expect(http.StatusBadRequest)
		var out servertest.GraphQLResponse
		res.Decode(&out)
		if len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "BAD_REQUEST" {
			t.Errorf("%q: GraphQL answer %s", bad, res.Body)
		}
	}
	res := alice.DoWith("GET", "/v1/user", nil, http.Header{server.WritePositionHeader: {"16/B374D848"}}).Expect(http.StatusOK)
	if h := res.Header.Get(server.WritePositionHeader); h != "" {
		t.Errorf("without replicas the answer carries a position: %q", h)
	}
}

// A replica gone silent (its processes stopped: its connections open,
// answering nothing) holds no request for long: its check gives up after a
// second and takes it out, the reads still waiting on it give up then and
// run on the primary, and no request fails. The bound asserted, 10 s, is
// far above that second and far below what would hold a read otherwise (the
// 30 s statement timeout does not reach a server that answers nothing; TCP
// takes minutes).
func TestReplicaGoneSilentHoldsNoRequest(t *testing.T) {
	t.Parallel()
	r := newReplicated(t, time.Minute)
	env := r.server(servertest.Options{})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Handbook"}).Expect(http.StatusCreated).String("id")
	bob := env.NewUser("Bob")
	bob.Join(org, store.RoleRead)
	r.cluster.WaitCaughtUp()
	want := string(bob.Do("GET", "/v1/spaces/"+space, nil).Expect(http.StatusOK).Body)
	before := replicaReads(t, env)
	bob.Do("GET", "/v1/spaces/"+space, nil).Expect(http.StatusOK)
	if replicaReads(t, env) == before {
		t.Fatal("bob's reads do not go to the replica")
	}

	r.cluster.PauseStandby()
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for range 10 {
				start := time.Now()
				res := env.Do("GET", "/v1/spaces/"+space, bob.Token, nil)
				if took := time.Since(start); res.Status != http.StatusOK || string(res.Body) != want || took > 10*time.Second {
					t.Errorf("GET space with the replica silent: %d in %s: %s", res.Status, took, res.Body)
				}
			}
		})
	}
	wg.Wait()
	if stats, _ := env.DB.ReplicaStats(); stats.Replicas[0].Up {
		t.Errorf("the silent replica is still up: %+v", stats)
	}
}

// Subscriptions read their events on the primary: a subscriber is told of
// a comment at once though the replica has not replayed it, and what it
// reads next, over its websocket or over REST through the same instance,
// finds the comment. A member who was told nothing reads the lagging
// replica.
func TestSubscriberReadsWhatItWasToldOf(t *testing.T) {
	t.Parallel()
	r := newReplicated(t, time.Minute)
	env := r.server(servertest.Options{})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Handbook"}).Expect(http.StatusCreated).String("id")
	bob, carol := env.NewUser("Bob"), env.NewUser("Carol")
	bob.Join(org, store.RoleRead)
	carol.Join(org, store.RoleRead)
	r.cluster.WaitCaughtUp()
	r.cluster.SetApplyDelay(15 * time.Second)

	c := connectWS(t, env, bob)
	c.subscribe(env, "s", spaceEventsQuery, map[string]any{"s": space}, 1)
	comment := alice.Do("POST", "/v1/spaces/"+space+"/comments", map[string]any{"body": map[string]any{"markdown": "Look"}}).
		Expect(http.StatusOK).String("id")
	if ev := c.event("s", "spaceEvents"); ev["type"] != "comment_posted" || ev["commentId"] != comment {
		t.Fatalf("event: %v", ev)
	}
	comments := func(u *servertest.User) string {
		return string(u.Do("GET", "/v1/spaces/"+space+"/comments", nil).Expect(http.StatusOK).Body)
	}
	if !strings.Contains(comments(bob), comment) {
		t.Error("bob, told of the comment, does not find it over REST")
	}
	c.send(map[string]any{"id": "q", "type": "subscribe", "payload": map[string]any{
		"query": `query($s: ID!) { space(id: $s) { commentList { items { id } } } }`, "variables": map[string]any{"s": space}}})
	if m := c.next(); m.Type != "next" || m.ID != "q" || !strings.Contains(string(m.Payload), comment) {
		t.Errorf("bob, told of the comment, does not find it over his websocket: %s %s", m.Type, m.Payload)
	}
	if strings.Contains(comments(carol), comment) {
		t.Error("carol finds the comment: not read on the lagging replica")
	}
}
