package store_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/pgtest"
)

// The reference and coordinator tables are named, with their reasons, in
// store/citus.go: every other table must belong to an organization.
func shared(table string) bool {
	_, reference := store.ReferenceTables[table]
	_, coordinator := store.CoordinatorTable(table)
	return reference || coordinator
}

// Every table that belongs to an organization carries organization_id, NOT
// NULL, in its primary key or a unique key: what distributing the schema by
// organization needs, and what lets an organization's rows be found without
// a join. A new table fails here until it does (or is named above).
func TestEveryTenantTableCarriesTheOrganization(t *testing.T) {
	db := pgtest.NewDB(t)
	ctx := context.Background()
	var tables []struct {
		Name     string `bun:"name"`
		Nullable *bool  `bun:"nullable"`
		InKey    bool   `bun:"in_key"`
	}
	err := db.NewRaw(`SELECT c.relname AS name,
			(SELECT NOT a.attnotnull FROM pg_attribute a
			 WHERE a.attrelid = c.oid AND a.attname = 'organization_id' AND NOT a.attisdropped) AS nullable,
			EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
			        WHERE i.indrelid = c.oid AND i.indisunique AND a.attname = 'organization_id') AS in_key
		FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
		ORDER BY 1`).Scan(ctx, &tables)
	if err != nil {
		t.Fatal(err)
	}
	tenant := 0
	for _, tb := range tables {
		if shared(tb.Name) {
			continue
		}
		tenant++
		switch {
		case tb.Nullable == nil:
			t.Errorf("%s has no organization_id (or is it shared by every organization? then name it a reference table)", tb.Name)
		case *tb.Nullable:
			t.Errorf("%s.organization_id may be NULL", tb.Name)
		case !tb.InKey:
			t.Errorf("%s: neither its primary key nor a unique key includes organization_id", tb.Name)
		}
	}
	if tenant < 30 {
		t.Errorf("only %d tenant tables: is the query right?", tenant)
	}
	// The named reference tables exist (a rename must update the list and
	// docs/scaling.md).
	for name := range store.ReferenceTables {
		if !slices.ContainsFunc(tables, func(tb struct {
			Name     string `bun:"name"`
			Nullable *bool  `bun:"nullable"`
			InKey    bool   `bun:"in_key"`
		}) bool {
			return tb.Name == name
		}) {
			t.Errorf("reference table %s does not exist", name)
		}
	}
}

// Every unique key of a tenant table includes organization_id: a
// distributed table's must. (The one that held across organizations, a
// site's custom hostname, is checked by the store under a lock since
// migration 0043.)
func TestTenantUniqueKeysIncludeTheOrganization(t *testing.T) {
	db := pgtest.NewDB(t)
	var bad []string
	err := db.NewRaw(`SELECT x.relname FROM pg_index i
		JOIN pg_class x ON x.oid = i.indexrelid JOIN pg_class c ON c.oid = i.indrelid
		WHERE c.relnamespace = 'public'::regnamespace AND i.indisunique
		AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'organization_id')
		AND c.relname NOT IN (?)
		AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum = ANY(i.indkey) AND a.attname = 'organization_id')
		ORDER BY 1`, bun.List(slices.Collect(maps.Keys(store.ReferenceTables)))).Scan(context.Background(), &bad)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range bad {
		t.Errorf("unique key %s does not include organization_id", name)
	}
}
