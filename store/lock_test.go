package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// A locked space (a merge holds it) does not stop rows that merely refer to
// it from being written: their foreign key check must not wait for the lock.
// It did with FOR UPDATE, and a review submitted with a comment while the
// same change request merged deadlocked.
func TestLockedSpaceLetsReferringRowsIn(t *testing.T) {
	db := pgtest.NewDB(t)
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO organizations (id, title, created_at, updated_at) VALUES ('o', 'O', now(), now())`,
		`INSERT INTO spaces (id, organization_id, title, revision_id, created_at, updated_at) VALUES ('s', 'o', 'S', 'r', now(), now())`,
		`INSERT INTO sites (id, organization_id, title, share_key, created_at, updated_at) VALUES ('site', 'o', 'Site', 'k', now(), now())`,
	} {
		if _, err := db.Pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	locked := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- store.RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
			if _, err := store.LockSpace(ctx, tx, "o", "s"); err != nil {
				return err
			}
			close(locked)
			<-release
			return nil
		})
	}()
	<-locked
	insert, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := db.Pool.Exec(insert, `INSERT INTO site_spaces (id, organization_id, site_id, space_id, path, position, created_at)
		VALUES ('ss', 'o', 'site', 's', 'p', 0, now())`)
	close(release)
	if err != nil {
		t.Fatalf("a row referring to the locked space could not be written: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A space purged between a restore's read and its write (at the end of its
// retention) is not restored: the write finds no row, and says so, where it
// used to answer the restore as done.
func TestUpdateOfAPurgedSpaceIsNotFound(t *testing.T) {
	db := pgtest.NewDB(t)
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO organizations (id, title, created_at, updated_at) VALUES ('o', 'O', now(), now())`,
		`INSERT INTO spaces (id, organization_id, title, revision_id, created_at, updated_at, deleted_at)
			VALUES ('s', 'o', 'S', 'r', now(), now(), now() - interval '8 days')`,
	} {
		if _, err := db.Pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s, err := store.GetSpace(ctx, db, "s")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := store.PurgeSpacesDeletedBefore(ctx, db, time.Now().Add(-7*24*time.Hour)); err != nil || n != 1 {
		t.Fatalf("purge: %d, %v", n, err)
	}
	s.DeletedAt = nil
	if err := store.UpdateSpace(ctx, db, s, "deleted_at"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("restoring a purged space: %v, want ErrNotFound", err)
	}
}
