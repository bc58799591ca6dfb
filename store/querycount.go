package store

import (
	"context"
	"sync/atomic"

	"github.com/uptrace/bun"
)

// QueryCounter counts the SQL queries run on behalf of one request. Middleware
// puts one in the request context; tests assert on it so an N+1 fails a test,
// and with DOCSAPI_DEBUG=1 responses report it.
type QueryCounter struct {
	n atomic.Int64
	// record, when set (store's tests: export_test.go), is also given each
	// statement: its SQL and, for the pgx reads, its arguments (bun's
	// statements carry theirs inline).
	record func(sql string, args []any)
}

// count counts a statement.
func (c *QueryCounter) count(sql string, args []any) {
	c.n.Add(1)
	if c.record != nil {
		c.record(sql, args)
	}
}

// Count is the number of queries so far.
func (c *QueryCounter) Count() int64 { return c.n.Load() }

type queryCounterKey struct{}

// WithQueryCounter returns a context whose queries are counted by the returned counter.
func WithQueryCounter(ctx context.Context) (context.Context, *QueryCounter) {
	c := &QueryCounter{}
	return context.WithValue(ctx, queryCounterKey{}, c), c
}

// QueryCounterFrom returns the counter of ctx, or nil.
func QueryCounterFrom(ctx context.Context) *QueryCounter {
	c, _ := ctx.Value(queryCounterKey{}).(*QueryCounter)
	return c
}

type queryCountHook struct{}

func (queryCountHook) BeforeQuery(ctx context.Context, e *bun.QueryEvent) context.Context {
	if c := QueryCounterFrom(ctx); c != nil {
		c.count(e.Query, nil)
	}
	return ctx
}

func (queryCountHook) AfterQuery(context.Context, *bun.QueryEvent) {}
