package store

import (
	"context"
	"errors"
	"reflect"
	"slices"

	"github.com/uptrace/bun"
)

// Every tenant row is found by its organization as well as its id: on a
// Citus cluster the organization says which shard holds the row, and a
// locking read must name it (Citus locks rows of one shard only).

// lockRow reads row id of table, locked with lock (FOR lock) until the
// transaction of db ends, through scan, which runs the query it is given
// (selecting from table, filtered by the row's id and organization).
// org is the organization the caller read the row in, or "" when it does
// not know it: a lookup by id (which asks every shard) finds it then.
//
// A transfer to another organization moves a row by copying it there and
// deleting it where it was: a lock that waited for a transfer finds
// nothing in the old organization, and the row is looked up by id again
// and locked where it went (once: a row moved twice meanwhile is not
// found). The caller goes on with the organization the row has now,
// which scan read.
//
// Of a space, collection or site the directory (directory.go) may know
// the organization: it is tried first, and forgotten if the row is not
// found there.
func lockRow(ctx context.Context, db bun.IDB, table, org, id, lock string, scan func(*bun.SelectQuery) error) error {
	dir := directoryOf(ctx, db)
	lookups := 0
	if org == "" && directoryTables[table] {
		org, _ = dir.placed(table, id)
	}
	existed := org != ""
	settling := 0
	for lookups < 2 {
		if org == "" {
			lookups++
			err := db.NewSelect().Table(table).Column("organization_id").Where("id = ?", id).Limit(1).Scan(ctx, &org)
			if errors.Is(translate(err), ErrNotFound) && existed && dir.settle(ctx, settling) {
				// Found nowhere, though it existed: on a cluster it may be
				// moving between two workers (directory.settle).
				settling++
				lookups--
				continue
			}
			if err != nil {
				return translate(err)
			}
		}
		existed = true
		q := db.NewSelect().Where("id = ? AND organization_id = ?", id, org).For(lock)
		if err := translate(scan(q)); !errors.Is(err, ErrNotFound) {
			if err == nil && directoryTables[table] {
				dir.remember(table, id, org)
			}
			return err
		}
		if directoryTables[table] {
			dir.forget(table, []string{id})
		}
		org = ""
	}
	return ErrNotFound
}

// inParentOrganization fills *org, when the caller did not know it, with
// the organization of its parent (row parentID of parentTable): a child
// always belongs to its parent's organization, and it must be known before
// the insert, which on a Citus cluster goes to that organization's shard
// (no subquery inside an insert can find it there). The parent is
// share-locked until the transaction ends (FOR KEY SHARE, as the foreign
// key check would): a transfer moving it finishes first, and the child
// goes where the parent went (lockRow). Callers that have read the parent
// pass its organization, and the foreign key check does the rest.
func inParentOrganization(ctx context.Context, db bun.IDB, org *string, parentTable, parentID string) error {
	if *org != "" {
		return nil
	}
	return lockRow(ctx, db, parentTable, "", parentID, "KEY SHARE", func(q *bun.SelectQuery) error {
		return q.Table(parentTable).Column("organization_id").Scan(ctx, org)
	})
}

// keyed is an UPDATE or DELETE of one row by its primary key.
type keyed[Q any] interface {
	WherePK(cols ...string) Q
	Where(query string, args ...any) Q
}

// byKey narrows q to row: its primary key, and its organization when its
// table has one that the key does not hold. Most tenant tables' keys are
// (id, organization_id) in the database (migration 0042) while the models
// name the id alone, which finds the row on one PostgreSQL; on a Citus
// cluster a statement that does not name the organization is sent to
// every shard, and fails while any worker is down.
func byKey[Q keyed[Q]](db bun.IDB, q Q, row any) Q {
	q = q.WherePK()
	v := reflect.Indirect(reflect.ValueOf(row))
	table := db.Dialect().Tables().Get(v.Type())
	org, ok := table.FieldMap["organization_id"]
	if !ok || slices.Contains(table.PKs, org) || org.HasZeroValue(v) {
		// A row read without its organization is still found by its id
		// alone (on every shard).
		return q
	}
	return q.Where("?TableAlias.organization_id = ?", org.Value(v).Interface())
}
