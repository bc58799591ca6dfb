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

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/store"
)

// Config configures the job runner.
type Config struct {
	DB *store.DB
	// Resolver does the work of the domain jobs (OpenAPI specs).
	Resolver *graph.Resolver
	// Clock is the application's clock (retention math uses it; tests move it).
	Clock func() time.Time
	Log   *slog.Logger
	// PurgeInterval is how often deleted spaces past retention are removed
	// (default hourly). The purge also runs when the runner starts.
	PurgeInterval time.Duration
	// OpenAPISweepInterval is how often specs left pending are enqueued
	// again (default a minute).
	OpenAPISweepInterval time.Duration
	// PollInterval is how often River looks for jobs besides its notifications
	// (default River's, 1s; tests shorten it).
	PollInterval time.Duration
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
	if cfg.OpenAPISweepInterval == 0 {
		cfg.OpenAPISweepInterval = time.Minute
	}
	if cfg.Resolver == nil {
		return nil, fmt.Errorf("jobs: no resolver")
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &purgeDeletedSpaces{db: cfg.DB, clock: cfg.Clock, log: cfg.Log})
	river.AddWorker(workers, &processOpenAPISpec{res: cfg.Resolver})
	river.AddWorker(workers, &sweepOpenAPISpecs{res: cfg.Resolver})
	cooldown := time.Duration(0) // River's default
	if cfg.PollInterval > 0 && cfg.PollInterval < river.FetchCooldownDefault {
		cooldown = cfg.PollInterval
	}
	client, err := river.NewClient(riverpgxv5.New(cfg.DB.Pool), &river.Config{
		Logger:            cfg.Log,
		FetchPollInterval: cfg.PollInterval,
		FetchCooldown:     cooldown,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		Workers:           workers,
		PeriodicJobs: []*river.PeriodicJob{
			river.NewPeriodicJob(river.PeriodicInterval(cfg.PurgeInterval),
				func() (river.JobArgs, *river.InsertOpts) { return PurgeDeletedSpaces{}, nil },
				&river.PeriodicJobOpts{ID: "purge_deleted_spaces", RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(cfg.OpenAPISweepInterval),
				func() (river.JobArgs, *river.InsertOpts) { return SweepOpenAPISpecs{}, nil },
				&river.PeriodicJobOpts{ID: "sweep_openapi_specs", RunOnStart: true}),
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
// retention period. It is idempotent: running it twice removes nothing more.
type PurgeDeletedSpaces struct{}

// Kind names the job in River's table.
func (PurgeDeletedSpaces) Kind() string { return "purge_deleted_spaces" }

type purgeDeletedSpaces struct {
	river.WorkerDefaults[PurgeDeletedSpaces]
	db    *store.DB
	clock func() time.Time
	log   *slog.Logger
}

func (w *purgeDeletedSpaces) Work(ctx context.Context, _ *river.Job[PurgeDeletedSpaces]) error {
	cutoff := w.clock().Add(-graph.SpaceRetention)
	n, err := store.PurgeSpacesDeletedBefore(ctx, w.db, cutoff)
	if err != nil {
		return err
	}
	if n > 0 && w.log != nil {
		w.log.InfoContext(ctx, "purged deleted spaces", "count", n, "deletedBefore", cutoff)
	}
	return nil
}

// processOpenAPISpec fetches and processes a spec (graph/openapi_spec_process.go).
type processOpenAPISpec struct {
	river.WorkerDefaults[graph.ProcessOpenAPISpecArgs]
	res *graph.Resolver
}

func (w *processOpenAPISpec) Work(ctx context.Context, job *river.Job[graph.ProcessOpenAPISpecArgs]) error {
	return w.res.ProcessOpenAPISpec(ctx, job.Args.SpecID)
}

// Timeout leaves the processing its own, shorter, time limits.
func (w *processOpenAPISpec) Timeout(*river.Job[graph.ProcessOpenAPISpecArgs]) time.Duration {
	return 10 * time.Minute
}

// SweepOpenAPISpecs enqueues the specs left pending: an enqueue after a
// commit that failed, or a job that died while processing.
type SweepOpenAPISpecs struct{}

// Kind names the job in River's table.
func (SweepOpenAPISpecs) Kind() string { return "sweep_openapi_specs" }

type sweepOpenAPISpecs struct {
	river.WorkerDefaults[SweepOpenAPISpecs]
	res *graph.Resolver
}

func (w *sweepOpenAPISpecs) Work(ctx context.Context, _ *river.Job[SweepOpenAPISpecs]) error {
	ids, err := w.res.OpenAPISpecsToProcess(ctx)
	if err != nil || len(ids) == 0 {
		return err
	}
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return err
	}
	params := make([]river.InsertManyParams, len(ids))
	for i, id := range ids {
		params[i] = river.InsertManyParams{Args: graph.ProcessOpenAPISpecArgs{SpecID: id}}
	}
	_, err = client.InsertMany(ctx, params)
	return err
}
