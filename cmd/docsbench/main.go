// Command docsbench measures the docsapi server, in one process, on one
// database, in one run. -scenario tree (the default) measures two read paths
// against hand-written baselines (below); -scenario content measures git
// import, merge and search (content.go); -scenario fanout the delivery of
// events to websocket subscribers (fanout.go); -scenario all does those
// three. -scenario mixed (mixed.go) is a bounded run (-mixed-duration, 10
// minutes by default) of concurrent readers and writers whose writes double
// the measured organization's data: is latency flat as the data grows?
// -scenario replica (replica.go) measures GET space and the site tree with
// and without a streaming replica of the database on the same machine
// (DOCSAPI_REPLICA_URLS), and with the replica killed mid-run.
// -scenario citus (citus.go) measures the site tree, GET space and search
// on one PostgreSQL and on a Citus cluster (a coordinator and two workers)
// on the same machine, in the same run. -scenario reader (reader.go)
// measures published pages as a site's visitors read them: a page view of
// a published space of 1,000 pages against net/http's FileServer serving
// the same page's bytes from disk, alternating in one run; the first view
// after an edit; the memory of the reader's cache.
//
//  1. The site tree: one GraphQL query reading a whole site — site →
//     structure → section groups → their child sections → site spaces →
//     space, and the sections outside groups. Reported: latency p50/p99 at
//     concurrency 1, requests per second (and p99) at a fixed concurrency,
//     and SQL queries per request (extensions.stats.sqlQueries, from a
//     server with Debug on). The baseline is a plain net/http + pgx handler
//     that loads the same tree with one query per level filtered by site_id
//     (site; groups; sections; site spaces; spaces joined through
//     site_spaces) and encodes exactly the JSON of the GraphQL response's
//     "data"; the two responses are compared before anything is measured
//     and the run stops if they differ.
//  2. REST GET /v1/spaces/{id}: requests per second and p99 at the fixed
//     concurrency, against a bare net/http + pgx handler that reads one row
//     of spaces by id and encodes it as JSON.
//
// The baselines authenticate nothing; docsapi checks the bearer token on
// every request (answered from its caller cache once warm). Targets (issue
// 18's), printed as ratios with PASS/MISS: tree p50 at most 1.2× the
// baseline's and its throughput at least 0.9×, REST single read at least
// 0.8× the bare handler's throughput. Beside them, the CPU each request
// cost this process (server, baseline and load generator) and PostgreSQL
// (cpu.go). Every scenario's goals are such ratios, to a limit measured in
// the same run: the content scenario's searches against store.Search
// in-process, the fan-out's events against a bare broadcast loop and its
// GET during the bursts against the same GET idle. It is a measurement: a
// completed run exits 0 whatever the figures.
//
// The site (20 groups × 10 sections × 5 site spaces by default, each site
// space publishing its own space) is seeded through the real REST API.
// Everything runs on 127.0.0.1 with real TCP listeners and keep-alive HTTP
// clients; the database is an embedded PostgreSQL in a temporary directory
// (removed at exit), or the server at DATABASE_URL when it is set (the run
// then leaves its user, organization and site behind). Throughput and latency
// are measured against a server without Debug; query counts against a second
// server with Debug on, over the same database.
//
// Run it:
//
//	go run ./cmd/docsbench
//	go run ./cmd/docsbench -groups 2 -sections 2 -site-spaces 2 -duration 2s
//	go run ./cmd/docsbench -concurrency 16 -duration 10s -cpuprofile cpu.out
//	go tool pprof -top cpu.out
//
// With -others N (100,000 by default) the tree scenario is measured twice:
// on the database as the bench seeded it, then after N spaces of other
// organizations, with their site spaces, change requests, comments, replies
// and searchable pages, are added by SQL and analyzed (others.go,
// store/atsize), the size at which plans that scan every tenant's rows show.
// The mixed scenario runs at that size from the start. Then, with -big-org N
// (100,000 by default), the organization of the site seeded first grows by
// SQL to N spaces, and a page of 100 of its spaces (REST and GraphQL, page
// 1 and page 1,000), its site tree and its spaces' totalCount are measured
// against those of the at-size pass's organization of 1,000 (bigorg.go).
//
// With -traces the servers trace every request and export the spans over
// OTLP/HTTP, as docsapi does, to a sink in this process (traces.go): what
// tracing costs.
//
// Flags: -groups, -sections, -site-spaces, -outside (sections outside any
// group), -others, -big-org, -concurrency, -duration (per measurement), -warmup and
// -warmup-requests (warm-up before each measurement: whichever limit comes
// first), -seed-concurrency, -db-max-conns (pool size of the server and of
// the baselines; 20 is the server's default), -cpuprofile; for the content
// scenario -pages, -page-bytes, -merge-pages, -merges, -search-pages,
// -search-requests, -search-others, -import-concurrency; for the fan-out
// scenario -subscribers, -fanout-reps, -burst, -bursts, -delivery-lanes,
// -memprofile; for the mixed scenario -mixed-duration, -mixed-read-rate,
// -mixed-readers, -mixed-writers, -mixed-spaces; for the replica scenario
// -replica-rounds; for the citus scenario -citus-rounds (and -pages,
// -page-bytes: the searched space); for the reader scenario -reader-pages,
// -reader-rounds, -reader-concurrency, -reader-mix, -reader-first-views.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/trace"

	"github.com/docsapi/docsapi/cmd/docsapi/server"
	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/blob"
)

// benchRateLimit is the measured servers' default rate budget: counted,
// never spent.
const benchRateLimit = 1 << 50

type options struct {
	groups, sections, siteSpaces, outside int
	concurrency                           int
	duration, warmup                      time.Duration
	warmupRequests                        int
	seedConcurrency                       int
	dbMaxConns                            int
	cpuProfile, memProfile                string
	// The measured server's rate budget (server.Config.RateLimit): on by
	// default, so that its accounting is measured as production runs it,
	// but with a limit no run reaches (benchLimit): one token reading
	// 15,000 GET space a second, as one client does on a quiet 2-core
	// machine, spends DOCSAPI_RATE_LIMIT's default in a few seconds, and
	// its 429s would end the run.
	rateLimit  int64
	rateWindow time.Duration

	// The content scenario (content.go).
	scenario                                       string
	pages, pageBytes, mergePages, merges           int
	searchPages, searchRequests, importConcurrency int
	searchOthers                                   int

	// Spaces of other organizations added before the tree is measured a
	// second time (others.go); 0: the empty database only.
	others int
	// The spaces the site's organization is grown to after that, to
	// measure a big organization (bigorg.go); 0: not measured.
	bigOrg int

	// The fan-out scenario (fanout.go).
	subscribers, fanoutReps, burst, bursts int
	// deliveryLanes is the server's graph.LiveHub.Lanes (0: its default).
	deliveryLanes int

	// The mixed scenario (mixed.go).
	mixedDuration                                          time.Duration
	mixedReadRate, mixedReaders, mixedWriters, mixedSpaces int

	// The replica scenario (replica.go): passes of each server per read.
	replicaRounds int

	// The citus scenario (citus.go): passes on each database per read.
	citusRounds int

	// The reader scenario (reader.go): pages of the published space,
	// passes of each server per read, their clients, the pages of the mix,
	// edits followed by a first view.
	readerPages, readerRounds, readerConcurrency, readerMix, readerFirstViews int

	// traces: the servers trace every request, exported to a sink
	// (traces.go).
	traces bool
}

func main() {
	var o options
	flag.IntVar(&o.groups, "groups", 20, "section groups in the site")
	flag.IntVar(&o.sections, "sections", 10, "sections per group")
	flag.IntVar(&o.siteSpaces, "site-spaces", 5, "site spaces per section (each publishing its own space)")
	flag.IntVar(&o.outside, "outside", 0, "sections outside any group (with -site-spaces site spaces each)")
	flag.IntVar(&o.concurrency, "concurrency", 8, "concurrent clients of the throughput measurements")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "length of each measurement")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "warm-up before each measurement (at most)")
	flag.IntVar(&o.warmupRequests, "warmup-requests", 200, "warm-up requests before each measurement (at most)")
	flag.IntVar(&o.seedConcurrency, "seed-concurrency", 8, "concurrent requests while seeding")
	flag.IntVar(&o.dbMaxConns, "db-max-conns", 20, "database pool size of the server and of the baselines")
	flag.Int64Var(&o.rateLimit, "rate-limit", benchRateLimit, "rate budget of the measured server: points per window and token, as DOCSAPI_RATE_LIMIT (0: none; the default is counted as in production but never reached)")
	flag.DurationVar(&o.rateWindow, "rate-window", server.DefaultRateWindow, "rate window of the measured server, as DOCSAPI_RATE_WINDOW")
	flag.IntVar(&o.bigOrg, "big-org", 100_000, "tree: spaces the first site's organization is grown to by SQL after the at-size pass, to measure lists, the site tree and totalCount in a big organization against the at-size pass's of 1,000 (bigorg.go); 0: not measured (nor without -others)")
	flag.IntVar(&o.others, "others", 100_000, "spaces of other organizations, with their data, added by SQL then analyzed (others.go): tree measures again at that size, mixed runs at it; 0: none")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the measurement phase to this file (tree; fanout: its events and bursts; replica and citus: one per pass, the path then the pass's number; reader: its rounds; content: its searches)")
	flag.StringVar(&o.memProfile, "memprofile", "", "fanout: write a heap profile (live objects and allocations) to this file after the bursts")
	flag.StringVar(&o.scenario, "scenario", "tree", "what to measure: tree (site tree and GET space), content (import, merge, search), fanout (websocket events), all (those three), mixed (a bounded mixed run doubling the data), replica (GET space and the site tree with and without a streaming replica), citus (the site tree, GET space and search on one PostgreSQL and on a Citus cluster) or reader (published pages against a file server)")
	flag.IntVar(&o.replicaRounds, "replica-rounds", 3, "replica: passes of each server, alternating, per read measured (the median is reported)")
	flag.BoolVar(&o.traces, "traces", false, "trace every request of the servers (the tree, content, fanout and mixed scenarios), exporting the spans over OTLP/HTTP to a sink in this process: what tracing costs")
	flag.IntVar(&o.citusRounds, "citus-rounds", 3, "citus: passes on each database, alternating, per read measured (the median is reported)")
	flag.IntVar(&o.readerPages, "reader-pages", 1000, "reader: pages of the published space, made one createPage after another")
	flag.IntVar(&o.readerRounds, "reader-rounds", 3, "reader: passes of docsapi and of the file server, alternating, per read measured (the median is reported)")
	flag.IntVar(&o.readerConcurrency, "reader-concurrency", 8, "reader: concurrent clients of its passes (the issue's c=8, whatever -concurrency says)")
	flag.IntVar(&o.readerMix, "reader-mix", 200, "reader: distinct pages requested in turn by the mix (at most -reader-pages)")
	flag.IntVar(&o.readerFirstViews, "reader-first-views", 20, "reader: edits of a page (updatePage), each followed by a timed first view, on different pages")
	flag.IntVar(&o.pages, "pages", 2000, "content and citus: pages of the generated repository")
	flag.IntVar(&o.pageBytes, "page-bytes", 2048, "content: markdown bytes per page (about)")
	flag.IntVar(&o.mergePages, "merge-pages", 50, "content: pages a change request edits before its merge")
	flag.IntVar(&o.merges, "merges", 3, "content: change requests merged (median and slowest reported)")
	flag.IntVar(&o.searchPages, "search-pages", 50000, "content: pages in the organization searched (in spaces of -pages pages)")
	flag.IntVar(&o.searchRequests, "search-requests", 300, "content: search queries measured, one at a time")
	flag.IntVar(&o.searchOthers, "search-others", 1, "content: other organizations given a copy of the searched content (by SQL) before search is measured; 0: none")
	flag.IntVar(&o.importConcurrency, "import-concurrency", 2, "content: imports running at once while seeding the search")
	flag.IntVar(&o.subscribers, "subscribers", 5000, "fanout: websocket subscribers of one space, one per connection")
	flag.IntVar(&o.fanoutReps, "fanout-reps", 10, "fanout: single events measured, one after another")
	flag.IntVar(&o.burst, "burst", 20, "fanout: events of a burst, recorded back to back")
	flag.IntVar(&o.bursts, "bursts", 3, "fanout: bursts measured")
	flag.IntVar(&o.deliveryLanes, "delivery-lanes", 0, "fanout: goroutines delivering events at once in the server (0: its default, one fewer than the CPUs, at least one)")
	flag.DurationVar(&o.mixedDuration, "mixed-duration", 10*time.Minute, "mixed: length of the run (its writes double the measured organization's data in that time)")
	flag.IntVar(&o.mixedReadRate, "mixed-read-rate", 40, "mixed: reads per second, all readers together")
	flag.IntVar(&o.mixedReaders, "mixed-readers", 4, "mixed: concurrent readers")
	flag.IntVar(&o.mixedWriters, "mixed-writers", 4, "mixed: concurrent writers")
	flag.IntVar(&o.mixedSpaces, "mixed-spaces", 0, "mixed: spaces added by SQL to the measured organization (with change requests, comments, replies and pages in proportion); 0: -others/100, at least 100")
	flag.Parse()
	if config := os.Getenv(fanoutClientsEnv); config != "" {
		// The fan-out scenario's subscribers (fanout.go).
		if err := runFanoutClients(config); err != nil {
			fmt.Fprintln(os.Stderr, "docsbench subscribers:", err)
			os.Exit(1)
		}
		return
	}
	if o.scenario != "tree" && o.scenario != "content" && o.scenario != "fanout" && o.scenario != "mixed" && o.scenario != "replica" && o.scenario != "citus" && o.scenario != "reader" && o.scenario != "all" {
		fmt.Fprintln(os.Stderr, "docsbench: -scenario is tree, content, fanout, mixed, replica, citus, reader or all (all: tree, content and fanout)")
		os.Exit(2)
	}
	if o.replicaRounds < 1 || o.citusRounds < 1 {
		fmt.Fprintln(os.Stderr, "docsbench: -replica-rounds and -citus-rounds are at least 1")
		os.Exit(2)
	}
	if o.readerPages < 2 || o.readerRounds < 1 || o.readerConcurrency < 1 || o.readerMix < 1 || o.readerFirstViews < 1 {
		fmt.Fprintln(os.Stderr, "docsbench: -reader-pages is at least 2; -reader-rounds, -reader-concurrency, -reader-mix and -reader-first-views are positive")
		os.Exit(2)
	}
	if o.mixedDuration < 10*time.Second || o.mixedReadRate < 1 || o.mixedReaders < 1 || o.mixedWriters < 1 || o.mixedSpaces < 0 || o.others < 0 || o.bigOrg < 0 {
		fmt.Fprintln(os.Stderr, "docsbench: -mixed-duration is at least 10s; mixed rates and clients are positive; -mixed-spaces, -others and -big-org are not negative")
		os.Exit(2)
	}
	if o.subscribers < 1 || o.fanoutReps < 1 || o.burst < 1 || o.bursts < 1 || o.deliveryLanes < 0 {
		fmt.Fprintln(os.Stderr, "docsbench: fan-out sizes must be positive")
		os.Exit(2)
	}
	if o.pages < 1 || o.pageBytes < 200 || o.mergePages < 1 || o.merges < 1 || o.searchPages < 1 || o.searchRequests < 1 || o.searchOthers < 0 || o.importConcurrency < 1 {
		fmt.Fprintln(os.Stderr, "docsbench: content sizes must be positive (-page-bytes at least 200)")
		os.Exit(2)
	}
	if o.groups < 0 || o.sections < 1 || o.siteSpaces < 1 || o.outside < 0 || o.groups*o.sections+o.outside == 0 ||
		o.concurrency < 1 || o.duration <= 0 || o.seedConcurrency < 1 || o.dbMaxConns < 1 {
		fmt.Fprintln(os.Stderr, "docsbench: sizes, concurrency and duration must be positive (the site needs at least one section)")
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	run := run
	switch o.scenario {
	case "replica":
		// Its own primary and replica: none of run's servers.
		run = replicaBench
	case "citus":
		// Its own PostgreSQL and cluster: none of run's servers. Without
		// Citus installed it stops at once, saying so.
		run = citusBench
	case "reader":
		// Its own database and server, alone in the process: the heap
		// it reports is theirs.
		run = readerBench
	}
	err := run(ctx, o, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "docsbench:", err)
		os.Exit(1)
	}
}

// run does the whole benchmark; every resource it starts is released before
// it returns, error or not.
func run(ctx context.Context, o options, out io.Writer) (err error) {
	tree := o.scenario == "tree" || o.scenario == "all"
	content := o.scenario == "content" || o.scenario == "all"
	fanout := o.scenario == "fanout" || o.scenario == "all"
	mixed := o.scenario == "mixed"
	if tree {
		fmt.Fprintf(out, "docsbench: %d groups × %d sections × %d site spaces", o.groups, o.sections, o.siteSpaces)
		if o.outside > 0 {
			fmt.Fprintf(out, " + %d sections outside groups", o.outside)
		}
		fmt.Fprintf(out, "; concurrency %d; %s per measurement\n", o.concurrency, o.duration)
	}
	if content {
		fmt.Fprintf(out, "docsbench content: import of %d pages, merges of %d edited pages, search over %d pages\n",
			o.pages, o.mergePages, o.searchPages)
	}
	// Generated repositories live here; the server's file:// root.
	gitRoot, err := os.MkdirTemp("", "docsbench-git-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(gitRoot)

	// Tracing, with -traces: of the servers and of the store's statements.
	var tracing trace.TracerProvider
	if o.traces {
		provider, sink, err := startTracing(ctx)
		if err != nil {
			return err
		}
		defer sink.stop(provider, out)
		tracing = provider
	}

	// The database.
	connect := store.ConnectOptions{DatabaseURL: os.Getenv("DATABASE_URL"), MaxConns: int32(o.dbMaxConns), Tracing: tracing}
	dbWhere := "DATABASE_URL"
	if connect.DatabaseURL == "" {
		dir, err := os.MkdirTemp("", "docsbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		connect.DataDir = dir
		dbWhere = "embedded, data dir " + dir + " (removed at exit)"
	}
	db, closeDB, pgVersion, err := openDatabase(ctx, connect)
	if err != nil {
		return err
	}
	defer closeDB()

	// The baselines' own pool: same database, same size, pgx's defaults.
	poolCfg, err := pgxpool.ParseConfig(db.Pool.Config().ConnConfig.ConnString())
	if err != nil {
		return err
	}
	poolCfg.MaxConns = int32(o.dbMaxConns)
	basePool, err := pgxpool.NewWithConfig(ctx, poolCfg)
	if err != nil {
		return err
	}
	defer basePool.Close()

	// The servers: docsapi without Debug (timings), docsapi with Debug (query
	// counts), the baselines. Request logs are formatted as in production
	// (text) but written nowhere.
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	blobURL, err := blob.FileURL(filepath.Join(gitRoot, "blobs"))
	if err != nil {
		return err
	}
	var listeners servers
	defer listeners.close()
	plainURL, err := listeners.start(func(url string) (http.Handler, error) {
		return server.New(db, server.Config{PublicURL: url, Log: logger, GitFileRoot: gitRoot,
			BlobURL: blobURL, MaxBodyBytes: 8 << 20, RateLimit: o.rateLimit, RateWindow: o.rateWindow, Tracing: tracing})
	})
	if err != nil {
		return err
	}
	var resolverSrv *server.Server
	debugURL, err := listeners.start(func(url string) (http.Handler, error) {
		s, err := server.New(db, server.Config{PublicURL: url, Debug: true, Log: logger, Tracing: tracing})
		resolverSrv = s
		return s, err
	})
	if err != nil {
		return err
	}
	// The fan-out's server: its limits let one token hold every subscriber
	// and the bench's own (fanout.go).
	var fanoutSrv *server.Server
	fanoutURL, err := listeners.start(func(url string) (http.Handler, error) {
		s, err := server.New(db, server.Config{PublicURL: url, Log: logger, Tracing: tracing,
			SubscriptionsPerToken: o.subscribers + 1, SubscriptionsMax: o.subscribers + 100, DeliveryLanes: o.deliveryLanes})
		fanoutSrv = s
		return s, err
	})
	if err != nil {
		return err
	}
	baseURL, err := listeners.start(func(url string) (http.Handler, error) {
		return newBaseline(basePool, url), nil
	})
	if err != nil {
		return err
	}

	client := newClient(o.concurrency + o.seedConcurrency)
	defer client.CloseIdleConnections()

	// The user; each scenario makes its own organization.
	email := fmt.Sprintf("bench-%d@example.com", time.Now().UnixNano())
	created, err := resolverSrv.Resolver.CreateUser(ctx, email, "Bench")
	if err != nil {
		return err
	}
	api := &apiClient{client: client, base: plainURL, token: created.Token}
	var treeRows, contentRows, fanoutRows []row
	if tree {
		var first *seededSite
		if treeRows, first, err = treeBench(ctx, o, db, api, client, created.Token, plainURL, debugURL, baseURL, out); err != nil {
			return err
		}
		if o.others > 0 {
			added, err := seedOthers(ctx, db, o.others)
			if err != nil {
				return err
			}
			fmt.Fprintln(out, added)
			large, second, err := treeBench(ctx, o, db, api, client, created.Token, plainURL, debugURL, baseURL, out)
			if err != nil {
				return err
			}
			for i := range treeRows {
				treeRows[i].what = "empty: " + treeRows[i].what
			}
			paging, err := pagingBench(ctx, db, api)
			if err != nil {
				return err
			}
			large = append(large, paging...)
			for i := range large {
				large[i].what = fmt.Sprintf("+%dk: ", o.others/1000) + large[i].what
			}
			treeRows = append(treeRows, large...)
			if o.bigOrg > len(first.spaces) {
				// The first site's organization grows; the second's is
				// the small one.
				readerUser, err := resolverSrv.Resolver.CreateUser(ctx, "reader-"+email, "Reader")
				if err != nil {
					return err
				}
				reader := &apiClient{client: client, base: plainURL, token: readerUser.Token}
				big, filled, err := bigOrgBench(ctx, o, db, api, reader, readerUser.User.ID, first, second)
				if err != nil {
					return err
				}
				fmt.Fprintln(out, filled)
				for i := range big {
					big[i].what = fmt.Sprintf("+%dk, big organization: ", o.others/1000) + big[i].what
				}
				treeRows = append(treeRows, big...)
			}
		}
	}
	if content {
		if contentRows, err = contentBench(ctx, db, api, o, gitRoot, out); err != nil {
			return fmt.Errorf("content: %w", err)
		}
	}

	if fanout {
		fanAPI := &apiClient{client: client, base: fanoutURL, token: created.Token}
		if fanoutRows, err = fanoutBench(ctx, o, db, fanoutSrv.Resolver.Live, fanAPI, fanoutURL, out); err != nil {
			return fmt.Errorf("fanout: %w", err)
		}
	}

	if mixed {
		if err := mixedBench(ctx, o, db, api, created.User.ID, out); err != nil {
			return fmt.Errorf("mixed: %w", err)
		}
	}

	fmt.Fprintln(out)
	fmt.Fprintf(out, "machine: %d CPUs (GOMAXPROCS %d), %s; %s; PostgreSQL %s (%s)\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), cpuModel(), runtime.Version(), pgVersion, dbWhere)
	if tree {
		fmt.Fprintf(out, "docsapi: server.Server without Debug for latency and throughput, a second one with Debug for query counts; pgx pool of %d\n", o.dbMaxConns)
		fmt.Fprintf(out, "baselines: plain net/http + pgx, pgx pool of %d (pgx defaults: prepared statements); they authenticate nothing, docsapi checks the bearer token on every request (caller cache)\n", o.dbMaxConns)
		fmt.Fprintf(out, "load: in-process HTTP/1.1 keep-alive clients on 127.0.0.1, sharing the CPUs with the servers and PostgreSQL; warm-up %s or %d requests before each measurement\n\n", o.warmup, o.warmupRequests)
		printTable(out, treeRows)
	}
	if content {
		fmt.Fprintf(out, "\ncontent: one client on 127.0.0.1 sharing the CPUs with the server and PostgreSQL; import and merge absolute, search against its limit (store.Search in-process)\n\n")
		printContentTable(out, contentRows)
	}
	if fanout {
		fmt.Fprintf(out, "\nfan-out: %d websocket clients of docsapi and as many of the bare broadcast on 127.0.0.1, each set in a process of its own, sharing the CPUs with the server and PostgreSQL; events recorded as changes record them (one transaction each), timed from before the insert to the last arrival\n\n", o.subscribers)
		printFanoutTable(out, fanoutRows)
	}
	return nil
}

// treeBench seeds a site and measures the site tree and GET space against
// their baselines; it returns the rows and the site.
func treeBench(ctx context.Context, o options, db *store.DB, api *apiClient, client *http.Client, token, plainURL, debugURL, baseURL string, out io.Writer) ([]row, *seededSite, error) {
	seedStart := time.Now()
	site, err := seed(ctx, api, o)
	if err != nil {
		return nil, nil, fmt.Errorf("seed: %w", err)
	}
	fmt.Fprintf(out, "seeded through the REST API in %s: %d spaces, %d sections, %d site spaces\n",
		time.Since(seedStart).Round(time.Millisecond), len(site.spaces), o.groups*o.sections+o.outside, len(site.spaces))
	// Fresh statistics, as autovacuum would gather within a minute of the
	// seeding: without them PostgreSQL plans for near-empty tables (nested
	// loops over 1,000 rows), which measures the planner, not the servers.
	if _, err := db.Pool.Exec(ctx, "ANALYZE"); err != nil {
		return nil, nil, err
	}

	b := &bench{o: o, client: client, site: site, token: token,
		plainURL: plainURL, debugURL: debugURL, baseURL: baseURL}
	if err := b.prepare(ctx); err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(out, "site tree: GraphQL and baseline responses are %s (%d bytes of data; %d bytes with the GraphQL envelope)\n",
		b.treeMatch, len(b.treeBaseBody), b.treeGraphQLBytes)
	fmt.Fprintf(out, "GET /v1/spaces/{id}: %d bytes (docsapi), %d bytes (bare); %d spaces requested in turn\n",
		b.spaceBytes, b.spaceBaseBytes, len(site.spaces))

	stopProfile, err := startCPUProfile(o.cpuProfile)
	if err != nil {
		return nil, nil, err
	}
	defer stopProfile()
	rows, err := b.measure(ctx)
	return rows, site, err
}

// startCPUProfile writes a CPU profile to path (none when it is empty)
// until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// servers are the HTTP servers of a run, on loopback listeners.
type servers struct{ list []*http.Server }

// start listens on a free loopback port and serves the handler build makes
// for the listener's URL.
func (s *servers) start(build func(url string) (http.Handler, error)) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	url := "http://" + ln.Addr().String()
	h, err := build(url)
	if err != nil {
		ln.Close()
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	s.list = append(s.list, srv)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "docsbench: serve:", err)
		}
	}()
	return url, nil
}

func (s *servers) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range s.list {
		_ = srv.Shutdown(ctx)
	}
}

// newClient is a keep-alive HTTP client with room for conns idle
// connections per host.
func newClient(conns int) *http.Client {
	return &http.Client{
		Timeout: time.Minute,
		Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        0, // no overall limit
			MaxIdleConnsPerHost: conns,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
	}
}

// cpuModel is the CPU's model name from /proc/cpuinfo, when there is one.
func cpuModel() string {
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// openDatabase connects the bench's database (embedded, or at
// DATABASE_URL), migrates it, and says which PostgreSQL it is.
func openDatabase(ctx context.Context, connect store.ConnectOptions) (db *store.DB, closeDB func(), pgVersion string, err error) {
	db, closeDB, err = store.Connect(ctx, connect)
	if err != nil {
		return nil, nil, "", fmt.Errorf("connect: %w", err)
	}
	if err = db.Migrate(ctx, nil); err == nil {
		err = db.Pool.QueryRow(ctx, "SHOW server_version").Scan(&pgVersion)
	}
	if err != nil {
		closeDB()
		return nil, nil, "", err
	}
	return db, closeDB, pgVersion, nil
}
