package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/pgtest"
)

// migrationLockKey is store's: "docsapi" in ASCII.
const migrationLockKey int64 = 0x646f6373617069

// The pool's statement timeout cuts the application's statements, not the
// migrations (here waiting for another instance's, longer than the timeout)
// nor maintenance run unhurried.
func TestStatementTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 100 * time.Millisecond
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	db, err := store.OpenWith(ctx, url, store.Options{MaxConns: 4, StatementTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	var setting string
	if err := db.Pool.QueryRow(ctx, "SHOW statement_timeout").Scan(&setting); err != nil || setting != "100ms" {
		t.Fatalf("statement_timeout of the pool: %q, %v", setting, err)
	}
	if _, err := db.ExecContext(ctx, "SELECT pg_sleep(1)"); !store.IsTimeout(err) {
		t.Fatalf("a statement longer than the timeout: %v", err)
	}
	err = store.RunUnhurried(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.ExecContext(ctx, "SELECT pg_sleep(0.3)")
		return err
	})
	if err != nil {
		t.Fatalf("unhurried: %v", err)
	}
	// SET LOCAL ended with the transaction.
	if _, err := db.ExecContext(ctx, "SELECT pg_sleep(1)"); !store.IsTimeout(err) {
		t.Fatalf("after an unhurried transaction: %v", err)
	}

	// Another instance migrating: it holds the migration lock.
	other, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	if _, err := other.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLockKey); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- db.Migrate(ctx, nil) }()
	select {
	case err := <-done:
		t.Fatalf("Migrate did not wait for the lock: %v", err)
	case <-time.After(5 * timeout):
	}
	if _, err := other.Exec(ctx, "SELECT pg_advisory_unlock($1)", migrationLockKey); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Migrate after waiting longer than the statement timeout: %v", err)
	}
}
