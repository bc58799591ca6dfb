package store

import (
	"context"
	"embed"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/migrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLockKey is the advisory lock that serialises migrations when
// several instances start at once ("docsapi" in ASCII).
const migrationLockKey = 0x646f6373617069

// Migrate applies our migrations, then River's, holding a session-level
// advisory lock for the whole run. A migration is marked applied only after it
// succeeded, so a failed one is retried on the next start.
//
// They run on a small pool of their own without the statement timeout:
// rewriting a large table or building an index may take longer than any
// request should, and waiting for another instance's migrations (the
// advisory lock) is no stuck statement either.
func (db *DB) Migrate(ctx context.Context, log *slog.Logger) error {
	cfg := db.Pool.Config()
	cfg.ConnConfig.RuntimeParams["statement_timeout"] = "0"
	cfg.MinConns, cfg.MaxConns = 0, 4
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("store: connect for migrations: %w", err)
	}
	defer pool.Close()
	mdb := bun.NewDB(stdlib.OpenDBFromPool(pool), pgdialect.New())
	defer mdb.Close()

	conn, err := mdb.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(?)", migrationLockKey); err != nil {
		return fmt.Errorf("store: take migration lock: %w", err)
	}
	defer func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(?)", migrationLockKey)
	}()

	migrations := migrate.NewMigrations()
	if err := migrations.Discover(migrationFiles); err != nil {
		return fmt.Errorf("store: read migrations: %w", err)
	}
	migrator := migrate.NewMigrator(mdb, migrations, migrate.WithMarkAppliedOnSuccess(true))
	if err := migrator.Init(ctx); err != nil {
		return fmt.Errorf("store: init migrations: %w", err)
	}
	group, err := migrator.Migrate(ctx)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	if !group.IsZero() && log != nil {
		log.Info("applied migrations", "group", group.ID, "migrations", group.Migrations.String())
	}

	if err := distribute(ctx, mdb, log); err != nil {
		return err
	}

	riverMigrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return err
	}
	res, err := riverMigrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return fmt.Errorf("store: migrate river: %w", err)
	}
	if len(res.Versions) > 0 && log != nil {
		log.Info("applied river migrations", "count", len(res.Versions))
	}
	if db.workers != nil {
		// The tables are distributed now: the workers can take reads
		// without waiting for their next check.
		db.workers.check(ctx)
	}
	return nil
}
