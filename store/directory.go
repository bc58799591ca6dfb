package store

import (
	"context"
	"maps"
	"slices"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Routes and top-level fields name a space, collection or site by its id
// alone, and signed download addresses a revision
// (GET /v1/spaces/{id}). Every read of a tenant row names its organization
// too: on a Citus cluster that is what sends the read to one shard group
// rather than to every shard, and on one PostgreSQL it costs nothing (the
// keys lead with the id). The directory says which organization holds such
// an id, from memory once it has been asked: a space or collection changes
// organization only by a transfer, which moves its rows, and an answer gone
// stale shows itself, since the read in that organization then finds
// nothing: the reader forgets it and asks again (readByIDs). Nothing needs
// telling other processes. (Sites never change organization.)
type directory struct {
	entries *lru.Cache[directoryKey, string]
	// betweenNodes: the database is a Citus cluster, where a transfer
	// between organizations on two workers commits on each in turn, so
	// that for a moment its rows are on neither (Citus has no snapshot
	// across nodes); a row that existed and is found nowhere is looked for
	// again after that moment (settle).
	betweenNodes bool
}

// settleTries is how many times a row that existed and is found nowhere
// is looked for again on a Citus cluster, pausing settlePause, twice as
// long each time (75 ms in all): a transfer's commit reaches its two
// workers within a few milliseconds.
const (
	settleTries = 4
	settlePause = 5 * time.Millisecond
)

// settle pauses before the try-th (from 0) look for rows that existed
// and were found nowhere, and reports whether to look again: never on
// one PostgreSQL, where a transfer's commit is one moment for every
// reader.
func (d *directory) settle(ctx context.Context, try int) bool {
	if d == nil || !d.betweenNodes || try >= settleTries {
		return false
	}
	t := time.NewTimer(settlePause << try)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

type directoryKey struct{ table, id string }

// directoryEntries bounds the ids remembered (about 100 bytes each).
const directoryEntries = 200_000

func newDirectory() *directory {
	entries, err := lru.New[directoryKey, string](directoryEntries)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &directory{entries: entries}
}

type directoryCtxKey struct{}

// directoryOf is the directory of the DB db is, or whose transaction it
// is (RunInTx keeps it in the context); nil when there is none (a query
// then looks every id up).
func directoryOf(ctx context.Context, db bun.IDB) *directory {
	if d, ok := db.(*DB); ok {
		return d.dir
	}
	dir, _ := ctx.Value(directoryCtxKey{}).(*directory)
	return dir
}

// organizationsOf maps each of ids that names a row of table to its
// organization: from memory, and for the rest one query by id (which asks
// every shard).
func (d *directory) organizationsOf(ctx context.Context, db bun.IDB, table string, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	var missing []string
	for _, id := range ids {
		if d != nil {
			if org, ok := d.entries.Get(directoryKey{table, id}); ok {
				out[id] = org
				continue
			}
		}
		missing = append(missing, id)
	}
	if len(missing) == 0 {
		return out, nil
	}
	var rows []struct {
		ID  string `bun:"id"`
		Org string `bun:"organization_id"`
	}
	err := db.NewSelect().Table(table).Column("id", "organization_id").Where(idIn("id", missing), pgdialect.Array(missing)).Scan(ctx, &rows)
	if err != nil {
		return nil, translate(err)
	}
	for _, r := range rows {
		out[r.ID] = r.Org
		d.remember(table, r.ID, r.Org)
	}
	return out, nil
}

// OrganizationsOf maps each of ids that names a row of table (spaces,
// collections or sites) to its organization, from the directory.
func (db *DB) OrganizationsOf(ctx context.Context, table string, ids []string) (map[string]string, error) {
	return db.dir.organizationsOf(ctx, db, table, ids)
}

// PerOrganization groups ids of rows of table (spaces, collections or
// sites) by organization (OrganizationsOf), and calls read with each
// organization and its ids; ids that name nothing are left out.
func (db *DB) PerOrganization(ctx context.Context, table string, ids []string, read func(orgID string, ids []string) error) error {
	orgs, err := db.OrganizationsOf(ctx, table, ids)
	if err != nil {
		return err
	}
	byOrg := map[string][]string{}
	for _, id := range ids {
		if org, ok := orgs[id]; ok {
			byOrg[org] = append(byOrg[org], id)
		}
	}
	for _, org := range slices.Sorted(maps.Keys(byOrg)) {
		if err := read(org, byOrg[org]); err != nil {
			return err
		}
	}
	return nil
}

// directoryTables are the tables whose ids the directory places: those
// routes and top-level fields name by id alone.
var directoryTables = map[string]bool{"spaces": true, "collections": true, "sites": true}

// placed is the organization the directory remembers of id (a row of
// table), if it does.
func (d *directory) placed(table, id string) (string, bool) {
	if d == nil {
		return "", false
	}
	return d.entries.Get(directoryKey{table, id})
}

func (d *directory) remember(table, id, org string) {
	if d != nil {
		d.entries.Add(directoryKey{table, id}, org)
	}
}

func (d *directory) forget(table string, ids []string) {
	if d == nil {
		return
	}
	for _, id := range ids {
		d.entries.Remove(directoryKey{table, id})
	}
}

// readByIDs reads the rows of table with these ids (those that exist),
// each in its organization: read is given one organization and ids of
// it. An id the directory placed in an organization that no longer holds
// it (moved since) is looked up again, once.
func readByIDs[T any](ctx context.Context, db bun.IDB, table string, ids []string, idOf func(*T) string,
	read func(ctx context.Context, db bun.IDB, orgID string, ids []string) ([]*T, error)) ([]*T, error) {
	dir := directoryOf(ctx, db)
	var out []*T
	settling := 0
	for attempt := 0; attempt < 2 && len(ids) > 0; attempt++ {
		orgs, err := dir.organizationsOf(ctx, db, table, ids)
		if err != nil {
			return nil, err
		}
		// Ids placed before and found nowhere now may be moving between
		// two workers: on a cluster, look again once that settled.
		if attempt == 1 && len(orgs) < len(ids) && dir.settle(ctx, settling) {
			settling++
			attempt--
			continue
		}
		byOrg := map[string][]string{}
		for _, id := range ids {
			if org, ok := orgs[id]; ok {
				byOrg[org] = append(byOrg[org], id)
			}
		}
		found := map[string]bool{}
		for _, org := range slices.Sorted(maps.Keys(byOrg)) {
			rows, err := read(inOrganization(ctx, org), db, org, byOrg[org])
			if err != nil {
				return nil, err
			}
			for _, r := range rows {
				found[idOf(r)] = true
			}
			out = append(out, rows...)
		}
		// What was placed but not found moved (or is gone): ask again.
		var again []string
		for _, id := range ids {
			if _, placed := orgs[id]; placed && !found[id] {
				again = append(again, id)
			}
		}
		dir.forget(table, again)
		ids = again
	}
	return out, nil
}
