package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi/cmd/docsapi/server"
	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/blob"
	"github.com/docsapi/docsapi/store/pgserver"
	"github.com/docsapi/docsapi/store/pgtest"
)

// The citus scenario (-scenario citus): the site tree, GET /v1/spaces/{id}
// and organization search, served by a docsapi on one PostgreSQL and by
// one on a Citus cluster (a coordinator and two workers), all on this
// machine, in the same run (issue 27's goal: the site tree's p50 on the
// cluster at most 1.5× one PostgreSQL's). One machine shows what
// distribution costs a request (the coordinator's planning, its round
// trips to a worker), not what the cluster gains: the three nodes share
// the same CPUs as the single server.
//
// Both databases are embedded servers in temporary directories: the
// cluster is store/pgtest's (pgserver nodes with the citus library, four
// shards per distributed table), and the single server is started as its
// nodes are (without fsync: what is measured are reads). Each is migrated
// (on the coordinator Migrate distributes the schema), gets a server of
// its own, and is seeded with the same data through its server's REST
// API: the tree scenario's site (-groups × -sections × -site-spaces, each
// site space publishing its own space) and, in an organization of its
// own, a space of -pages pages imported from a generated git repository
// (the content scenario's), which search reads. Then every node is
// vacuumed and analyzed, as autovacuum would within a minute. Nothing is
// measured until then, so the two databases are started, migrated and
// seeded at once, to keep the run short.
//
// The site tree is measured at concurrency 1 (its latency, as the tree
// scenario measures it: the goal figure), GET space and search (one- and
// two-word queries, in turn) at -concurrency: three passes on each
// database a round keep the run within 4 minutes on a quiet machine
// (seeding the cluster takes more than a minute of it). Passes alternate
// between the two servers, -citus-rounds times, and each figure is the
// median pass's (of median throughput), so that drift of the machine falls
// on both alike. A completed pass is zero failed requests. CPU per
// request is this process's (both servers and the load generator) and the
// measured database's PostgreSQL processes' (all three nodes' for the
// cluster).
func citusBench(ctx context.Context, o options, out io.Writer) (err error) {
	if err := pgtest.CitusInstalled(); err != nil {
		return fmt.Errorf("the citus scenario needs a Citus cluster: %w", err)
	}
	fmt.Fprintf(out, "docsbench citus: %d groups × %d sections × %d site spaces, search over %d pages; concurrency %d; %s per pass, %d rounds\n",
		o.groups, o.sections, o.siteSpaces, o.pages, o.concurrency, o.duration, o.citusRounds)
	// Directories of their own: pgserver hands a data directory to the
	// server's OS user, who must be able to reach it.
	var dirs [3]string
	for i := range dirs {
		if dirs[i], err = os.MkdirTemp("", "docsbench-citus-"); err != nil {
			return err
		}
		defer os.RemoveAll(dirs[i])
	}
	plainDir, clusterDir, gitRoot := dirs[0], dirs[1], dirs[2]

	// Both started, migrated and seeded at once: nothing is measured yet.
	setupStart := time.Now()
	var plainPG *pgserver.Server
	var cluster *pgtest.CitusCluster
	var clusterURL string
	err = both(func() (err error) {
		if plainPG, err = pgserver.Start(ctx, pgserver.Options{DataDir: plainDir}); err != nil {
			return err
		}
		return createDatabase(ctx, plainPG.URL("postgres"), "docsapi")
	}, func() (err error) {
		if cluster, err = pgtest.StartCitus(ctx, clusterDir); err != nil {
			return err
		}
		clusterURL, err = cluster.CreateDatabase(ctx, "docsapi")
		return err
	})
	if plainPG != nil {
		defer plainPG.Stop()
	}
	if cluster != nil {
		defer cluster.Stop()
	}
	if err != nil {
		return err
	}

	// One PostgreSQL, then the cluster.
	targets := []*citusTarget{
		{name: "one PostgreSQL", dbURL: plainPG.URL("docsapi"), nodeURLs: []string{plainPG.URL("docsapi")},
			postmasters: []int{plainPG.PID()}},
		{name: "Citus cluster", dbURL: clusterURL},
	}
	for _, n := range cluster.Nodes {
		targets[1].nodeURLs = append(targets[1].nodeURLs, n.URL("docsapi"))
		targets[1].postmasters = append(targets[1].postmasters, n.PID())
	}
	pool := store.Options{MaxConns: int32(o.dbMaxConns), StatementTimeout: store.DefaultStatementTimeout}
	for _, t := range targets {
		if t.db, err = store.OpenWith(ctx, t.dbURL, pool); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		defer t.db.Close()
	}
	err = both(func() error { return targets[0].db.Migrate(ctx, nil) }, func() error { return targets[1].db.Migrate(ctx, nil) })
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var citusVersion string
	if err := targets[1].db.Pool.QueryRow(ctx, "SELECT extversion FROM pg_extension WHERE extname = 'citus'").Scan(&citusVersion); err != nil {
		return err
	}
	fmt.Fprintf(out, "one PostgreSQL and a Citus %s cluster (a coordinator, 2 workers) started and migrated in %s\n",
		citusVersion, time.Since(setupStart).Round(time.Millisecond))

	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	var listeners servers
	defer listeners.close()
	for i, t := range targets {
		blobURL, err := blob.FileURL(filepath.Join(gitRoot, fmt.Sprintf("blobs-%d", i)))
		if err != nil {
			return err
		}
		var srv *server.Server
		t.base, err = listeners.start(func(url string) (http.Handler, error) {
			s, err := server.New(t.db, server.Config{PublicURL: url, Log: logger, BlobURL: blobURL, GitFileRoot: gitRoot,
				RateLimit: o.rateLimit, RateWindow: o.rateWindow})
			srv = s
			return s, err
		})
		if err != nil {
			return err
		}
		created, err := srv.Resolver.CreateUser(ctx, fmt.Sprintf("bench-%d@example.com", time.Now().UnixNano()), "Bench")
		if err != nil {
			return err
		}
		t.token = created.Token
	}
	client := newClient(o.concurrency + o.seedConcurrency)
	defer client.CloseIdleConnections()

	// The searched content: one repository, imported into a space of each.
	repo, err := generateRepo(filepath.Join(gitRoot, "search"), o.pages, o.pageBytes, contentWords(), 0)
	if err != nil {
		return fmt.Errorf("generate the repository: %w", err)
	}
	seedStart := time.Now()
	err = both(func() error { return targets[0].seed(ctx, client, o, repo) }, func() error { return targets[1].seed(ctx, client, o, repo) })
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	fmt.Fprintf(out, "both seeded through the REST API, at once, in %s:\n", time.Since(seedStart).Round(time.Millisecond))
	for _, t := range targets {
		fmt.Fprintf(out, "  %s: the site (%d spaces) in %s, then %d pages imported from git in %s; vacuumed and analyzed in %s\n",
			t.name, len(t.site.spaces), t.seedTime.Round(time.Millisecond), repo.pages, t.importTime.Round(time.Millisecond),
			t.vacuumTime.Round(time.Millisecond))
	}

	qrng := rand.New(rand.NewPCG(5, 6))
	queries := make([]string, 200)
	for i := range queries {
		q := repo.words[qrng.IntN(len(repo.words))]
		if i%2 == 1 {
			q += " " + repo.words[qrng.IntN(len(repo.words))]
		}
		queries[i] = q
	}
	tree := func(t *citusTarget) requester {
		body := fmt.Appendf(nil, `{"query":%q,"variables":{"organizationId":%q,"siteId":%q}}`, treeQuery, t.site.org, t.site.id)
		return httpRequester(client, "POST", func(int) string { return t.base + "/graphql" }, body, t.token, gqlOK)
	}
	space := func(t *citusTarget) requester {
		return httpRequester(client, "GET", func(i int) string { return t.base + "/v1/spaces/" + t.site.spaces[i%len(t.site.spaces)] },
			nil, t.token, okStatus)
	}
	search := func(t *citusTarget) requester {
		return httpRequester(client, "GET", func(i int) string {
			return t.base + "/v1/orgs/" + t.searchOrg + "/search?query=" + url.QueryEscape(queries[i%len(queries)])
		}, nil, t.token, okStatus)
	}

	// Both answer the same: the whole tree, and the same hits for the
	// same words (ids differ, the pages are the same).
	for _, t := range targets {
		if err := t.check(ctx, client, tree(t), queries); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	if targets[0].treeBytes != targets[1].treeBytes || targets[0].hits != targets[1].hits {
		return fmt.Errorf("the two servers answer differently: site tree %d and %d bytes, search hits %d and %d",
			targets[0].treeBytes, targets[1].treeBytes, targets[0].hits, targets[1].hits)
	}
	fmt.Fprintf(out, "both answer alike: site tree of %d site spaces (%d bytes); %d queries, %d hits in all on each\n",
		len(targets[0].site.spaces), targets[0].treeBytes, len(queries), targets[0].hits)

	passes := 0
	pass := func(name string, t *citusTarget, concurrency int, send requester) (loadResult, error) {
		if _, err := load(ctx, concurrency, o.warmup, o.warmupRequests, send); err != nil {
			return loadResult{}, fmt.Errorf("%s on %s (warm-up): %w", name, t.name, err)
		}
		// With -cpuprofile, a profile per pass, as the replica scenario's.
		passes++
		profile := ""
		if o.cpuProfile != "" {
			profile = fmt.Sprintf("%s.%d", o.cpuProfile, passes)
			fmt.Fprintf(out, "pass %d: %s on %s (profile %s)\n", passes, name, t.name, profile)
		}
		stopProfile, err := startCPUProfile(profile)
		if err != nil {
			return loadResult{}, err
		}
		defer stopProfile()
		// Only this database's PostgreSQL CPU: the machine may run others.
		before := readCPUOf(t.postmasters)
		res, err := load(ctx, concurrency, o.duration, 0, send)
		if err != nil {
			return loadResult{}, fmt.Errorf("%s on %s: %w", name, t.name, err)
		}
		res.cpuSelf, res.cpuPostgres, res.cpuOK = cpuPerRequest(before, readCPUOf(t.postmasters), res.n)
		return res, nil
	}
	c := o.concurrency
	var rows []citusRow
	for _, read := range []struct {
		name        string
		concurrency int
		send        func(*citusTarget) requester
		goal        bool // the site tree's p50 at most 1.5×
	}{
		{"site tree (GraphQL)", 1, tree, true},
		{"GET /v1/spaces/{id}", c, space, false},
		{"search (GET /v1/orgs/{id}/search)", c, search, false},
	} {
		var passes [2][]loadResult
		for range o.citusRounds {
			for i, t := range targets {
				res, err := pass(read.name, t, read.concurrency, read.send(t))
				if err != nil {
					return err
				}
				passes[i] = append(passes[i], res)
			}
		}
		p, d := medianPass(passes[0]), medianPass(passes[1])
		what := fmt.Sprintf("%s  %%s, concurrency %d", read.name, read.concurrency)
		p50 := ratio(ms(d.percentile(50)), ms(p.percentile(50)))
		goal := citusRow{what: fmt.Sprintf(what, "p50 latency"), plain: fmtMs(p.percentile(50)), cluster: fmtMs(d.percentile(50)),
			ratio: fmtRatio(p50)}
		if read.goal {
			goal.target, goal.result = "<= 1.5x", passMiss(p50 <= 1.5)
		}
		rows = append(rows, goal,
			citusRow{what: fmt.Sprintf(what, "p99 latency"), plain: fmtMs(p.percentile(99)), cluster: fmtMs(d.percentile(99)),
				ratio: fmtRatio(ratio(ms(d.percentile(99)), ms(p.percentile(99))))},
			citusRow{what: fmt.Sprintf(what, fmt.Sprintf("throughput (median of %d)", o.citusRounds)), plain: fmtRPS(p.rps()),
				cluster: fmtRPS(d.rps()), ratio: fmtRatio(ratio(d.rps(), p.rps()))},
			citusRow{what: fmt.Sprintf(what, "CPU per request: process + PostgreSQL (every node)"), plain: fmtCPU(p), cluster: fmtCPU(d),
				ratio: fmtRatio(ratio(float64(d.cpu()), float64(p.cpu())))})
	}

	var pgVersion string
	if err := targets[0].db.Pool.QueryRow(ctx, "SHOW server_version").Scan(&pgVersion); err != nil {
		return err
	}
	fmt.Fprintln(out)
	table := make([]row, len(rows))
	for i, r := range rows {
		table[i] = row{what: r.what, docsapi: r.plain, baseline: r.cluster, ratio: r.ratio, target: r.target, result: r.result}
	}
	writeRows(out, "one PostgreSQL", "Citus cluster", table)
	fmt.Fprintf(out, "\nratio = Citus cluster / one PostgreSQL. Both servers in this process; one PostgreSQL and the cluster's three nodes (Citus %s, 4 shards per table) on the same %d CPUs (GOMAXPROCS %d), %s; %s; PostgreSQL %s; pgx pool of %d each\n",
		citusVersion, runtime.NumCPU(), runtime.GOMAXPROCS(0), cpuModel(), runtime.Version(), pgVersion, o.dbMaxConns)
	return nil
}

// citusRow is a line of the citus scenario's table.
type citusRow struct{ what, plain, cluster, ratio, target, result string }

// citusTarget is one of the citus scenario's databases with its server.
type citusTarget struct {
	name        string
	dbURL       string
	nodeURLs    []string // the database on every node, vacuumed after seeding
	postmasters []int
	db          *store.DB
	base, token string

	site                             *seededSite
	searchOrg                        string // the organization of the searched space
	seedTime, importTime, vacuumTime time.Duration
	treeBytes, hits                  int
}

// seed gives the target the site, then, in an organization of its own, the
// searched space (not beside the site: on a machine seeding both databases
// the import then outlasted the client's minute); then it vacuums and
// analyzes every node.
func (t *citusTarget) seed(ctx context.Context, client *http.Client, o options, repo *contentRepo) (err error) {
	api := &apiClient{client: client, base: t.base, token: t.token}
	t0 := time.Now()
	if t.site, err = seed(ctx, api, o); err != nil {
		return fmt.Errorf("%s: site: %w", t.name, err)
	}
	t.seedTime = time.Since(t0)
	t0 = time.Now()
	if t.searchOrg, err = api.create(ctx, "/v1/orgs", map[string]any{"title": "Docs"}); err != nil {
		return fmt.Errorf("%s: %w", t.name, err)
	}
	docs, err := api.create(ctx, "/v1/orgs/"+t.searchOrg+"/spaces", map[string]any{"title": "Docs"})
	if err != nil {
		return fmt.Errorf("%s: %w", t.name, err)
	}
	if err := api.do(ctx, "POST", "/v1/spaces/"+docs+"/git/import",
		map[string]any{"url": repo.url, "ref": "refs/heads/main"}, http.StatusNoContent, nil); err != nil {
		return fmt.Errorf("%s: import: %w", t.name, err)
	}
	t.importTime = time.Since(t0)
	// Fresh statistics and visibility maps on every node (a worker holds
	// the shards, the coordinator the reference tables and its own), as
	// autovacuum would gather within a minute of such a load.
	t0 = time.Now()
	for _, u := range t.nodeURLs {
		if err := execAt(ctx, u, "VACUUM ANALYZE"); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	t.vacuumTime = time.Since(t0)
	return nil
}

// both runs a and b at once and returns their errors, joined.
func both(a, b func() error) error {
	var errA error
	done := make(chan struct{})
	go func() {
		defer close(done)
		errA = a()
	}()
	errB := b()
	<-done
	return errors.Join(errA, errB)
}

// check reads the tree and runs every query once, keeping the tree's size
// and the number of hits.
func (t *citusTarget) check(ctx context.Context, client *http.Client, tree requester, queries []string) error {
	var buf bytes.Buffer
	if err := tree(ctx, &buf, 0); err != nil {
		return fmt.Errorf("site tree: %w", err)
	}
	var gql graphQLResponse
	if err := json.Unmarshal(buf.Bytes(), &gql); err != nil || len(gql.Errors) > 0 {
		return fmt.Errorf("site tree: %v: %.500s", err, buf.Bytes())
	}
	if n, want := countSiteSpaces(gql.Data), len(t.site.spaces); n != want {
		return fmt.Errorf("the site tree holds %d site spaces, want %d", n, want)
	}
	t.treeBytes = buf.Len()
	api := &apiClient{client: client, base: t.base, token: t.token}
	for _, q := range queries {
		var res struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := api.send(ctx, &buf, "GET", "/v1/orgs/"+t.searchOrg+"/search?query="+url.QueryEscape(q), nil, http.StatusOK, &res); err != nil {
			return fmt.Errorf("search: %w", err)
		}
		t.hits += len(res.Items)
	}
	if t.hits == 0 {
		return fmt.Errorf("search: no query found anything")
	}
	return nil
}

// execAt runs statement on the database at url.
func execAt(ctx context.Context, url, statement string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, statement)
	return err
}
