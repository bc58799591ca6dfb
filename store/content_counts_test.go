package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/pgtest"
)

// countsDrift is store.ContentCountsDrift, failing the test on an error.
func countsDrift(t *testing.T, db bun.IDB) []string {
	t.Helper()
	drift, err := store.ContentCountsDrift(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return drift
}

// TestContentCountsFollowEveryWrite: whatever writes spaces and collections
// (inserts of many rows at once, each column that decides a group changed,
// soft deletes and restores, purges, transfers to another organization,
// deleting an organization), the counts the database keeps equal the rows
// counted again, and LoadContentTotals and the groups read them.
func TestContentCountsFollowEveryWrite(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDB(t)
	ctx := context.Background()
	exec := func(s string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, s, args...); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
	}
	exec(`INSERT INTO organizations (id, title, created_at, updated_at) VALUES ('a', 'A', now(), now()), ('b', 'B', now(), now()), ('c', 'C', now(), now())`)
	steps := []struct {
		name string
		run  func()
	}{
		{"collections, nested", func() {
			exec(`INSERT INTO collections (id, organization_id, title, created_at, updated_at) VALUES
				('ca1', 'a', 'C', now(), now()), ('ca2', 'a', 'C', now(), now()), ('cb1', 'b', 'C', now(), now())`)
			exec(`INSERT INTO collections (id, organization_id, title, parent_id, default_level, created_at, updated_at) VALUES
				('ca3', 'a', 'C', 'ca1', NULL, now(), now())`)
		}},
		{"many spaces of three organizations in one statement", func() {
			exec(`INSERT INTO spaces (id, organization_id, title, revision_id, parent_id, default_level, visibility, created_at, updated_at)
				SELECT 's' || i, (ARRAY['a', 'b', 'c'])[1 + i % 3], 'S', 'r' || i,
					CASE WHEN i % 3 = 0 AND i % 4 = 1 THEN 'ca1' WHEN i % 3 = 0 AND i % 4 = 2 THEN 'ca3' WHEN i % 3 = 1 AND i % 2 = 0 THEN 'cb1' END,
					(ARRAY['inherit', NULL, 'read', 'edit'])[1 + i % 4], (ARRAY['private', 'in-collection', 'public'])[1 + i % 3], now(), now()
				FROM generate_series(1, 300) i`)
		}},
		{"a space moved, another's level and visibility changed", func() {
			exec(`UPDATE spaces SET parent_id = 'ca2' WHERE id = 's3'`)
			exec(`UPDATE spaces SET parent_id = NULL WHERE id = 's9'`)
			exec(`UPDATE spaces SET default_level = NULL, visibility = 'in-collection' WHERE id = 's6'`)
			exec(`UPDATE spaces SET title = 'renamed', revision_id = 'r6b' WHERE id = 's12'`)
		}},
		{"soft deletes and a restore", func() {
			exec(`UPDATE spaces SET deleted_at = now() - interval '8 days' WHERE id IN ('s15', 's18', 's21', 's1')`)
			exec(`UPDATE spaces SET deleted_at = NULL WHERE id = 's1'`)
			exec(`UPDATE spaces SET parent_id = 'ca2' WHERE id = 's15'`) // moved while deleted
		}},
		{"a purge", func() {
			if _, err := store.PurgeSpacesDeletedBefore(ctx, db, time.Now().Add(-7*24*time.Hour)); err != nil {
				t.Fatal(err)
			}
		}},
		{"a collection moved and its level changed, another deleted", func() {
			exec(`UPDATE collections SET parent_id = 'ca2', default_level = 'read' WHERE id = 'ca3'`)
			exec(`INSERT INTO collections (id, organization_id, title, created_at, updated_at) VALUES ('ca4', 'a', 'C', now(), now())`)
			exec(`DELETE FROM collections WHERE id = 'ca4'`)
		}},
		{"a collection with its spaces transferred, and a space", func() {
			var ids []string
			if err := db.NewRaw(`SELECT id FROM spaces WHERE organization_id = 'a' AND parent_id IN ('ca1', 'ca3')`).Scan(ctx, &ids); err != nil {
				t.Fatal(err)
			}
			err := store.RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
				return store.MoveToOrganization(ctx, tx, "a", "b", []string{"ca1", "ca3"}, append(ids, "s30"))
			})
			if err != nil {
				t.Fatal(err)
			}
		}},
		{"an organization deleted", func() {
			exec(`DELETE FROM organizations WHERE id = 'c'`)
		}},
	}
	for _, step := range steps {
		step.run()
		if drift := countsDrift(t, db); len(drift) > 0 {
			t.Fatalf("after %s, the kept counts differ from the rows:\n%s", step.name, strings.Join(drift, "\n"))
		}
	}
	// The check sees a count gone wrong.
	one := `organization_id = 'a' AND kind = 'space' AND parent_id = '' AND default_level = 'inherit' AND NOT in_collection`
	exec(`UPDATE content_counts SET n = n + 1 WHERE ` + one)
	if drift := countsDrift(t, db); len(drift) != 2 {
		t.Errorf("a group's count off by one: %q, want its group and its organization's total", drift)
	}
	exec(`UPDATE content_counts SET n = n - 1 WHERE ` + one)
	var left int
	if err := db.NewRaw(`SELECT (SELECT count(*) FROM content_counts WHERE organization_id = 'c') + (SELECT count(*) FROM organization_content_counts WHERE organization_id = 'c')`).Scan(ctx, &left); err != nil || left != 0 {
		t.Errorf("%d counts of the deleted organization are left (%v)", left, err)
	}
	for _, org := range []string{"a", "b"} {
		var spaces, collections int
		if err := db.NewRaw(`SELECT (SELECT count(*) FROM spaces WHERE organization_id = ? AND deleted_at IS NULL),
			(SELECT count(*) FROM collections WHERE organization_id = ?)`, org, org).Scan(ctx, &spaces, &collections); err != nil {
			t.Fatal(err)
		}
		got, err := store.LoadContentTotals(ctx, db, org)
		if err != nil || got.Spaces != spaces || got.Collections != collections {
			t.Errorf("%s: totals %+v (%v), want %d spaces and %d collections", org, got, err, spaces, collections)
		}
		groups, err := store.ContentGroups(ctx, db, org)
		n := 0
		for _, g := range groups {
			if g.Kind == store.CountedSpaces {
				n += g.N
			}
		}
		if err != nil || n != spaces {
			t.Errorf("%s: the groups hold %d spaces (%v), want %d", org, n, err, spaces)
		}
	}
}

// TestContentCountsUnderConcurrentWrites: writers moving spaces between
// groups in opposite directions, deleting and restoring them, inserting
// them, and transferring some between two organizations (under both
// organizations' locks, in a fixed order, as the application does), all at
// once: no deadlock, no error, and the counts equal the rows after.
func TestContentCountsUnderConcurrentWrites(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDB(t)
	ctx := context.Background()
	for _, s := range []string{
		`INSERT INTO organizations (id, title, created_at, updated_at) VALUES ('a', 'A', now(), now()), ('b', 'B', now(), now())`,
		`INSERT INTO collections (id, organization_id, title, created_at, updated_at)
			VALUES ('ca', 'a', 'C', now(), now()), ('cb', 'b', 'C', now(), now())`,
		`INSERT INTO spaces (id, organization_id, title, revision_id, created_at, updated_at)
			SELECT 's' || i, (ARRAY['a', 'b'])[1 + i % 2], 'S', 'r' || i, now(), now() FROM generate_series(1, 40) i`,
	} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	const workers, rounds = 8, 40
	var mu sync.Mutex
	var errs []string
	var wg sync.WaitGroup
	for w := range workers {
		rng := rand.New(rand.NewPCG(uint64(w), 48))
		wg.Go(func() {
			for i := range rounds {
				space := fmt.Sprintf("s%d", 1+rng.IntN(40))
				var err error
				switch rng.IntN(6) {
				case 0: // into the organization's collection, or out of it
					_, err = db.ExecContext(ctx, `UPDATE spaces SET parent_id = CASE WHEN parent_id IS NULL THEN 'c' || organization_id END WHERE id = ?`, space)
				case 1:
					_, err = db.ExecContext(ctx, `UPDATE spaces SET default_level = CASE WHEN default_level IS NULL THEN 'inherit' END,
						visibility = CASE WHEN visibility = 'private' THEN 'in-collection' ELSE 'private' END WHERE id = ?`, space)
				case 2:
					// The time is a value: Citus refuses now() inside a CASE of
					// a distributed table's UPDATE.
					_, err = db.ExecContext(ctx, `UPDATE spaces SET deleted_at = CASE WHEN deleted_at IS NULL THEN ?::timestamptz END WHERE id = ?`, time.Now(), space)
				case 3:
					_, err = db.ExecContext(ctx, `INSERT INTO spaces (id, organization_id, title, revision_id, parent_id, created_at, updated_at)
						VALUES (?, ?, 'S', ?, ?, now(), now())`, fmt.Sprintf("n%d-%d", w, i), []string{"a", "b"}[i%2], fmt.Sprintf("nr%d-%d", w, i),
						[]any{nil, "c" + []string{"a", "b"}[i%2]}[rng.IntN(2)])
				default: // a transfer, to whichever organization it is not in
					err = store.RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
						for _, org := range []string{"a", "b"} {
							if err := store.LockOrganization(ctx, tx, org); err != nil {
								return err
							}
						}
						var from []string
						if err := tx.NewRaw(`SELECT organization_id FROM spaces WHERE id = ?`, space).Scan(ctx, &from); err != nil || len(from) == 0 {
							return err
						}
						to := "a"
						if from[0] == "a" {
							to = "b"
						}
						if err := store.LockForTransfer(ctx, tx, from[0], []string{space}); err != nil {
							return err
						}
						if err := store.MoveToOrganization(ctx, tx, from[0], to, nil, []string{space}); err != nil {
							return err
						}
						_, err := tx.ExecContext(ctx, `UPDATE spaces SET parent_id = NULL WHERE id = ? AND organization_id = ?`, space, to)
						return err
					})
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err.Error())
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	slices.Sort(errs)
	if len(errs) > 0 {
		t.Errorf("%d writes failed (a deadlock would be one):\n%s", len(errs), strings.Join(slices.Compact(errs), "\n"))
	}
	if drift := countsDrift(t, db); len(drift) > 0 {
		t.Errorf("the kept counts differ from the rows:\n%s", strings.Join(drift, "\n"))
	}
}

// An install already distributed on a Citus cluster before migrations 0048
// and 0049 (their objects dropped again, and their record) takes them at
// its next start: the triggers go onto the distributed tables, the counts
// of the spaces it holds are filled, the two new tables are distributed
// with the rows they count (one colocation group), and the triggers keep
// them right on the workers.
func TestContentCountsMigrateOnADistributedSchemaOnCitus(t *testing.T) {
	t.Parallel()
	db := pgtest.SharedCitusCluster(t).NewDB(t, store.Options{MaxConns: 4})
	ctx := context.Background()
	exec := func(statements ...string) {
		t.Helper()
		for _, s := range statements {
			if _, err := db.ExecContext(ctx, s); err != nil {
				t.Fatalf("%v\n%s", err, s)
			}
		}
	}
	exec(`SET citus.enable_unsafe_triggers = on`,
		`DROP TRIGGER spaces_counted_insert ON spaces`, `DROP TRIGGER spaces_counted_delete ON spaces`, `DROP TRIGGER spaces_counted_update ON spaces`,
		`DROP TRIGGER collections_counted_insert ON collections`, `DROP TRIGGER collections_counted_delete ON collections`,
		`DROP TRIGGER collections_counted_update ON collections`,
		`DROP FUNCTION count_spaces()`, `DROP FUNCTION count_collections()`, `DROP FUNCTION count_content_rows`, `DROP FUNCTION add_content_counts`,
		`DROP TABLE content_counts`, `DROP TABLE organization_content_counts`,
		`DROP INDEX IF EXISTS collections_org_created_idx`, `DROP INDEX IF EXISTS collections_org_parent_position_idx`,
		`DELETE FROM bun_migrations WHERE name LIKE '0048%' OR name LIKE '0049%'`,
		`INSERT INTO organizations (id, title, created_at, updated_at) VALUES ('a', 'A', now(), now()), ('b', 'B', now(), now())`,
		`INSERT INTO spaces (id, organization_id, title, revision_id, created_at, updated_at)
			SELECT 's' || i, (ARRAY['a', 'b'])[1 + i % 2], 'S', 'r' || i, now(), now() FROM generate_series(1, 20) i`)
	if err := db.Migrate(ctx, nil); err != nil {
		t.Fatalf("the migrations on a distributed schema: %v", err)
	}
	var placed []string
	err := db.NewRaw(`SELECT p.logicalrelid::regclass::text FROM pg_dist_partition p
		JOIN pg_dist_partition s ON s.logicalrelid = 'spaces'::regclass AND s.colocationid = p.colocationid
		WHERE p.partmethod = 'h' AND p.logicalrelid::regclass::text IN ('content_counts', 'organization_content_counts')`).Scan(ctx, &placed)
	if err != nil || len(placed) != 2 {
		t.Errorf("distributed with spaces: %v (%v), want both tables of counts", placed, err)
	}
	exec(`INSERT INTO spaces (id, organization_id, title, revision_id, created_at, updated_at)
			SELECT 'n' || i, (ARRAY['a', 'b'])[1 + i % 2], 'S', 'nr' || i, now(), now() FROM generate_series(1, 7) i`,
		`UPDATE spaces SET deleted_at = now() WHERE id IN ('s1', 's2', 'n3')`,
		`DELETE FROM spaces WHERE id = 's4'`)
	if drift := countsDrift(t, db); len(drift) > 0 {
		t.Errorf("the kept counts differ from the rows:\n%s", strings.Join(drift, "\n"))
	}
	// a: s2..s20 even (10), n2, n4, n6 (3); less s2 and s4.
	if got, err := store.LoadContentTotals(ctx, db, "a"); err != nil || got.Spaces != 11 {
		t.Errorf("a's totals: %+v (%v), want 11 spaces", got, err)
	}
}
