package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
)

// Streaming replicas of the primary (DOCSAPI_REPLICA_URLS) take the reads of
// read-only requests: GraphQL queries and REST GETs (replica_route.go says
// which reads, and how a caller's own writes stay visible to it). This file
// is the replicas themselves: their pools, and the check that runs in the
// background and tells, for each, whether it is up and how far it has
// replayed the primary's write-ahead log. Requests never wait on a check:
// they read what the last one found.

// DefaultReplicaMaxLag is how far behind the primary a replica may be and
// still take reads (DOCSAPI_REPLICA_MAX_LAG).
const DefaultReplicaMaxLag = 10 * time.Second

// DefaultReplicaCheckEvery is how often the replicas are checked.
const DefaultReplicaCheckEvery = 100 * time.Millisecond

// ReplicaOptions tune AttachReplicas.
type ReplicaOptions struct {
	// MaxLag: a replica further behind the primary takes no reads
	// (DefaultReplicaMaxLag when zero).
	MaxLag time.Duration
	// Pool is each replica's pool: its size and statement timeout.
	Pool Options
	// CheckEvery spaces the checks (DefaultReplicaCheckEvery when zero).
	CheckEvery time.Duration
	Log        *slog.Logger
}

// replicaConnectTimeout bounds a connection attempt to a replica: a replica
// whose host stopped answering must not hold a read for longer (the read
// then goes to the primary).
const replicaConnectTimeout = 2 * time.Second

// LSN is a position in PostgreSQL's write-ahead log (pg_lsn): where the
// primary was after a write, or how far a replica has replayed.
type LSN uint64

// ParseLSN reads PostgreSQL's text form of an LSN ("16/B374D848").
func ParseLSN(s string) (LSN, error) {
	hi, lo, ok := strings.Cut(s, "/")
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if !ok || err1 != nil || err2 != nil || strings.HasPrefix(hi, "+") || strings.HasPrefix(lo, "+") {
		return 0, fmt.Errorf("%q is not a WAL position (two hexadecimal numbers of up to 8 digits, as 16/B374D848)", s)
	}
	return LSN(h<<32 | l), nil
}

func (l LSN) String() string { return fmt.Sprintf("%X/%X", uint64(l)>>32, uint32(l)) }

// replica is one streaming replica: its pool (pgx, for the hot reads), the
// same pool behind database/sql (bun's reads), and what its last check
// found.
type replica struct {
	name string // host:port, for metrics and logs (no password)
	pool *pgxpool.Pool
	sql  *sql.DB

	up       atomic.Bool
	replayed atomic.Uint64 // LSN
	lag      atomic.Int64  // time.Duration
	reads    atomic.Int64  // reads it answered
	// alive ends when the replica is taken out of routing, and is made
	// anew when it is back: reads still on it then give up (readContext)
	// rather than wait for a replica gone silent until TCP gives up.
	alive atomic.Pointer[liveness]

	// resumeAt is, once a replica that took reads went down, the
	// primary's position it must replay before it takes reads again (0:
	// none, or not yet set: the first check that finds it back sets it).
	// A standby restarted after a crash may come back consistent at a
	// point older than the one it answered at before (what it had replayed
	// was in memory only); reads there would go back in time, a page
	// created a second ago missing. The primary's position at a check
	// after it went down is past anything it answered before.
	resumeAt atomic.Uint64
	wasUp    atomic.Bool

	// mu guards what only the checker and the read failures write.
	mu       sync.Mutex
	problem  string // why it is down ("" while up)
	verified bool   // a replica of the primary's cluster, on its database
}

// replicaSet is the replicas of a DB and what routing reads to them
// needs: the primary's positions, the callers' last writes, the counters.
type replicaSet struct {
	primary    *DB
	list       []*replica
	maxLag     time.Duration
	checkEvery time.Duration
	log        *slog.Logger

	next      atomic.Uint32 // round robin over the eligible replicas
	history   lsnHistory
	positions callerPositions

	primaryReads atomic.Int64
	fallbacks    [fallbackReasons]atomic.Int64

	stop context.CancelFunc
	done chan struct{}
}

// AttachReplicas makes db route the reads of read-only requests to the
// streaming replicas at urls (replicas of db's database). It checks them
// once before returning, then every CheckEvery in the background until db
// is closed. A replica that cannot be reached is not an error: it is down
// (logged) until a check finds it up. It must be called before db serves
// anything.
func (db *DB) AttachReplicas(ctx context.Context, urls []string, opts ReplicaOptions) error {
	if len(urls) == 0 {
		return nil
	}
	if db.replicas != nil {
		return errors.New("store: replicas are already attached")
	}
	if db.workers != nil {
		// A coordinator's replica would plan reads on the workers'
		// primaries anyway, and the workers' own replicas are Citus's
		// configuration (docs/scaling.md).
		return errors.New("store: DOCSAPI_REPLICA_URLS names replicas of one PostgreSQL; DATABASE_URL is a Citus coordinator, whose reads go to its workers")
	}
	if opts.MaxLag <= 0 {
		opts.MaxLag = DefaultReplicaMaxLag
	}
	if opts.CheckEvery <= 0 {
		opts.CheckEvery = DefaultReplicaCheckEvery
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.Pool.Tracing == nil {
		opts.Pool.Tracing = db.tracing
	}
	set := &replicaSet{primary: db, maxLag: opts.MaxLag, checkEvery: opts.CheckEvery, log: opts.Log,
		history: lsnHistory{keep: opts.MaxLag + 20*opts.CheckEvery}, done: make(chan struct{})}
	set.positions.byCaller = map[string]LSN{}
	names := map[string]int{}
	for _, u := range urls {
		r, err := openReplica(u, opts.Pool)
		if err != nil {
			set.closePools()
			return err
		}
		if names[r.name]++; names[r.name] > 1 {
			r.name += "#" + strconv.Itoa(names[r.name])
		}
		set.list = append(set.list, r)
	}
	set.check(ctx)
	for _, r := range set.list {
		if r.up.Load() {
			set.log.Info("replica up: it takes reads", "replica", r.name, "lag", time.Duration(r.lag.Load()).String())
		}
	}
	runCtx, stop := context.WithCancel(context.Background())
	set.stop = stop
	go set.run(runCtx)
	// bun asks the router for a connection for every statement run outside
	// a transaction; the router answers for the statements of routed
	// requests only (replica_route.go). bun closes it with db.
	bun.WithConnResolver(readRouter{set})(db.DB)
	db.replicas = set
	return nil
}

// Replicated reports whether db has replicas (AttachReplicas).
func (db *DB) Replicated() bool { return db.replicas != nil }

func openReplica(rawURL string, opts Options) (*replica, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("store: a replica URL is not a postgres:// URL with a host: %s", redactURL(rawURL))
	}
	cfg, err := poolConfig(rawURL, opts, poolReplica)
	if err != nil {
		return nil, fmt.Errorf("store: replica %s: %w", u.Host, err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 || cfg.ConnConfig.ConnectTimeout > replicaConnectTimeout {
		cfg.ConnConfig.ConnectTimeout = replicaConnectTimeout
	}
	// pgxpool connects lazily: a replica down at start is no error here.
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("store: replica %s: %w", u.Host, err)
	}
	r := &replica{name: u.Host, pool: pool, problem: "not checked yet"}
	r.alive.Store(newLiveness())
	r.sql = sql.OpenDB(bufferedConnector{stdlib.GetPoolConnector(pool), r})
	r.sql.SetMaxIdleConns(0) // the pgx pool keeps the idle connections
	return r, nil
}

// liveness is a context that ends when its replica is taken out.
type liveness struct {
	ctx  context.Context
	stop context.CancelFunc
}

func newLiveness() *liveness {
	ctx, stop := context.WithCancel(context.Background())
	return &liveness{ctx, stop}
}

// readContext is ctx for a read on r: it also ends when r is taken out of
// routing (by its check, or another read's failure), so that a read on a
// replica gone silent gives up then, about a check's timeout, and runs on
// the primary. done releases it.
func (r *replica) readContext(ctx context.Context) (readCtx context.Context, done func()) {
	readCtx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(r.alive.Load().ctx, cancel)
	return readCtx, func() { stop(); cancel() }
}

// redactURL is rawURL without its password, for messages.
func redactURL(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		return u.Redacted()
	}
	return "(unparsable)"
}

// run checks the replicas every checkEvery until ctx ends.
func (s *replicaSet) run(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(s.checkEvery)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.check(ctx)
		// Forgetting the writes every replica has replayed walks every
		// caller's: once a second is soon enough.
		if n%max(1, int(time.Second/s.checkEvery)) == 0 {
			s.positions.forget(s.replayedByAll())
		}
	}
}

// checkTimeout bounds each query of a check.
const checkTimeout = time.Second

// check samples the primary's position, then reads every replica's
// (concurrently: one hanging replica delays no other's).
func (s *replicaSet) check(ctx context.Context) {
	now := time.Now()
	pctx, cancel := context.WithTimeout(ctx, checkTimeout)
	if at, err := currentPosition(pctx, s.primary); err == nil {
		s.history.add(now, at)
	}
	cancel()
	var wg sync.WaitGroup
	for _, r := range s.list {
		wg.Go(func() { s.checkReplica(ctx, r, now) })
	}
	wg.Wait()
}

func (s *replicaSet) checkReplica(parent context.Context, r *replica, now time.Time) {
	ctx, cancel := context.WithTimeout(parent, checkTimeout)
	defer cancel()
	notReplica := s.verify(ctx, r)
	var recovering bool
	var replayed *string
	var err error
	if notReplica == nil {
		err = r.pool.QueryRow(ctx, "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text").Scan(&recovering, &replayed)
	}
	switch {
	case parent.Err() != nil:
		return // closing: nothing to say
	case notReplica != nil:
		s.setDown(r, notReplica.Error())
		return
	case ctx.Err() != nil && err != nil:
		s.setDown(r, "did not answer its check within "+checkTimeout.String())
		return
	case err != nil:
		s.setDown(r, "unreachable: "+err.Error())
		return
	case !recovering:
		// Promoted, or a primary named by mistake: its data may have
		// left the primary's history.
		s.setDown(r, "not in recovery: it is no standby (promoted?)")
		return
	case replayed == nil:
		s.setDown(r, "has replayed nothing yet")
		return
	}
	at, err := ParseLSN(*replayed)
	if err != nil {
		s.setDown(r, err.Error())
		return
	}
	r.replayed.Store(uint64(at))
	r.lag.Store(int64(s.history.lag(now, at)))
	if target, ok := r.caughtUp(at, s.history.latest()); !ok {
		s.setDown(r, fmt.Sprintf("back, replaying up to where the primary was when it went down (%s of %s)", at, target))
		return
	}
	r.mu.Lock()
	was := r.problem
	r.problem = ""
	if !r.up.Load() && r.alive.Load().ctx.Err() != nil {
		r.alive.Store(newLiveness())
	}
	r.up.Store(true)
	r.wasUp.Store(true)
	r.mu.Unlock()
	if was != "" && was != "not checked yet" {
		s.log.Info("replica up again: it takes reads", "replica", r.name, "lag", time.Duration(r.lag.Load()).String())
	}
}

// caughtUp tells whether r, found to have replayed up to at while the
// primary is at primary, may take reads: always, unless it took reads
// before and went down; then only once it replayed up to the primary's
// position when it was first found back (target).
func (r *replica) caughtUp(at, primary LSN) (target LSN, ok bool) {
	if r.up.Load() || !r.wasUp.Load() {
		return 0, true
	}
	target = LSN(r.resumeAt.Load())
	if target == 0 {
		if primary == 0 {
			return 0, false // the primary's position is not known yet
		}
		target = primary
		r.resumeAt.Store(uint64(target))
	}
	if at < target {
		return target, false
	}
	r.resumeAt.Store(0)
	return target, true
}

// verify checks, once, that r is a replica of the primary's cluster serving
// the primary's database: a URL naming another server or database would
// answer reads with other data.
func (s *replicaSet) verify(ctx context.Context, r *replica) error {
	r.mu.Lock()
	verified := r.verified
	r.mu.Unlock()
	if verified {
		return nil
	}
	const q = "SELECT current_database(), (SELECT system_identifier FROM pg_control_system())::text"
	var pdb, psys, rdb, rsys string
	if err := s.primary.Pool.QueryRow(ctx, q).Scan(&pdb, &psys); err != nil {
		return fmt.Errorf("cannot check it against the primary: %w", err)
	}
	if err := r.pool.QueryRow(ctx, q).Scan(&rdb, &rsys); err != nil {
		return fmt.Errorf("unreachable: %w", err)
	}
	if rsys != psys {
		return fmt.Errorf("not a replica of the primary (cluster %s, the primary's is %s)", rsys, psys)
	}
	if rdb != pdb {
		return fmt.Errorf("names database %q, the primary's URL %q", rdb, pdb)
	}
	r.mu.Lock()
	r.verified = true
	r.mu.Unlock()
	return nil
}

// setDown takes r out of routing, saying why when that is news. Its
// connections are dropped: after a crash they are all broken, and each
// would fail a read once the replica is back.
func (s *replicaSet) setDown(r *replica, why string) {
	r.mu.Lock()
	wasUp := r.up.Swap(false)
	r.alive.Load().stop()
	was := r.problem
	r.problem = why
	r.mu.Unlock()
	if wasUp {
		r.pool.Reset()
	}
	if wasUp || was == "not checked yet" {
		s.log.Warn("replica down: its reads go to the primary", "replica", r.name, "why", why)
	}
}

// replayedByAll is the position every replica has replayed (as last
// checked; a replica down holds it where it was).
func (s *replicaSet) replayedByAll() LSN {
	least := LSN(1<<64 - 1)
	for _, r := range s.list {
		least = min(least, LSN(r.replayed.Load()))
	}
	return least
}

// close stops the checks and closes the replicas' pools.
func (s *replicaSet) close() {
	if s.stop != nil {
		s.stop()
		<-s.done
	}
	s.closePools()
}

func (s *replicaSet) closePools() {
	for _, r := range s.list {
		_ = r.sql.Close()
		r.pool.Close()
	}
}

// currentPosition is where the primary's write-ahead log is now: past
// every record already inserted, committed or not, so past the commit of
// every transaction that has returned. (The insert position, not the
// flush position: with synchronous_commit off a commit returns before its
// record is flushed.)
func currentPosition(ctx context.Context, db *DB) (LSN, error) {
	var s string
	if err := db.Pool.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&s); err != nil {
		return 0, err
	}
	return ParseLSN(s)
}

// lsnHistory is the primary's position as sampled by the checks, oldest
// first, over the last keep: a replica's lag is how long ago the primary
// was where the replica is now. That needs no clock on the replica's
// machine, and an idle primary, whose position does not move, leaves a
// caught-up replica at no lag however long ago its last commit was.
type lsnHistory struct {
	mu      sync.Mutex
	keep    time.Duration
	samples []lsnSample
}

type lsnSample struct {
	at  time.Time
	lsn LSN
}

func (h *lsnHistory) add(at time.Time, lsn LSN) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.samples = append(h.samples, lsnSample{at, lsn})
	drop := 0
	for drop < len(h.samples)-1 && at.Sub(h.samples[drop+1].at) > h.keep {
		drop++
	}
	if drop > 0 {
		h.samples = append(h.samples[:0], h.samples[drop:]...)
	}
}

// latest is the primary's position at the last sample (0: none yet).
func (h *lsnHistory) latest() LSN {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.samples) == 0 {
		return 0
	}
	return h.samples[len(h.samples)-1].lsn
}

// lag is how far behind the primary a replica that has replayed up to
// replayed is, at now: zero when it has replayed everything the primary
// had at the last sample; otherwise the time since the last sample it had
// entirely (or since the oldest kept, when it had none: at least keep).
func (h *lsnHistory) lag(now time.Time, replayed LSN) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.samples)
	if n == 0 || replayed >= h.samples[n-1].lsn {
		return 0
	}
	for i := n - 2; i >= 0; i-- {
		if h.samples[i].lsn <= replayed {
			return now.Sub(h.samples[i].at)
		}
	}
	return now.Sub(h.samples[0].at)
}

// bufferedConnector makes database/sql's connections to a replica, which
// read a statement's whole result before handing it on: a replica that
// fails in the middle of a result (killed, its connection cut, a conflict
// with recovery cancelling the statement) fails the statement, which the
// router then runs on the primary, rather than failing the scan of rows
// already handed to bun. The results of reads are small; the primary's
// connections stream as before.
//
// Connecting and reading run under the replica's readContext: they give up
// when the replica is taken out. Once read, the rows no longer need it.
type bufferedConnector struct {
	driver.Connector
	r *replica
}

func (c bufferedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	ctx, done := c.r.readContext(ctx)
	defer done()
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return bufferedConn{conn.(*stdlib.Conn), c.r}, nil
}

type bufferedConn struct {
	*stdlib.Conn
	r *replica
}

func (c bufferedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	ctx, done := c.r.readContext(ctx)
	defer done()
	rows, err := c.Conn.QueryContext(ctx, query, args)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	b := &bufferedRows{columns: rows.Columns()}
	if typed, ok := rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		for i := range b.columns {
			b.types = append(b.types, typed.ColumnTypeDatabaseTypeName(i))
		}
	}
	for {
		values := make([]driver.Value, len(b.columns))
		if err := rows.Next(values); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		for i, v := range values {
			// The driver may reuse a []byte's memory for the next row.
			if raw, ok := v.([]byte); ok {
				values[i] = append([]byte(nil), raw...)
			}
		}
		b.rows = append(b.rows, values)
	}
	return b, nil
}

// bufferedRows is a whole result, read.
type bufferedRows struct {
	columns []string
	types   []string
	rows    [][]driver.Value
}

func (b *bufferedRows) Columns() []string { return b.columns }
func (b *bufferedRows) Close() error      { return nil }

func (b *bufferedRows) Next(dest []driver.Value) error {
	if len(b.rows) == 0 {
		return io.EOF
	}
	copy(dest, b.rows[0])
	b.rows = b.rows[1:]
	return nil
}

func (b *bufferedRows) ColumnTypeDatabaseTypeName(i int) string {
	if i < len(b.types) {
		return b.types[i]
	}
	return ""
}
