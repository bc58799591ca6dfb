package store

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/uptrace/bun"
)

// Which reads a replica takes, under one rule: a caller never reads older
// than its own writes (GitLab's database load balancing works this way).
//
//   - A read-only operation (a GraphQL query; a REST GET runs one) gets a
//     route (RouteReads), made before its first read: one replica, chosen
//     among those up, within the maximum lag, and past the caller's last
//     write, for all its reads, so that they see one moment of the data;
//     or the primary when none is.
//   - A caller's last write is the primary's position after it
//     (RecordWrite: after every mutation, and after a read-only operation
//     that wrote after all; RecordPosition also where a subscriber was told
//     of an event). This process remembers it by caller (the user);
//     the client is handed it too (ClientPosition, the HTTP layer's
//     X-Write-Position header) and sends it back, so that another
//     instance, which has not seen the write, knows it as well. A route's
//     position is the greater of the two.
//   - Only statements outside transactions follow a route; everything in a
//     transaction, every write, and everything after a write in the same
//     operation runs on the primary. So do the reads of requests that
//     write (ClientPosition.primary: a conditional write's read of what it
//     replaces), the caller lookups (they run before any route), the
//     subscriptions' reads of their events, the jobs, the rate budget's
//     counts: nothing but read-only operations has a route.
//   - A replica that fails a read is taken out of routing until its next
//     check finds it up, and the read, and the rest of the operation, run
//     on the primary.

// fallbackReason is why a read that could have gone to a replica went to
// the primary.
type fallbackReason int32

const (
	fallbackNone fallbackReason = iota
	// In the order of how far the best replica got: down, then up but
	// lagging past the maximum, then within it but behind the caller.
	fallbackDown
	fallbackLagging
	fallbackBehindCaller
	// The operation wrote before this read.
	fallbackRequestWrote
	// The replica failed a read of this operation.
	fallbackReadFailed
	fallbackReasons
)

var fallbackNames = [fallbackReasons]string{"", "down", "lagging", "behind_caller", "request_wrote", "read_failed"}

// ClientPosition is the least position the reads of one client's request
// (or websocket connection) must see: what the client sent back of its
// last write, raised by the writes of the request itself. The HTTP layer
// makes one per request and hands the client the result.
type ClientPosition struct {
	at atomic.Uint64
	// primary: the request writes, and reads what it writes over; none of
	// its reads goes to a replica.
	primary bool
}

// NewClientPosition is a client's position: sent is what it sent back (0:
// nothing); primaryOnly keeps every read of the request on the primary.
func NewClientPosition(sent LSN, primaryOnly bool) *ClientPosition {
	p := &ClientPosition{primary: primaryOnly}
	p.at.Store(uint64(sent))
	return p
}

// Position is the client's position now (0: none known).
func (p *ClientPosition) Position() LSN { return LSN(p.at.Load()) }

func (p *ClientPosition) advance(to LSN) {
	for {
		at := p.at.Load()
		if uint64(to) <= at || p.at.CompareAndSwap(at, uint64(to)) {
			return
		}
	}
}

type clientPositionKey struct{}

// WithClientPosition returns ctx whose operations read at p or later.
func WithClientPosition(ctx context.Context, p *ClientPosition) context.Context {
	return context.WithValue(ctx, clientPositionKey{}, p)
}

func clientPositionFrom(ctx context.Context) *ClientPosition {
	p, _ := ctx.Value(clientPositionKey{}).(*ClientPosition)
	return p
}

// callerPositions are this process's callers' last writes. Writes every
// replica has replayed are forgotten; past maxCallerPositions callers, all
// are, and every caller is taken to have written at the latest of them
// (floor): wrong only towards the primary.
type callerPositions struct {
	mu       sync.RWMutex
	byCaller map[string]LSN
	floor    LSN
}

const maxCallerPositions = 100_000

func (p *callerPositions) need(caller string) LSN {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return max(p.floor, p.byCaller[caller])
}

func (p *callerPositions) wrote(caller string, at LSN) {
	if caller == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.byCaller) >= maxCallerPositions {
		for _, l := range p.byCaller {
			p.floor = max(p.floor, l)
		}
		clear(p.byCaller)
	}
	if at > p.byCaller[caller] {
		p.byCaller[caller] = at
	}
}

func (p *callerPositions) forget(replayed LSN) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for caller, at := range p.byCaller {
		if at <= replayed {
			delete(p.byCaller, caller)
		}
	}
}

// readRoute is where the reads of one read-only operation go. It is also
// the connection bun runs their statements on (readRouter).
type readRoute struct {
	set *replicaSet
	// replica takes the reads; nil once they go to the primary, for
	// reason.
	replica atomic.Pointer[replica]
	reason  atomic.Int32
	wrote   atomic.Bool
}

type readRouteKey struct{}

func routeFrom(ctx context.Context) *readRoute {
	r, _ := ctx.Value(readRouteKey{}).(*readRoute)
	return r
}

// RouteReads returns ctx whose reads (outside transactions) go to a
// replica that has replayed caller's last write (caller: the user's id;
// "" for none), chosen now, or to the primary when none has. For the
// reads of read-only operations only. Without replicas it returns ctx.
func (db *DB) RouteReads(ctx context.Context, caller string) context.Context {
	s := db.replicas
	if s == nil {
		return ctx
	}
	need := s.positions.need(caller)
	if p := clientPositionFrom(ctx); p != nil {
		if p.primary {
			return ctx
		}
		// The client is told what this process knows of its writes too.
		p.advance(need)
		need = p.Position()
	}
	rt := &readRoute{set: s}
	r, why := s.choose(need)
	rt.replica.Store(r)
	rt.reason.Store(int32(why))
	return context.WithValue(ctx, readRouteKey{}, rt)
}

// OnPrimary returns ctx whose reads go to the primary whatever route it
// had: for reads that must see the latest commit (who a token is).
func OnPrimary(ctx context.Context) context.Context {
	if routeFrom(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, readRouteKey{}, (*readRoute)(nil))
}

// WroteUnder reports whether the operation of ctx's route wrote (its
// position is then to be recorded: RecordWrite).
func WroteUnder(ctx context.Context) bool {
	rt := routeFrom(ctx)
	return rt != nil && rt.wrote.Load()
}

// RecordWrite records that caller (the user's id; "" for none) has just
// written, in this process and in ctx's ClientPosition: their reads go to
// the primary until a replica has replayed where the primary is now. A
// no-op without replicas.
//
// Should the primary not tell its position (it just went away), the write
// is not recorded: the caller's next reads may then go to a replica that
// lacks it, for as long as the replica lags. Nothing would be read on the
// primary anyway.
func (db *DB) RecordWrite(ctx context.Context, caller string) {
	if db.replicas == nil {
		return
	}
	db.RecordPosition(ctx, caller, db.PrimaryPosition(ctx))
}

// PrimaryPosition is where the primary's write-ahead log is now: past
// every commit that has returned, or been notified. 0 without replicas,
// or when the primary does not tell (it just went away: logged).
func (db *DB) PrimaryPosition(ctx context.Context) LSN {
	s := db.replicas
	if s == nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkTimeout)
	defer cancel()
	at, err := currentPosition(ctx, db)
	if err != nil {
		s.log.WarnContext(ctx, "cannot read the primary's position; a caller's next reads may not see a write on a replica", "err", err)
		return 0
	}
	return at
}

// RecordPosition records that caller's reads, and those of ctx's client,
// must see at (0: nothing to record): where the primary was after their
// write, or when they were told of an event (a subscriber refetching what
// an event names must find it).
func (db *DB) RecordPosition(ctx context.Context, caller string, at LSN) {
	if db.replicas == nil || at == 0 {
		return
	}
	db.replicas.positions.wrote(caller, at)
	if p := clientPositionFrom(ctx); p != nil {
		p.advance(at)
	}
}

// choose picks a replica that may take reads that must see need: up,
// within the maximum lag, past need; round robin among them. Without one,
// it says why.
func (s *replicaSet) choose(need LSN) (*replica, fallbackReason) {
	why := fallbackDown
	n := uint32(len(s.list))
	start := s.next.Add(1)
	for i := range n {
		r := s.list[(start+i)%n]
		switch {
		case !r.up.Load():
		case time.Duration(r.lag.Load()) > s.maxLag:
			why = max(why, fallbackLagging)
		case LSN(r.replayed.Load()) < need:
			why = max(why, fallbackBehindCaller)
		default:
			return r, fallbackNone
		}
	}
	return nil, why
}

// replicaFor is the replica the route's next read goes to; nil: the
// primary.
func (rt *readRoute) replicaFor() *replica { return rt.replica.Load() }

// answered counts a read r answered.
func (rt *readRoute) answered(r *replica) { r.reads.Add(1) }

// onPrimary counts a read of the route that goes to the primary.
func (rt *readRoute) onPrimary() {
	rt.set.primaryReads.Add(1)
	rt.set.fallbacks[rt.reason.Load()].Add(1)
}

// toPrimary sends the route's next reads to the primary, for why.
func (rt *readRoute) toPrimary(why fallbackReason) {
	rt.reason.Store(int32(why))
	rt.replica.Store(nil)
}

// failed handles a read r failed with err (not the request's own end): a
// statement that writes (a standby refuses them, 25006) moves the route to
// the primary as a write does; any other failure does too, and a replica
// out of reach is taken out of routing until its next check.
func (rt *readRoute) failed(r *replica, err error) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "25006" {
		rt.noteWrite()
		return
	}
	rt.toPrimary(fallbackReadFailed)
	switch {
	case !r.up.Load():
		// Taken out meanwhile, which ends its reads: said when it was.
	case IsUnavailable(err):
		rt.set.setDown(r, "a read failed: "+err.Error())
	default:
		rt.set.log.Warn("a read failed on a replica; it runs again on the primary", "replica", r.name, "err", err)
	}
}

// noteWrite records that the route's operation wrote: its later reads go
// to the primary, and its position is recorded at its end.
func (rt *readRoute) noteWrite() {
	rt.wrote.Store(true)
	rt.toPrimary(fallbackRequestWrote)
}

// noteWrite notes a write made under ctx (a transaction, a statement that
// changes rows) on its route, if it has one.
func noteWrite(ctx context.Context) {
	if rt := routeFrom(ctx); rt != nil {
		rt.noteWrite()
	}
}

// routedRead runs read, a read of the pgx path (read.go), on the pool
// ctx's route takes it to, under the context it is given; a replica that
// fails it leaves it to the primary. read must start afresh each time it
// is called.
func (db *DB) routedRead(ctx context.Context, read func(context.Context, *pgxpool.Pool) error) error {
	rt := routeFrom(ctx)
	if rt == nil {
		return read(ctx, db.Pool)
	}
	if r := rt.replicaFor(); r != nil {
		err := readOn(ctx, r, read)
		if err == nil {
			rt.answered(r)
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		rt.failed(r, err)
	}
	rt.onPrimary()
	return read(ctx, db.Pool)
}

// readOn runs read on r under r's readContext.
func readOn(ctx context.Context, r *replica, read func(context.Context, *pgxpool.Pool) error) error {
	ctx, done := r.readContext(ctx)
	defer done()
	return read(ctx, r.pool)
}

// readRouter is bun's connection resolver: the statements bun runs
// outside a transaction under a route run on the route (readRoute's
// methods), the others on the primary as ever.
type readRouter struct{ set *replicaSet }

func (readRouter) ResolveConn(ctx context.Context, _ bun.Query) bun.IConn {
	if rt := routeFrom(ctx); rt != nil {
		return rt
	}
	return nil
}

func (rr readRouter) Close() error {
	rr.set.close()
	return nil
}

func (rt *readRoute) primarySQL() *sql.DB { return rt.set.primary.DB.DB }

func (rt *readRoute) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if !isReadStatement(query) {
		rt.noteWrite()
		return rt.primarySQL().QueryContext(ctx, query, args...)
	}
	if r := rt.replicaFor(); r != nil {
		rows, err := r.sql.QueryContext(ctx, query, args...)
		if err == nil {
			rt.answered(r)
			return rows, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		rt.failed(r, err)
	}
	rt.onPrimary()
	return rt.primarySQL().QueryContext(ctx, query, args...)
}

func (rt *readRoute) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if !isReadStatement(query) {
		rt.noteWrite()
		return rt.primarySQL().QueryRowContext(ctx, query, args...)
	}
	if r := rt.replicaFor(); r != nil {
		row := r.sql.QueryRowContext(ctx, query, args...)
		err := row.Err()
		if err == nil {
			rt.answered(r)
			return row
		}
		if ctx.Err() != nil {
			return row
		}
		rt.failed(r, err)
	}
	rt.onPrimary()
	return rt.primarySQL().QueryRowContext(ctx, query, args...)
}

// ExecContext runs statements that change something: on the primary.
func (rt *readRoute) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	rt.noteWrite()
	return rt.primarySQL().ExecContext(ctx, query, args...)
}

// isReadStatement reports whether query, as bun sends it, is a SELECT (or
// WITH ... SELECT): the statements a replica may take. A WITH that writes,
// a locking SELECT or a function that writes is refused by the replica
// (25006) and then runs on the primary as a write (readRoute.failed).
func isReadStatement(query string) bool {
	i := 0
	for i < len(query) {
		switch {
		case query[i] == ' ' || query[i] == '\t' || query[i] == '\n' || query[i] == '\r':
			i++
		case len(query) > i+1 && query[i] == '/' && query[i+1] == '*':
			end := indexFrom(query, "*/", i+2)
			if end < 0 {
				return false
			}
			i = end + 2
		case len(query) > i+1 && query[i] == '-' && query[i+1] == '-':
			end := indexFrom(query, "\n", i+2)
			if end < 0 {
				return false
			}
			i = end + 1
		default:
			return keywordAt(query, i, "SELECT") || keywordAt(query, i, "WITH")
		}
	}
	return false
}

func indexFrom(s, sub string, from int) int {
	for i := from; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// keywordAt reports whether s has the keyword word (upper case) at i, in
// any case, followed by something that ends a word.
func keywordAt(s string, i int, word string) bool {
	if len(s) < i+len(word) {
		return false
	}
	for j := range len(word) {
		if c := s[i+j]; c != word[j] && c != word[j]+('a'-'A') {
			return false
		}
	}
	if len(s) == i+len(word) {
		return true
	}
	c := s[i+len(word)]
	return !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
}

// ReplicaStats is what /metrics reports of the routing of reads.
type ReplicaStats struct {
	// PrimaryReads are the reads of read-only operations the primary ran;
	// Fallbacks says why, by reason (down, lagging, behind_caller,
	// request_wrote, read_failed).
	PrimaryReads int64
	Fallbacks    map[string]int64
	Replicas     []ReplicaState
}

// ReplicaState is one replica as last checked, and the reads it answered.
type ReplicaState struct {
	Name  string
	Up    bool
	Lag   time.Duration
	Reads int64
}

// ReplicaStats reports the routing of reads; ok false without replicas.
func (db *DB) ReplicaStats() (stats ReplicaStats, ok bool) {
	s := db.replicas
	if s == nil {
		return stats, false
	}
	stats.PrimaryReads = s.primaryReads.Load()
	stats.Fallbacks = make(map[string]int64, fallbackReasons-1)
	for why := fallbackNone + 1; why < fallbackReasons; why++ {
		stats.Fallbacks[fallbackNames[why]] = s.fallbacks[why].Load()
	}
	for _, r := range s.list {
		stats.Replicas = append(stats.Replicas, ReplicaState{Name: r.name, Up: r.up.Load(),
			Lag: time.Duration(r.lag.Load()), Reads: r.reads.Load()})
	}
	return stats, true
}

// eachRowRouted is eachRow's pgx path under a route (a replica's,
// DB.routedRead, or a Citus worker's, DB.workerRead): the rows are read
// whole before scan sees any, so a replica or worker failing midway
// leaves nothing half scanned, and the read runs again on the primary.
func eachRowRouted(ctx context.Context, route func(context.Context, func(context.Context, *pgxpool.Pool) error) error,
	query string, args []any, scan func(scan func(dest ...any) error) error) error {
	var fields []pgconn.FieldDescription
	var values [][][]byte
	err := route(ctx, func(ctx context.Context, pool *pgxpool.Pool) error {
		fields, values = nil, nil
		rows, err := pool.Query(ctx, query, append([]any{pgx.QueryExecModeCacheStatement}, args...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if fields == nil {
				// Copied while the connection is held: once the rows are
				// done it goes back to the pool, and its next query
				// reuses the memory.
				fields = append([]pgconn.FieldDescription{}, rows.FieldDescriptions()...)
			}
			raw := rows.RawValues()
			row := make([][]byte, len(raw))
			for i, v := range raw {
				if v != nil {
					row[i] = append([]byte{}, v...)
				}
			}
			values = append(values, row)
		}
		return rows.Err()
	})
	if err != nil {
		return translate(err)
	}
	types := pgtype.NewMap()
	for _, row := range values {
		if err := scan(func(dest ...any) error { return pgx.ScanRow(types, fields, row, dest...) }); err != nil {
			return err
		}
	}
	return nil
}
