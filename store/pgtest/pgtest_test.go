package pgtest_test

import (
	"context"
	"testing"

	"github.com/docsapi/docsapi/store/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestDatabasesAreMigratedAndIsolated(t *testing.T) {
	t.Parallel()
	a, b := pgtest.NewDB(t), pgtest.NewDB(t)
	ctx := context.Background()
	if _, err := a.ExecContext(ctx, "INSERT INTO users (id, email, display_name, created_at, updated_at) VALUES ('u1', 'a@example.com', 'A', now(), now())"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.QueryRowContext(ctx, "SELECT count(*) FROM users").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("database b sees %d users inserted into a", n)
	}
	if err := a.QueryRowContext(ctx, "SELECT count(*) FROM river_job").Scan(&n); err != nil {
		t.Fatalf("river tables missing: %v", err)
	}
}
