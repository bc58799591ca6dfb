// Package store is the only package that talks to PostgreSQL: bun models and
// queries per domain (one file each), migrations, transactions, and the
// translation of driver errors into the store's own errors.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"go.opentelemetry.io/otel/trace"

	"github.com/docsapi/docsapi/store/pgserver"
)

// DB is the application's handle on the database: bun for our own queries and
// the pgx pool under it, which River and LISTEN/NOTIFY share.
type DB struct {
	*bun.DB
	Pool *pgxpool.Pool
	// Callers answers "whose token is this" from memory when it safely can.
	Callers *CallerCache
	// trees keeps recently read revisions' page trees (PageTrees).
	trees *lru.Cache[string, *PageTree]
	// OnDeliveries, when set, is given the integration events to deliver
	// that a transaction recorded, once it committed (graph/delivery.go
	// enqueues their delivery jobs).
	OnDeliveries func(ctx context.Context, integrationEventIDs []string)
	// OnNotified, when set, is told of each notification this process
	// raised, once it is committed: the process's own listeners hear of
	// its writes before its next request, whenever PostgreSQL's delivery
	// of them comes (graph/published_changes.go).
	OnNotified func(channel, payload string)

	// origin names this DB in the PublishedChannel payloads it raises, so
	// that its own listener skips what OnNotified already told (notify.go).
	origin string

	stopListening context.CancelFunc
	listening     chan struct{}
	// embedded is the PostgreSQL server Connect started, nil for one at a
	// URL.
	embedded *pgserver.Server
	// serialSlots bounds the connections Serialize holds, serialKeys
	// queues its callers of one key (serialize.go).
	serialSlots chan struct{}
	serialKeys  keyedMutex
	// dir says which organization holds a space or collection
	// (directory.go).
	dir *directory
	// replicas take the reads of read-only requests (replica.go); nil
	// without any.
	replicas *replicaSet
	// workers take the reads of one organization on a Citus cluster
	// (citus_reads.go); nil on one PostgreSQL.
	workers *workerSet
	// tracing traces the statements of the pools (Options.Tracing), the
	// replicas' too.
	tracing trace.TracerProvider
}

// Health is nil unless the embedded PostgreSQL server this process runs
// (Connect without a DatabaseURL) is down: its process died and is being
// restarted, or could not be. A server at a URL, or one another process
// runs, is not this process's to watch: nil (whether the database answers
// is Pool.Ping's question, /readyz's).
func (db *DB) Health() error {
	if db.embedded == nil {
		return nil
	}
	return db.embedded.Health()
}

// Embedded is the PostgreSQL server Connect started or attached to for
// this DB, nil for a server at a URL.
func (db *DB) Embedded() *pgserver.Server { return db.embedded }

// DefaultStatementTimeout is how long one SQL statement of the application
// may run before PostgreSQL cancels it (DOCSAPI_STATEMENT_TIMEOUT).
const DefaultStatementTimeout = 30 * time.Second

// Options tune the pool Open makes.
type Options struct {
	// MaxConns bounds the pool (0: pgx's default).
	MaxConns int32
	// StatementTimeout is the statement_timeout of every connection of the
	// pool: a statement running longer (a request stuck behind a lock, a
	// query gone wrong) is cancelled rather than holding its connection and
	// its locks for ever. Zero sets none (the server's or the URL's applies).
	// Migrate runs without it; maintenance that may take longer runs in
	// RunUnhurried.
	StatementTimeout time.Duration
	// Tracing, when set, traces the SQL statements run under a recording
	// span (tracing.go); nil: the pool has no tracer.
	Tracing trace.TracerProvider
}

// Open connects to url with at most maxConns connections and the default
// statement timeout.
func Open(ctx context.Context, url string, maxConns int32) (*DB, error) {
	return OpenWith(ctx, url, Options{MaxConns: maxConns, StatementTimeout: DefaultStatementTimeout})
}

// OpenWith connects to url. bun formats its queries client-side, so the pool
// uses the simple protocol: preparing statements whose text differs with
// every value would only churn the statement cache.
func OpenWith(ctx context.Context, url string, opts Options) (*DB, error) {
	cfg, err := poolConfig(url, opts, poolPrimary)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: connect: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: connect: %w", err)
	}
	sqldb := stdlib.OpenDBFromPool(pool)
	db := bun.NewDB(sqldb, pgdialect.New(), bun.WithDiscardUnknownColumns()).WithQueryHook(queryCountHook{})
	trees, err := lru.New[string, *PageTree](pageTreeCacheSize)
	if err != nil {
		pool.Close()
		return nil, err
	}
	d := &DB{DB: db, Pool: pool, trees: trees, listening: make(chan struct{}), dir: newDirectory(), origin: newOrigin(),
		serialSlots: make(chan struct{}, max(1, pool.Config().MaxConns/4)), tracing: opts.Tracing}
	d.Callers = newCallerCache(d)
	d.DB = d.DB.WithQueryHook(callerWatchHook{cache: d.Callers})
	if err := d.attachWorkers(ctx, url, opts, DefaultWorkerCheckEvery, slog.Default()); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: connect: %w", err)
	}
	if d.workers != nil {
		if t, ok := cfg.ConnConfig.Tracer.(*sqlTracer); ok {
			t.rename(poolCoordinator)
		}
		// bun asks the resolver for a connection for every statement run
		// outside a transaction; it answers for the reads of one
		// organization (citus_reads.go). bun closes it with db.
		bun.WithConnResolver(workerResolver{d.workers})(d.DB)
	}
	listenCtx, stop := context.WithCancel(context.Background())
	d.stopListening = stop
	go func() {
		defer close(d.listening)
		d.Callers.listen(listenCtx, slog.Default())
	}()
	return d, nil
}

// poolConfig is the configuration of a pool of opts on url (the
// primary's, a replica's: replica.go, or a Citus worker's: citus_reads.go),
// named name in its statements' spans.
func poolConfig(url string, opts Options, name string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("store: parse database url: %w", err)
	}
	if t := newSQLTracer(opts.Tracing, name); t != nil {
		cfg.ConnConfig.Tracer = t
	}
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	// On a Citus cluster a statement touching many shards writes them over
	// one connection per worker, in turn, rather than over many at once: a
	// transaction may then write a reference table after it (Citus refuses
	// that after a parallel write, and which statements touch many shards
	// is for the planner to say). The application's writes are one
	// organization's (one shard group) but for the periodic sweeps. On one
	// PostgreSQL the setting is an unused placeholder.
	cfg.ConnConfig.RuntimeParams["citus.multi_shard_modify_mode"] = "sequential"
	if opts.StatementTimeout > 0 {
		// A startup parameter rather than a SET after connecting: it costs
		// no round trip, and no statement of a connection runs without it.
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = milliseconds(opts.StatementTimeout)
	}
	return cfg, nil
}

// milliseconds renders d as PostgreSQL's milliseconds, rounded up: a
// timeout below a millisecond must not become 0, which means none.
func milliseconds(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Millisecond-1)/time.Millisecond), 10)
}

// Close closes bun's handle and the pool.
func (db *DB) Close() {
	db.stopListening()
	<-db.listening
	_ = db.DB.Close()
	db.Pool.Close()
}

// Errors the store returns; everything above the store checks these, never a
// driver error.
var (
	ErrNotFound = errors.New("not found")
	// ErrConflict is a unique constraint violation: the thing already exists.
	ErrConflict = errors.New("conflict")
)

// translate maps driver errors to the store's errors, once, for every query.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) || errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return fmt.Errorf("%w: %s", ErrConflict, violatedConstraint(pgErr))
	}
	return err
}

// violatedConstraint is the name of the unique key a 23505 error
// violated, as the schema names it. A Citus coordinator passes a worker's
// error on without the constraint field, and a shard's key carries the
// shard's id ("sites_basename_key_102040"): the name is then read from
// the message, and the suffix cut (no key of the schema ends in digits).
func violatedConstraint(e *pgconn.PgError) string {
	name := e.ConstraintName
	if name == "" {
		if _, rest, ok := strings.Cut(e.Message, `constraint "`); ok {
			name, _, _ = strings.Cut(rest, `"`)
		}
	}
	if i := strings.LastIndexByte(name, '_'); i > 0 && i < len(name)-1 && strings.Trim(name[i+1:], "0123456789") == "" {
		name = name[:i]
	}
	return name
}

// IsTimeout reports whether err is PostgreSQL cancelling a statement: the
// statement timeout cut it, or an administrator cancelled it (both are
// 57014, query_canceled). The store sets no lock_timeout, so 55P03 is left
// to what it means elsewhere (NOWAIT). It checks the driver's error where
// it is, translated or not, since queries reach it through several paths.
func IsTimeout(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "57014"
}

// IsUnavailable reports whether err is the database being out of reach
// rather than anything the request did: the pool could not connect
// (connection refused, the server starting up, shutting down or in
// recovery: 57P03), or a connection broke under a statement (the server
// stopped, 57P01 admin_shutdown, or crashed, 57P02 crash_shutdown, or the
// socket was closed or reset: SQLSTATE class 08 and the driver's network
// errors). The request may be retried once the server is back; the pool
// reconnects by itself. Like IsTimeout it looks for the driver's error
// wherever it is in the chain.
//
// The network errors it recognises (a broken socket, an unexpected end of
// stream) are the driver's: outbound HTTP requests, the other network
// client of the server, fail with *url.Error, which is never the
// database's.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// The server answered: only the codes of a server that is going
		// away or not there yet. A refused password (28P01) or a missing
		// database (3D000) is a configuration error, which waiting does
		// not mend.
		switch pgErr.Code {
		case "57P01", "57P02", "57P03":
			return true
		case "XX000":
			// A Citus coordinator reports a worker lost while it committed
			// with no code of its own (an internal error): the worker is
			// out of reach, as a server going away is.
			return slices.ContainsFunc(citusNodeFailures, func(prefix string) bool { return strings.HasPrefix(pgErr.Message, prefix) })
		}
		return strings.HasPrefix(pgErr.Code, "08")
	}
	// The caller gave up (the client went away, the request's deadline
	// passed): not the database's doing. A connection attempt that ran out
	// of time (connect_timeout) is.
	connecting := errors.As(err, new(*pgconn.ConnectError))
	if errors.Is(err, context.Canceled) || (errors.Is(err, context.DeadlineExceeded) && !connecting) {
		return false
	}
	if errors.As(err, new(*url.Error)) {
		return false
	}
	return connecting ||
		errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, new(*net.OpError)) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// citusNodeFailures start the messages of a Citus coordinator's errors
// without a code of their own that mean a worker went away
// (placement_connection.c, remote_transaction.c).
var citusNodeFailures = []string{
	"could not commit transaction for shard ",
	"failure on connection marked as essential",
	"could not establish any connections to the node",
}

// RunUnhurried runs fn in a transaction without the pool's statement
// timeout: for background maintenance (purges of many rows) that may take
// longer than any request should. ctx still bounds it: pgx cancels the
// statement running when ctx ends.
func RunUnhurried(ctx context.Context, db bun.IDB, fn func(ctx context.Context, tx bun.Tx) error) error {
	return RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		// SET LOCAL: the connection goes back to the pool with its own
		// setting when the transaction ends.
		if _, err := tx.ExecContext(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
			return err
		}
		return fn(ctx, tx)
	})
}

// RunInTx runs fn in a transaction, committing when it returns nil. The
// transaction is passed explicitly, never through the context, so loaders
// (which read the context) cannot pick it up by accident.
func RunInTx(ctx context.Context, db bun.IDB, fn func(ctx context.Context, tx bun.Tx) error) error {
	if d, ok := db.(*DB); ok && d.replicas != nil {
		noteWrite(ctx) // the rest of a routed operation reads on the primary
	}
	if _, nested := ctx.Value(txWritesKey{}).(*txWrites); nested {
		return translate(db.RunInTx(ctx, nil, fn))
	}
	writes := &txWrites{}
	ctx = context.WithValue(ctx, txWritesKey{}, writes)
	if d, ok := db.(*DB); ok {
		writes.origin = d.origin
		ctx = context.WithValue(ctx, directoryCtxKey{}, d.dir)
	}
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := fn(ctx, tx); err != nil {
			return err
		}
		// Last, so that they go out with the commit of everything fn did.
		return writes.sendNotifications(ctx, tx)
	})
	if cache := writes.callers.Load(); cache != nil && err == nil {
		cache.Invalidate()
	}
	if err == nil {
		runAfterCommit(ctx, db, writes)
	}
	return translate(err)
}

// runAfterCommit runs what a committed transaction left to do: the
// deliveries of the integration events it recorded, and telling this
// process of the notifications it raised.
func runAfterCommit(ctx context.Context, db bun.IDB, w *txWrites) {
	d, ok := db.(*DB)
	if !ok {
		return
	}
	w.mu.Lock()
	ids, notified := w.deliveries, w.notifications
	w.mu.Unlock()
	if len(ids) > 0 && d.OnDeliveries != nil {
		d.OnDeliveries(ctx, ids)
	}
	if d.OnNotified != nil {
		for _, n := range notified {
			d.OnNotified(n.channel, n.payload)
		}
	}
}

// deleteRows deletes the rows of model's table matching where; false when
// there were none.
func deleteRows(ctx context.Context, db bun.IDB, model any, where string, args ...any) (bool, error) {
	res, err := db.NewDelete().Model(model).Where(where, args...).Exec(ctx)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n > 0, translate(err)
}
