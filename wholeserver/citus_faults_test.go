package wholeserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/pgtest"
)

// A Citus worker stopped under load: the requests that need its shards
// answer 503 UNAVAILABLE with Retry-After (never 500), the organizations
// on the other worker go on being served, and once the worker is back
// every organization is served again by the same server, with no restart.
func TestCitusWorkerDownUnderLoad(t *testing.T) {
	cluster := pgtest.NewCitusCluster(t)
	ctx := context.Background()
	db := cluster.NewDB(t, store.Options{MaxConns: 10, StatementTimeout: store.DefaultStatementTimeout})
	env := servertest.New(t, servertest.Options{DB: db})

	// Organizations until each worker holds some.
	alice := env.NewUser("Alice")
	type tenant struct{ org, space, site string }
	byWorker := map[int][]tenant{}
	for i := 0; len(byWorker[1]) < 2 || len(byWorker[2]) < 2; i++ {
		if i == 40 {
			t.Fatalf("40 organizations and a worker holds none: %v", byWorker)
		}
		org := alice.NewOrg(fmt.Sprintf("Org %d", i))
		w := workerOf(t, cluster, db, org)
		space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Handbook"}).Expect(http.StatusCreated).String("id")
		site := buildSiteTree(t, env, alice, org, 2, 2, 1, 1)
		byWorker[w] = append(byWorker[w], tenant{org, space, site})
	}

	// Each request a reader makes, and what it answered before the fault.
	type read struct {
		worker int
		do     func() (int, http.Header, []byte)
		want   string
	}
	var reads []read
	for w, tenants := range byWorker {
		for _, tn := range tenants {
			getSpace := func() (int, http.Header, []byte) {
				res := env.Do("GET", "/v1/spaces/"+tn.space, alice.Token, nil)
				return res.Status, res.Header, res.Body
			}
			tree := func() (int, http.Header, []byte) {
				res := env.Do("POST", "/graphql", alice.Token, map[string]any{"query": siteTreeQuery, "variables": map[string]any{"o": tn.org, "s": tn.site}})
				return res.Status, res.Header, res.Body
			}
			spaces := func() (int, http.Header, []byte) {
				res := env.Do("GET", "/v1/orgs/"+tn.org+"/spaces", alice.Token, nil)
				return res.Status, res.Header, res.Body
			}
			for _, do := range []func() (int, http.Header, []byte){getSpace, tree, spaces} {
				status, _, body := do()
				if status != http.StatusOK {
					t.Fatalf("before the fault: %d %s", status, body)
				}
				reads = append(reads, read{worker: w, do: do, want: string(body)})
			}
		}
	}

	// Readers of every organization, and a writer in each, while worker 2
	// is stopped and started again.
	var mu sync.Mutex
	answers := map[string]int{}
	var failures []string
	note := func(worker int, phase string, status int, header http.Header, body []byte, want string) {
		mu.Lock()
		defer mu.Unlock()
		// A GraphQL operation the database failed while it ran is an
		// answer of 200 whose one error is UNAVAILABLE (status 503), as
		// on one PostgreSQL (faults_test.go).
		var gql servertest.GraphQLResponse
		if status == http.StatusOK && json.Unmarshal(body, &gql) == nil && len(gql.Errors) > 0 {
			if len(gql.Errors) == 1 && gql.Errors[0].Extensions["code"] == "UNAVAILABLE" && gql.Errors[0].Extensions["status"] == 503.0 {
				header = http.Header{"Retry-After": {"(in the error)"}}
				status = http.StatusServiceUnavailable
				body = []byte(`{"code":"UNAVAILABLE"}`)
			} else {
				status = http.StatusInternalServerError
			}
		}
		key := fmt.Sprintf("worker %d %s: %d", worker, phase, status)
		answers[key]++
		switch {
		case status == http.StatusOK && want != "" && string(body) != want && !json.Valid(body):
			failures = append(failures, fmt.Sprintf("%s: %s", key, body))
		case status == http.StatusOK:
		case status == http.StatusServiceUnavailable:
			var e struct {
				Code string `json:"code"`
			}
			if json.Unmarshal(body, &e) != nil || header.Get("Retry-After") == "" {
				failures = append(failures, fmt.Sprintf("%s without the error's shape or Retry-After: %v %s", key, header, body))
			}
		default:
			failures = append(failures, fmt.Sprintf("%s: %s", key, body))
		}
	}
	var phase struct {
		sync.Mutex
		name string
	}
	phaseNow := func() string { phase.Lock(); defer phase.Unlock(); return phase.name }
	setPhase := func(name string) { phase.Lock(); phase.name = name; phase.Unlock() }
	setPhase("up")

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			for n := i; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				r := reads[n%len(reads)]
				p := phaseNow()
				status, header, body := r.do()
				note(r.worker, p, status, header, body, r.want)
			}
		})
	}
	for w, tenants := range byWorker {
		tn := tenants[0]
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				p := phaseNow()
				res := env.Do("PATCH", "/v1/spaces/"+tn.space, alice.Token, map[string]any{"title": fmt.Sprintf("Handbook %d", n)})
				note(w, p+" write", res.Status, res.Header, res.Body, "")
				time.Sleep(10 * time.Millisecond)
			}
		})
	}

	time.Sleep(500 * time.Millisecond)
	setPhase("stopping")
	cluster.StopNode(2)
	setPhase("down")
	time.Sleep(2 * time.Second)
	setPhase("starting")
	if err := cluster.StartNode(ctx, 2); err != nil {
		t.Fatal(err)
	}
	setPhase("back")
	// Back means served: wait until worker 2's organizations answer.
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		ok := answers["worker 2 back: 200"] > 0
		mu.Unlock()
		if ok || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()

	t.Logf("answers: %v", answers)
	for _, f := range failures {
		t.Error(f)
	}
	for _, key := range []string{"worker 1 up: 200", "worker 2 up: 200", "worker 1 down: 200", "worker 2 down: 503", "worker 1 back: 200", "worker 2 back: 200", "worker 1 down write: 200"} {
		if answers[key] == 0 {
			t.Errorf("no %q answer", key)
		}
	}
	if answers["worker 2 down: 200"] > 0 {
		t.Errorf("worker 2's organizations were served while it was down (%d answers): the test stopped nothing", answers["worker 2 down: 200"])
	}

	// The reads of each organization went to its worker (store/citus_reads.go),
	// and both workers take them again: /metrics says so.
	stats, ok := db.WorkerStats()
	if !ok || len(stats.Workers) != 2 {
		t.Fatalf("worker stats %+v, %v: want the cluster's two workers", stats, ok)
	}
	// A worker back is up again at its next check (every second; later on
	// a busy machine): /metrics says so within a few.
	var metrics string
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		metrics = string(env.Do("GET", "/metrics", "", nil).Expect(http.StatusOK).Body)
		up := 0
		for _, w := range stats.Workers {
			if strings.Contains(metrics, `docsapi_db_worker_up{worker="`+w.Name+`"} 1`) {
				up++
			}
		}
		if up == len(stats.Workers) || time.Now().After(deadline) {
			break
		}
	}
	for _, w := range stats.Workers {
		if w.Reads == 0 {
			t.Errorf("worker %s answered no read", w.Name)
		}
		for _, want := range []string{`docsapi_db_worker_up{worker="` + w.Name + `"} 1`, `docsapi_db_reads_total{pool="` + w.Name + `"}`} {
			if !strings.Contains(metrics, want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	}
	if !strings.Contains(metrics, `docsapi_db_reads_total{pool="coordinator"}`) {
		t.Errorf("/metrics lacks the coordinator's reads")
	}
}

// workerOf is the worker (1 or 2) holding org's rows.
func workerOf(t *testing.T, cluster *pgtest.CitusCluster, db *store.DB, org string) int {
	t.Helper()
	var port int
	err := db.NewRaw(`SELECT nodeport FROM pg_dist_shard_placement
		WHERE shardid = get_shard_id_for_distribution_column('spaces', ?)`, org).Scan(context.Background(), &port)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range cluster.Nodes {
		if n.Port() == port {
			return i
		}
	}
	t.Fatalf("organization %s is on port %d, no worker's", org, port)
	return 0
}
