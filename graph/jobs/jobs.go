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
	// Clock is the application's clock (retention math uses it; tests move it).
	Clock func() time.Time
	Log   *slog.Logger
	// PurgeInterval is how often deleted spaces past retention are removed
	// (default hourly). The purge also runs when the runner starts.
	PurgeInterval time.Duration
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
	workers := river.NewWorkers()
	river.AddWorker(workers, &purgeDeletedSpaces{db: cfg.DB, clock: cfg.Clock, log: cfg.Log})
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
