package graph

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// jobClient inserts jobs from request handlers: an insert-only River client
// on the shared pool, made on first use (the workers run in graph/jobs).
type jobClient struct {
	once   sync.Once
	client *river.Client[pgx.Tx]
	err    error
}

func (r *Resolver) jobs() (*river.Client[pgx.Tx], error) {
	r.jobClient.once.Do(func() {
		r.jobClient.client, r.jobClient.err = river.NewClient(riverpgxv5.New(r.DB.Pool), &river.Config{Logger: r.Log, Middleware: JobMiddleware(r.Tracing)})
	})
	return r.jobClient.client, r.jobClient.err
}

// enqueue asks for background work after the change that made it due
// committed (an OpenAPI spec to process, a translation to run). A failure is
// logged, not returned: the item stays pending in its table, and the
// periodic sweep (graph/jobs) enqueues it later.
func (r *Resolver) enqueue(ctx context.Context, args river.JobArgs) {
	client, err := r.jobs()
	if err == nil {
		_, err = client.Insert(context.WithoutCancel(ctx), args, nil)
	}
	if err != nil && r.Log != nil {
		r.Log.WarnContext(ctx, "enqueueing a job; the sweep will retry", "kind", args.Kind(), "args", args, "err", err)
	}
}
