package store

import (
	"context"
	"embed"
	"fmt"
	"log/slog"

	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
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
func (db *DB) Migrate(ctx context.Context, log *slog.Logger) error {
	conn, err := db.DB.Conn(ctx)
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
	migrator := migrate.NewMigrator(db.DB, migrations, migrate.WithMarkAppliedOnSuccess(true))
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

	riverMigrator, err := rivermigrate.New(riverpgxv5.New(db.Pool), nil)
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
	return nil
}
