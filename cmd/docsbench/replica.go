package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi/cmd/docsapi/server"
	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/blob"
	"github.com/docsapi/docsapi/store/pgserver"
)

// The replica scenario (-scenario replica): GET /v1/spaces/{id} and the
// site tree, served by a docsapi reading on the primary alone and by one
// reading on a streaming replica of it (DOCSAPI_REPLICA_URLS), both on
// this machine. One machine shows what routing costs, not what a replica
// gains (the replica's PostgreSQL shares the same CPUs): the ratio of the
// two throughputs is the figure (issue 28's goal: at least 0.95 for GET
// space). Passes alternate between the two servers, -replica-rounds times,
// and each figure is the median of its passes, so that drift of the
// machine (another process, the page cache) falls on both alike.
//
// Then the replica is killed in the middle of a pass on the replicated
// server: the pass fails on its first failed request (load's rule), so a
// completed pass is zero failed requests.
//
// The primary and its replica are embedded servers in temporary
// directories (pgserver, the standby copied by pg_basebackup -R), durable
// as docsapi runs its own; DATABASE_URL is not used. The reader is a user
// who wrote nothing through the replicated server: all its reads may go to
// the replica (the data was seeded through the other server, and the
// replica has replayed it before anything is measured).
func replicaBench(ctx context.Context, o options, out io.Writer) (err error) {
	fmt.Fprintf(out, "docsbench replica: %d groups × %d sections × %d site spaces; concurrency %d; %s per pass, %d rounds\n",
		o.groups, o.sections, o.siteSpaces, o.concurrency, o.duration, o.replicaRounds)
	// Three directories of their own: pgserver hands a data directory to
	// the server's OS user, who must be able to reach it.
	var dirs [3]string
	for i := range dirs {
		if dirs[i], err = os.MkdirTemp("", "docsbench-replica-"); err != nil {
			return err
		}
		defer os.RemoveAll(dirs[i])
	}
	primaryDir, standbyDir, blobDir := dirs[0], dirs[1], dirs[2]
	primary, err := pgserver.Start(ctx, pgserver.Options{DataDir: primaryDir, Durable: true, Replication: true})
	if err != nil {
		return err
	}
	defer primary.Stop()
	if err := createDatabase(ctx, primary.URL("postgres"), "docsapi"); err != nil {
		return err
	}
	pool := store.Options{MaxConns: int32(o.dbMaxConns), StatementTimeout: store.DefaultStatementTimeout}
	plainDB, err := store.OpenWith(ctx, primary.URL("docsapi"), pool)
	if err != nil {
		return err
	}
	defer plainDB.Close()
	if err := plainDB.Migrate(ctx, nil); err != nil {
		return err
	}
	standby, err := pgserver.StartStandby(ctx, primary, pgserver.Options{DataDir: standbyDir, Durable: true})
	if err != nil {
		return err
	}
	defer standby.Stop()
	replicatedDB, err := store.OpenWith(ctx, primary.URL("docsapi"), pool)
	if err != nil {
		return err
	}
	defer replicatedDB.Close()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := replicatedDB.AttachReplicas(ctx, []string{standby.URL("docsapi")}, store.ReplicaOptions{Pool: pool, Log: logger}); err != nil {
		return err
	}

	blobURL, err := blob.FileURL(blobDir)
	if err != nil {
		return err
	}
	var listeners servers
	defer listeners.close()
	serve := func(db *store.DB) (string, *server.Server, error) {
		var srv *server.Server
		url, err := listeners.start(func(url string) (http.Handler, error) {
			s, err := server.New(db, server.Config{PublicURL: url, Log: logger, BlobURL: blobURL,
				RateLimit: o.rateLimit, RateWindow: o.rateWindow})
			srv = s
			return s, err
		})
		return url, srv, err
	}
	plainURL, plainSrv, err := serve(plainDB)
	if err != nil {
		return err
	}
	replicatedURL, _, err := serve(replicatedDB)
	if err != nil {
		return err
	}
	client := newClient(o.concurrency + o.seedConcurrency)
	defer client.CloseIdleConnections()
	created, err := plainSrv.Resolver.CreateUser(ctx, fmt.Sprintf("bench-%d@example.com", time.Now().UnixNano()), "Bench")
	if err != nil {
		return err
	}
	seedStart := time.Now()
	site, err := seed(ctx, &apiClient{client: client, base: plainURL, token: created.Token}, o)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	if _, err := plainDB.Pool.Exec(ctx, "ANALYZE"); err != nil {
		return err
	}
	if err := waitReplayed(ctx, primary.URL("docsapi"), standby.URL("docsapi")); err != nil {
		return err
	}
	fmt.Fprintf(out, "seeded through the REST API in %s: %d spaces; the replica has replayed it\n",
		time.Since(seedStart).Round(time.Millisecond), len(site.spaces))

	treeBody := fmt.Appendf(nil, `{"query":%q,"variables":{"organizationId":%q,"siteId":%q}}`, treeQuery, site.org, site.id)
	space := func(base string) requester {
		return httpRequester(client, "GET", func(i int) string { return base + "/v1/spaces/" + site.spaces[i%len(site.spaces)] },
			nil, created.Token, okStatus)
	}
	tree := func(base string) requester {
		return httpRequester(client, "POST", func(int) string { return base + "/graphql" }, treeBody, created.Token, gqlOK)
	}
	passes := 0
	pass := func(name string, send requester) (loadResult, error) {
		if _, err := load(ctx, o.concurrency, o.warmup, o.warmupRequests, send); err != nil {
			return loadResult{}, fmt.Errorf("%s (warm-up): %w", name, err)
		}
		// With -cpuprofile, each pass has a profile of its own (the
		// path, then the pass's number): pprof merges those it is given,
		// so the passes of one server can be read against the other's.
		passes++
		profile := ""
		if o.cpuProfile != "" {
			profile = fmt.Sprintf("%s.%d", o.cpuProfile, passes)
			fmt.Fprintf(out, "pass %d: %s (profile %s)\n", passes, name, profile)
		}
		stopProfile, err := startCPUProfile(profile)
		if err != nil {
			return loadResult{}, err
		}
		defer stopProfile()
		// Only these two servers' PostgreSQL CPU: the machine may run others.
		postmasters := []int{primary.PID(), standby.PID()}
		before := readCPUOf(postmasters)
		res, err := load(ctx, o.concurrency, o.duration, 0, send)
		if err != nil {
			return loadResult{}, fmt.Errorf("%s: %w", name, err)
		}
		res.cpuSelf, res.cpuPostgres, res.cpuOK = cpuPerRequest(before, readCPUOf(postmasters), res.n)
		return res, nil
	}

	var rows []replicaRow
	for _, read := range []struct {
		name string
		send func(base string) requester
	}{{"GET /v1/spaces/{id}", space}, {"site tree (GraphQL)", tree}} {
		var plain, replicated []loadResult
		statsBefore, _ := replicatedDB.ReplicaStats()
		for range o.replicaRounds {
			p, err := pass(read.name+" (primary only)", read.send(plainURL))
			if err != nil {
				return err
			}
			r, err := pass(read.name+" (with a replica)", read.send(replicatedURL))
			if err != nil {
				return err
			}
			plain, replicated = append(plain, p), append(replicated, r)
		}
		statsAfter, _ := replicatedDB.ReplicaStats()
		p, r := medianPass(plain), medianPass(replicated)
		rows = append(rows,
			replicaRow{fmt.Sprintf("%s  throughput, concurrency %d (median of %d)", read.name, o.concurrency, o.replicaRounds),
				fmtRPS(p.rps()), fmtRPS(r.rps()), fmtRatio(ratio(r.rps(), p.rps()))},
			replicaRow{fmt.Sprintf("%s  p99 latency, concurrency %d", read.name, o.concurrency),
				fmtMs(p.percentile(99)), fmtMs(r.percentile(99)), fmtRatio(ratio(ms(r.percentile(99)), ms(p.percentile(99))))},
			replicaRow{read.name + "  CPU per request: process + PostgreSQL (primary and replica)", fmtCPU(p), fmtCPU(r),
				fmtRatio(ratio(float64(r.cpu()), float64(p.cpu())))},
			replicaRow{read.name + "  reads on the replica (of the replicated server's routed reads, warm-ups included)", "",
				replicaShare(statsBefore, statsAfter), ""})
	}

	// The replica killed a third of the way into a pass.
	statsBefore, _ := replicatedDB.ReplicaStats()
	killed := time.AfterFunc(o.duration/3, standby.Kill)
	down, err := pass("GET /v1/spaces/{id} with the replica killed mid-pass", space(replicatedURL))
	killed.Stop()
	if err != nil {
		return fmt.Errorf("a request failed when the replica was killed: %w", err)
	}
	statsAfter, _ := replicatedDB.ReplicaStats()
	plainAfter, err := pass("GET /v1/spaces/{id} (primary only, after)", space(plainURL))
	if err != nil {
		return err
	}
	rows = append(rows,
		replicaRow{"GET /v1/spaces/{id}  replica killed a third into the pass: requests, failed", "",
			fmt.Sprintf("%d, 0 failed", down.n), ""},
		replicaRow{"GET /v1/spaces/{id}  throughput over that pass / primary only right after", fmtRPS(plainAfter.rps()), fmtRPS(down.rps()),
			fmtRatio(ratio(down.rps(), plainAfter.rps()))},
		replicaRow{"GET /v1/spaces/{id}  that pass's reads: on the replica, fallbacks to the primary by reason", "",
			fmt.Sprintf("%s; %s", replicaShare(statsBefore, statsAfter), fallbackCounts(statsBefore, statsAfter)), ""})

	var pgVersion string
	if err := plainDB.Pool.QueryRow(ctx, "SHOW server_version").Scan(&pgVersion); err != nil {
		return err
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "measurement\tprimary only\twith a replica\tratio")
	fmt.Fprintln(tw, "-----------\t------------\t--------------\t-----")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.what, r.primary, r.replicated, r.ratio)
	}
	tw.Flush()
	fmt.Fprintf(out, "\nratio = with a replica / primary only. Both servers in this process, on one primary; the replica is a second PostgreSQL on the same %d CPUs (GOMAXPROCS %d), %s; %s; PostgreSQL %s\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), cpuModel(), runtime.Version(), pgVersion)
	return nil
}

// replicaRow is a line of the replica scenario's table.
type replicaRow struct{ what, primary, replicated, ratio string }

// medianPass is the pass of median throughput.
func medianPass(passes []loadResult) loadResult {
	sorted := slices.Clone(passes)
	slices.SortFunc(sorted, func(a, b loadResult) int {
		switch {
		case a.rps() < b.rps():
			return -1
		case a.rps() > b.rps():
			return 1
		}
		return 0
	})
	return sorted[len(sorted)/2]
}

// replicaShare is the share of routed reads the replica answered between
// two readings.
func replicaShare(before, after store.ReplicaStats) string {
	replica := after.Replicas[0].Reads - before.Replicas[0].Reads
	primary := after.PrimaryReads - before.PrimaryReads
	if replica+primary == 0 {
		return "no reads"
	}
	return fmt.Sprintf("%.1f %% of %d", 100*float64(replica)/float64(replica+primary), replica+primary)
}

// fallbackCounts lists the reasons reads went to the primary between two
// readings.
func fallbackCounts(before, after store.ReplicaStats) string {
	var parts []string
	for _, why := range []string{"down", "read_failed", "lagging", "behind_caller", "request_wrote"} {
		if n := after.Fallbacks[why] - before.Fallbacks[why]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", why, n))
		}
	}
	if len(parts) == 0 {
		return "no fallback"
	}
	return fmt.Sprint(parts)
}

// createDatabase creates database name on the server at adminURL.
func createDatabase(ctx context.Context, adminURL, name string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	return err
}

// waitReplayed waits until the standby has replayed what the primary had
// written when it was called.
func waitReplayed(ctx context.Context, primaryURL, standbyURL string) error {
	primary, err := pgx.Connect(ctx, primaryURL)
	if err != nil {
		return err
	}
	defer primary.Close(ctx)
	var at string
	if err := primary.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&at); err != nil {
		return err
	}
	standby, err := pgx.Connect(ctx, standbyURL)
	if err != nil {
		return err
	}
	defer standby.Close(ctx)
	deadline := time.Now().Add(time.Minute)
	for {
		var done bool
		if err := standby.QueryRow(ctx, "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", at).Scan(&done); err != nil {
			return err
		}
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the replica has not replayed %s after a minute", at)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
