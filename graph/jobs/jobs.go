// Package jobs runs the server's background work on River, a job queue kept
// in PostgreSQL: jobs survive restarts, run once across many instances, and
// share the database pool.
package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/uptrace/bun"
	"go.opentelemetry.io/otel/trace"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/store"
)

// Config configures the job runner.
type Config struct {
	DB *store.DB
	// Resolver does the work of the domain jobs (OpenAPI specs, translations,
	// conversation insights).
	Resolver *graph.Resolver
	// Clock is the application's clock (retention math uses it; tests move it).
	Clock func() time.Time
	Log   *slog.Logger
	// PurgeInterval is how often deleted spaces past retention are removed
	// (default hourly). The purge also runs when the runner starts.
	PurgeInterval time.Duration
	// SweepInterval is how often work left pending (OpenAPI specs,
	// translation runs, conversations to process) is enqueued again
	// (default a minute).
	SweepInterval time.Duration
	// PollInterval is how often River looks for jobs besides its notifications
	// (default River's, 1s; tests shorten it).
	PollInterval time.Duration
	// Tracing, when set, gives each job a span (graph.JobMiddleware).
	Tracing trace.TracerProvider
}

// Runner is a started River client.
type Runner struct {
	*river.Client[pgx.Tx]
}

// Start starts the workers and the periodic jobs.
func Start(ctx context.Context, cfg Config) (*Runner, error) {
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.PurgeInterval == 0 {
		cfg.PurgeInterval = time.Hour
	}
	if cfg.SweepInterval == 0 {
		cfg.SweepInterval = time.Minute
	}
	if cfg.Resolver == nil {
		return nil, fmt.Errorf("jobs: no resolver")
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &retentionWorker[PurgeDeletedSpaces]{db: cfg.DB, clock: cfg.Clock, log: cfg.Log,
		what: "deleted spaces", retention: graph.SpaceRetention, remove: store.PurgeSpacesDeletedBefore,
		then: func(ctx context.Context, now time.Time) error {
			return collectBlobs(ctx, cfg.DB, cfg.Resolver.Blobs, now, cfg.Log)
		}})
	river.AddWorker(workers, &retentionWorker[PruneLiveEvents]{db: cfg.DB, clock: cfg.Clock, log: cfg.Log,
		what: "live events", retention: LiveEventRetention, remove: store.PruneLiveEvents})
	river.AddWorker(workers, &retentionWorker[PruneExpiredTokens]{db: cfg.DB, clock: cfg.Clock, log: cfg.Log,
		what: "expired API tokens", retention: 0, remove: store.DeleteTokensExpiredBy})
	// Each domain job's work is a Resolver method (the domain's file in graph/).
	river.AddWorker(workers, &resolverWorker[graph.ProcessOpenAPISpecArgs]{timeout: 10 * time.Minute, // the fetches have their own, shorter, limits
		work: func(ctx context.Context, a graph.ProcessOpenAPISpecArgs) error {
			return cfg.Resolver.ProcessOpenAPISpec(ctx, a.SpecID)
		}})
	river.AddWorker(workers, &resolverWorker[graph.RunTranslationArgs]{timeout: 30 * time.Minute, // a provider request per page
		work: func(ctx context.Context, a graph.RunTranslationArgs) error {
			return cfg.Resolver.RunTranslation(ctx, a.TranslationID)
		}})
	river.AddWorker(workers, &resolverWorker[graph.ProcessConversationsArgs]{timeout: 30 * time.Minute, // a provider request per conversation
		work: func(ctx context.Context, a graph.ProcessConversationsArgs) error {
			return cfg.Resolver.ProcessConversations(ctx, a.OrganizationID)
		}})
	river.AddWorker(workers, &deliverIntegrationEvent{res: cfg.Resolver})
	river.AddWorker(workers, &sweepUnfinished{res: cfg.Resolver})
	cooldown := time.Duration(0) // River's default
	if cfg.PollInterval > 0 && cfg.PollInterval < river.FetchCooldownDefault {
		cooldown = cfg.PollInterval
	}
	client, err := river.NewClient(riverpgxv5.New(cfg.DB.Pool), &river.Config{
		Logger:            cfg.Log,
		Middleware:        graph.JobMiddleware(cfg.Tracing),
		FetchPollInterval: cfg.PollInterval,
		FetchCooldown:     cooldown,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		Workers:           workers,
		PeriodicJobs: []*river.PeriodicJob{
			river.NewPeriodicJob(river.PeriodicInterval(cfg.PurgeInterval),
				func() (river.JobArgs, *river.InsertOpts) { return PurgeDeletedSpaces{}, nil },
				&river.PeriodicJobOpts{ID: "purge_deleted_spaces", RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(cfg.PurgeInterval),
				func() (river.JobArgs, *river.InsertOpts) { return PruneLiveEvents{}, nil },
				&river.PeriodicJobOpts{ID: "prune_live_events", RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(cfg.PurgeInterval),
				func() (river.JobArgs, *river.InsertOpts) { return PruneExpiredTokens{}, nil },
				&river.PeriodicJobOpts{ID: "prune_expired_tokens", RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(cfg.SweepInterval),
				func() (river.JobArgs, *river.InsertOpts) { return SweepUnfinished{}, nil },
				&river.PeriodicJobOpts{ID: "sweep_unfinished", RunOnStart: true}),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	if err := client.Start(ctx); err != nil {
		return nil, fmt.Errorf("jobs: start: %w", err)
	}
	return &Runner{client}, nil
}

// Stop lets running jobs finish (up to ctx) and stops the runner.
func (r *Runner) Stop(ctx context.Context) error { return r.Client.Stop(ctx) }

// PurgeDeletedSpaces removes for good the spaces deleted longer ago than the
// retention period, then the blobs nothing refers to any more (blobs.go).
// It is idempotent: running it twice removes nothing more.
type PurgeDeletedSpaces struct{}

// Kind names the job in River's table.
func (PurgeDeletedSpaces) Kind() string { return "purge_deleted_spaces" }

// retentionWorker removes for good what is older than its retention: the
// purge and prune jobs.
type retentionWorker[T river.JobArgs] struct {
	river.WorkerDefaults[T]
	db        *store.DB
	clock     func() time.Time
	log       *slog.Logger
	what      string
	retention time.Duration
	remove    func(ctx context.Context, db bun.IDB, before time.Time) (int64, error)
	// then, when set, runs after the removal committed.
	then func(ctx context.Context, now time.Time) error
}

func (w *retentionWorker[T]) Work(ctx context.Context, _ *river.Job[T]) error {
	cutoff := w.clock().Add(-w.retention)
	// Removing a backlog (the spaces of a large organization, with their
	// content) may take longer than the statement timeout made for
	// requests; Timeout bounds it instead.
	var n int64
	err := store.RunUnhurried(ctx, w.db, func(ctx context.Context, tx bun.Tx) (err error) {
		n, err = w.remove(ctx, tx, cutoff)
		return err
	})
	if err != nil {
		return err
	}
	if n > 0 && w.log != nil {
		w.log.InfoContext(ctx, "removed "+w.what, "count", n, "before", cutoff)
	}
	if w.then != nil {
		return w.then(ctx, w.clock())
	}
	return nil
}

// Timeout bounds a removal, longer than River's default minute, which is
// made for short jobs. A removal cut short is rolled back whole and retried.
func (w *retentionWorker[T]) Timeout(*river.Job[T]) time.Duration { return 10 * time.Minute }

// resolverWorker runs a domain job: its work is a Resolver method.
type resolverWorker[T river.JobArgs] struct {
	river.WorkerDefaults[T]
	work    func(context.Context, T) error
	timeout time.Duration
}

func (w *resolverWorker[T]) Work(ctx context.Context, job *river.Job[T]) error {
	return w.work(ctx, job.Args)
}

func (w *resolverWorker[T]) Timeout(*river.Job[T]) time.Duration { return w.timeout }

// LiveEventRetention is how long live events (graph/subscription.go) are
// kept as a history of who changed what.
const LiveEventRetention = 7 * 24 * time.Hour

// PruneLiveEvents deletes the live events older than LiveEventRetention
// (hourly, with the purge). It is idempotent.
type PruneLiveEvents struct{}

// Kind names the job in River's table.
func (PruneLiveEvents) Kind() string { return "prune_live_events" }

// PruneExpiredTokens deletes the API tokens that have expired (those of
// sign-ins; hourly, with the purge). It is idempotent.
type PruneExpiredTokens struct{}

// Kind names the job in River's table.
func (PruneExpiredTokens) Kind() string { return "prune_expired_tokens" }

// deliverIntegrationEvent makes an integration event's next delivery
// attempt (graph/delivery.go) and waits (snoozes) until the one after: the
// attempts are counted on the event, not by River, whose own retries are
// left for errors of the database.
type deliverIntegrationEvent struct {
	river.WorkerDefaults[graph.DeliverIntegrationEventArgs]
	res *graph.Resolver
}

func (w *deliverIntegrationEvent) Work(ctx context.Context, job *river.Job[graph.DeliverIntegrationEventArgs]) error {
	wait, err := w.res.DeliverIntegrationEvent(ctx, job.Args.IntegrationEventID)
	if err == nil && wait > 0 {
		return river.JobSnooze(wait)
	}
	return err
}

// Timeout leaves an attempt the outbound client's time limit, and some.
func (w *deliverIntegrationEvent) Timeout(*river.Job[graph.DeliverIntegrationEventArgs]) time.Duration {
	return w.res.Outbound.Timeout() + time.Minute
}

// SweepUnfinished enqueues the work left pending: an enqueue after a commit
// that failed, or a job that died while working (OpenAPI specs, translation
// runs, deliveries of integration events, conversations to process). Each
// job claims its item, so an item enqueued twice is done once.
type SweepUnfinished struct{}

// Kind names the job in River's table.
func (SweepUnfinished) Kind() string { return "sweep_unfinished" }

type sweepUnfinished struct {
	river.WorkerDefaults[SweepUnfinished]
	res *graph.Resolver
}

func (w *sweepUnfinished) Work(ctx context.Context, _ *river.Job[SweepUnfinished]) error {
	var params []river.InsertManyParams
	specs, err := w.res.OpenAPISpecsToProcess(ctx)
	if err != nil {
		return err
	}
	for _, id := range specs {
		params = append(params, river.InsertManyParams{Args: graph.ProcessOpenAPISpecArgs{SpecID: id}})
	}
	translations, err := w.res.TranslationsToRun(ctx)
	if err != nil {
		return err
	}
	for _, id := range translations {
		params = append(params, river.InsertManyParams{Args: graph.RunTranslationArgs{TranslationID: id}})
	}
	deliveries, err := w.res.DeliveriesToSend(ctx)
	if err != nil {
		return err
	}
	for _, id := range deliveries {
		params = append(params, river.InsertManyParams{Args: graph.DeliverIntegrationEventArgs{IntegrationEventID: id}})
	}
	orgs, err := w.res.ConversationsToProcess(ctx)
	if err != nil {
		return err
	}
	for _, id := range orgs {
		params = append(params, river.InsertManyParams{Args: graph.ProcessConversationsArgs{OrganizationID: id}})
	}
	if len(params) == 0 {
		return nil
	}
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return err
	}
	_, err = client.InsertMany(ctx, params)
	return err
}
