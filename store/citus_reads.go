package store

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/tracing"
)

// On a Citus cluster every statement sent to the coordinator is planned
// there, run on the worker that holds the shards it names, and its rows
// passed back through the coordinator: a hop that costs each statement
// about 0.1 ms and each row of its answer about a microsecond of both
// servers' time (the site tree's thousand site spaces and spaces cost 2.4
// times what one PostgreSQL does, docs/scaling.md). Since Citus 11 every
// worker holds the cluster's metadata and plans queries itself ("query
// from any node"), and a query of shards the worker holds runs there
// without a second connection (local execution).
//
// So a read that names one organization and runs outside a transaction
// goes straight to the worker holding that organization's shard group:
// the store function that reads says whose rows it reads
// (inOrganization), and the pool is chosen when the statement runs
// (workerSet.poolFor). Which worker holds an organization is asked of the
// coordinator once (its metadata: no worker is asked) and kept for a
// while; a worker that holds no longer (a shard moved) still answers
// right, since it plans the query as the coordinator would, and the next
// lookup finds the new place.
//
// Nothing else changes: writes, transactions, reads across organizations
// and the reads of a worker that does not answer its checks go to the
// coordinator as before. A worker's answer is as fresh as the
// coordinator's, which asks that same worker: there is no lag to account
// for (unlike replicas). The workers are reached as the coordinator
// lists them (pg_dist_node), with DATABASE_URL's role, password and
// options: a worker that refuses them, or that this process cannot reach,
// is left out, logged, until a check finds it.

// workerSet is the Citus workers a DB reads on.
type workerSet struct {
	coordinator *DB
	url         *url.URL // DATABASE_URL: the workers' role and options
	opts        Options
	log         *slog.Logger
	checkEvery  time.Duration

	mu    sync.RWMutex
	nodes map[string]*worker // by host:port, as pg_dist_node names them

	// placements: the worker (host:port) that holds an organization's
	// shard group, and when that was asked; "" for the coordinator itself.
	placements *lru.Cache[string, placement]

	coordinatorReads atomic.Int64

	stop context.CancelFunc
	done chan struct{}
}

type placement struct {
	node  string
	asked time.Time
}

// worker is one Citus worker: its pool, and what its last check found.
type worker struct {
	name  string
	pool  *pgxpool.Pool
	sql   *sql.DB
	up    atomic.Bool
	reads atomic.Int64

	mu      sync.Mutex
	problem string // why it takes no reads ("" while up)
}

// DefaultWorkerCheckEvery is how often the workers are checked, and the
// cluster's list of workers read again.
const DefaultWorkerCheckEvery = time.Second

// placementTTL is how long the worker of an organization is trusted:
// shards move only when an operator rebalances the cluster, and a read
// sent to the former holder is still answered right.
const placementTTL = 5 * time.Minute

// placementEntries bounds the organizations whose worker is remembered.
const placementEntries = 100_000

// workerConnectTimeout bounds a connection attempt to a worker.
const workerConnectTimeout = 2 * time.Second

// attachWorkers makes db read on the workers of the Citus cluster its
// database is the coordinator of, when it is one whose workers hold the
// metadata (Citus 11 and later do by default); nothing otherwise. It
// checks the workers once, then every checkEvery in the background until
// db is closed.
func (db *DB) attachWorkers(ctx context.Context, rawURL string, opts Options, checkEvery time.Duration, log *slog.Logger) error {
	ok, err := HasCitus(ctx, db)
	if err != nil || !ok {
		return err
	}
	db.dir.betweenNodes = true
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		// A key=value connection string: the workers cannot be named in
		// it the same way; the coordinator takes every read.
		log.Info("citus: DATABASE_URL is not a postgres:// URL; reads go through the coordinator")
		return nil
	}
	placements, err := lru.New[string, placement](placementEntries)
	if err != nil {
		return err
	}
	set := &workerSet{coordinator: db, url: u, opts: opts, log: log, checkEvery: checkEvery,
		nodes: map[string]*worker{}, placements: placements, done: make(chan struct{})}
	set.check(ctx)
	runCtx, stop := context.WithCancel(context.Background())
	set.stop = stop
	go set.run(runCtx)
	db.workers = set
	return nil
}

func (s *workerSet) run(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(s.checkEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.check(ctx)
		}
	}
}

func (s *workerSet) close() {
	s.stop()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.nodes {
		w.sql.Close()
		w.pool.Close()
	}
	s.nodes = nil
}

// check reads the cluster's active primary workers that hold the
// metadata, opens a pool for each new one, and checks each: up when it
// answers, as a node of this database that plans distributed queries.
func (s *workerSet) check(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	var listed []struct {
		Name string `bun:"nodename"`
		Port int    `bun:"nodeport"`
	}
	err := s.coordinator.NewRaw(`SELECT nodename, nodeport FROM pg_dist_node
		WHERE groupid <> 0 AND noderole = 'primary' AND isactive AND hasmetadata AND metadatasynced`).Scan(ctx, &listed)
	if err != nil {
		if ctx.Err() == nil && !IsUnavailable(err) {
			s.log.Warn("citus: cannot list the workers; reads go through the coordinator", "err", err)
		}
		return
	}
	for _, n := range listed {
		name := net.JoinHostPort(n.Name, strconv.Itoa(n.Port))
		s.mu.RLock()
		w := s.nodes[name]
		s.mu.RUnlock()
		if w == nil {
			if w, err = s.open(name); err != nil {
				s.log.Warn("citus: cannot make a pool for a worker; its reads go through the coordinator", "worker", name, "err", err)
				continue
			}
			s.mu.Lock()
			s.nodes[name] = w
			s.mu.Unlock()
		}
		w.checkOn(ctx, s.log)
	}
}

// open makes the pool of a worker: DATABASE_URL with the worker's host
// and port.
func (s *workerSet) open(name string) (*worker, error) {
	u := *s.url
	u.Host = name
	cfg, err := poolConfig(u.String(), s.opts, poolWorker)
	if err != nil {
		return nil, err
	}
	if cfg.ConnConfig.ConnectTimeout == 0 || cfg.ConnConfig.ConnectTimeout > workerConnectTimeout {
		cfg.ConnConfig.ConnectTimeout = workerConnectTimeout
	}
	// The reads' prepared statements are planned anew at each execution.
	// Their generic plans are Citus's own, which it copies at each
	// execution and whose shard query it plans again for local execution
	// (CacheLocalPlanForShardQuery, a cache lost with the copy): a primary
	// key read took twice as long as planned with its values (0.19 ms
	// against 0.10 ms; one PostgreSQL, 0.05 ms).
	cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	// Connected to lazily: a worker down now is no error here.
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	w := &worker{name: name, pool: pool, problem: "not checked yet"}
	w.sql = stdlib.OpenDBFromPool(pool)
	return w, nil
}

// checkOn asks the worker whether it is a node of this cluster's
// database that can plan distributed queries (its metadata synced).
func (w *worker) checkOn(ctx context.Context, log *slog.Logger) {
	var ready bool
	err := w.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')
		AND citus_is_coordinator() IS FALSE AND EXISTS (SELECT 1 FROM pg_dist_partition LIMIT 1)`).Scan(&ready)
	problem := ""
	switch {
	case err != nil:
		problem = err.Error()
	case !ready:
		problem = "it holds no metadata of the distributed tables"
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case problem == "" && !w.up.Load():
		log.Info("citus: reads of its organizations go to the worker", "worker", w.name)
	case problem != "" && (w.up.Load() || w.problem != problem):
		log.Warn("citus: the worker takes no reads; they go through the coordinator", "worker", w.name, "reason", problem)
	}
	w.problem = problem
	w.up.Store(problem == "")
}

// setDown takes w out of the reads until its next check finds it up.
func (s *workerSet) setDown(w *worker, why string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.up.Load() {
		s.log.Warn("citus: the worker takes no reads; they go through the coordinator", "worker", w.name, "reason", why)
	}
	w.up.Store(false)
	w.problem = why
}

// workerOf is the worker that takes ctx's reads (inOrganization), if it
// is up; nil for the coordinator.
func (s *workerSet) workerOf(ctx context.Context) *worker {
	org, _ := ctx.Value(organizationKey{}).(string)
	if org == "" {
		return nil
	}
	p, ok := s.placements.Get(org)
	if !ok || time.Since(p.asked) > placementTTL {
		node, err := s.lookUp(ctx, org)
		if err != nil {
			// The read goes through the coordinator, which says what is
			// wrong if anything is.
			return nil
		}
		p = placement{node: node, asked: time.Now()}
		s.placements.Add(org, p)
	}
	if p.node == "" {
		return nil
	}
	s.mu.RLock()
	w := s.nodes[p.node]
	s.mu.RUnlock()
	if w == nil || !w.up.Load() {
		return nil
	}
	return w
}

// lookUp asks the coordinator's metadata which worker holds org's shard
// group ("" when it is the coordinator, or none is known).
func (s *workerSet) lookUp(ctx context.Context, org string) (string, error) {
	var node string
	err := s.coordinator.Pool.QueryRow(ctx, `SELECT coalesce((SELECT n.nodename || ':' || n.nodeport
		FROM pg_dist_placement p JOIN pg_dist_node n ON n.groupid = p.groupid
		WHERE p.shardid = get_shard_id_for_distribution_column('spaces', $1::text)
		  AND n.groupid <> 0 AND n.noderole = 'primary' AND n.isactive
		LIMIT 1), '')`, org).Scan(&node)
	if err != nil {
		return "", err
	}
	if host, port, err := net.SplitHostPort(node); err == nil {
		node = net.JoinHostPort(host, port) // as check names it (IPv6 in brackets)
	}
	return node, nil
}

type organizationKey struct{}

// inOrganization returns ctx whose reads read only org's rows: on a Citus
// cluster, those outside a transaction go to the worker holding org's
// shard group. Store functions that read one organization call it; a
// wrong organization costs a hop (the worker passes the read on), never
// a wrong answer. The span of the request (or job) is told whose data it
// read.
func inOrganization(ctx context.Context, org string) context.Context {
	tracing.NoteOrganization(ctx, org)
	return context.WithValue(ctx, organizationKey{}, org)
}

// workerRead runs read, a read of the pgx path (read.go) that starts
// afresh each time it is called, on the worker that holds ctx's
// organization, or on the coordinator. A worker that fails it leaves it to
// the coordinator: a connection that fails takes the worker out until its
// next check, and a statement the worker refuses (what it cannot plan
// from a worker) is logged.
func (db *DB) workerRead(ctx context.Context, read func(context.Context, *pgxpool.Pool) error) error {
	s := db.workers
	w := s.workerOf(ctx)
	if w != nil {
		err := read(ctx, w.pool)
		if err == nil {
			w.reads.Add(1)
			return nil
		}
		if ctx.Err() != nil || !s.failed(w, err) {
			return err
		}
	}
	s.coordinatorReads.Add(1)
	return read(ctx, db.Pool)
}

// failed handles a read w failed with err, and reports whether the
// coordinator is to run it: always but for a statement that failed for
// what it is (a query cancelled by its timeout, bad input), which the
// coordinator would fail alike.
func (s *workerSet) failed(w *worker, err error) bool {
	if IsUnavailable(err) {
		s.setDown(w, "a read failed: "+err.Error())
		return true
	}
	var pgErr interface{ SQLState() string }
	if errors.As(err, &pgErr) {
		switch pgErr.SQLState()[:2] {
		case "22", "57", "40":
			// Data, cancelled, serialization: the statement's own.
			return false
		}
	}
	s.log.Warn("citus: a read failed on a worker; it runs again on the coordinator", "worker", w.name, "err", err)
	return true
}

// workerResolver is bun's connection resolver on a Citus coordinator: the
// statements bun runs outside a transaction under inOrganization run on
// the organization's worker, the others on the coordinator as ever.
type workerResolver struct{ set *workerSet }

func (r workerResolver) ResolveConn(ctx context.Context, _ bun.Query) bun.IConn {
	if w := r.set.workerOf(ctx); w != nil {
		return workerConn{r.set, w}
	}
	return nil
}

func (r workerResolver) Close() error {
	r.set.close()
	return nil
}

// workerConn is bun's connection for a statement under inOrganization:
// the worker's (workerResolver).
type workerConn struct {
	set *workerSet
	w   *worker
}

func (c workerConn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if !isReadStatement(query) {
		// An INSERT ... RETURNING, say: writes are the coordinator's.
		return c.set.coordinator.DB.DB.QueryContext(ctx, query, args...)
	}
	rows, err := c.w.sql.QueryContext(ctx, query, args...)
	if err == nil {
		c.w.reads.Add(1)
		return rows, nil
	}
	if ctx.Err() != nil || !c.set.failed(c.w, err) {
		return nil, err
	}
	c.set.coordinatorReads.Add(1)
	return c.set.coordinator.DB.DB.QueryContext(ctx, query, args...)
}

func (c workerConn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if !isReadStatement(query) {
		return c.set.coordinator.DB.DB.QueryRowContext(ctx, query, args...)
	}
	row := c.w.sql.QueryRowContext(ctx, query, args...)
	err := row.Err()
	if err == nil {
		c.w.reads.Add(1)
		return row
	}
	if ctx.Err() != nil || !c.set.failed(c.w, err) {
		return row
	}
	c.set.coordinatorReads.Add(1)
	return c.set.coordinator.DB.DB.QueryRowContext(ctx, query, args...)
}

// ExecContext: a statement that changes something goes to the
// coordinator (a store function under inOrganization writes nothing, but
// should one, its write is the coordinator's to run).
func (c workerConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return c.set.coordinator.DB.DB.ExecContext(ctx, query, args...)
}

// WorkerStats is what /metrics reports of the reads on Citus workers.
type WorkerStats struct {
	// CoordinatorReads are the reads of one organization the coordinator
	// ran (its worker down, unknown, or the coordinator itself).
	CoordinatorReads int64
	Workers          []WorkerState
}

// WorkerState is one worker as last checked, and the reads it answered.
type WorkerState struct {
	Name  string
	Up    bool
	Reads int64
}

// WorkerStats reports the reads on workers; ok false but on a Citus
// coordinator.
func (db *DB) WorkerStats() (stats WorkerStats, ok bool) {
	s := db.workers
	if s == nil {
		return stats, false
	}
	stats.CoordinatorReads = s.coordinatorReads.Load()
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, w := range s.nodes {
		stats.Workers = append(stats.Workers, WorkerState{Name: w.name, Up: w.up.Load(), Reads: w.reads.Load()})
	}
	return stats, true
}

// ReadsOnWorkers reports whether db reads on the workers of a Citus
// cluster.
func (db *DB) ReadsOnWorkers() bool { return db.workers != nil }

var _ bun.IConn = workerConn{}
