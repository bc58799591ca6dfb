package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/store/pgtest"
)

// referenceTables are shared by every organization: under a distributed
// layout they are reference tables, copied to every node
// (docs/scaling.md).
var referenceTables = []string{
	"users",             // a person may belong to many organizations
	"api_tokens",        // looked up by digest before any organization is known
	"organizations",     // the tenants themselves (their id is the distribution key)
	"integrations",      // published by one organization, installed by any
	"server_secrets",    // the instance's own secrets
	"saml_service_keys", // the instance's SAML key pair
}

// bookkeeping are the migration tools', the job queue's and the rate
// budget's tables (an UNLOGGED count per token and window, whatever
// organizations the token reaches): no organization's data.
func bookkeeping(table string) bool {
	return table == "bun_migrations" || table == "bun_migration_locks" || strings.HasPrefix(table, "river_") ||
		table == "rate_budget_usage"
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
		if slices.Contains(referenceTables, tb.Name) || bookkeeping(tb.Name) {
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
	for _, name := range referenceTables {
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

// globalKeys are the unique keys of tenant tables that hold across
// organizations on purpose, and what they become when distributed
// (docs/scaling.md).
var globalKeys = []string{
	"sites_hostname_key", // a custom hostname names one site of one organization, instance-wide
}

// Every unique key of a tenant table includes organization_id (a
// distributed table's must), but for the named global ones and the primary
// keys on id that foreign keys still refer to, each of which has a unique
// (id, organization_id) beside it for the composite foreign keys of a
// distributed layout.
func TestTenantUniqueKeysIncludeTheOrganization(t *testing.T) {
	db := pgtest.NewDB(t)
	var bad []string
	err := db.NewRaw(`SELECT x.relname FROM pg_index i
		JOIN pg_class x ON x.oid = i.indexrelid JOIN pg_class c ON c.oid = i.indrelid
		WHERE c.relnamespace = 'public'::regnamespace AND i.indisunique
		AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'organization_id')
		AND c.relname NOT IN (?)
		AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum = ANY(i.indkey) AND a.attname = 'organization_id')
		AND NOT (i.indisprimary AND EXISTS (SELECT 1 FROM pg_index u WHERE u.indrelid = c.oid AND u.indisunique
			AND (SELECT array_agg(a.attname::text ORDER BY a.attname) FROM pg_attribute a
			     WHERE a.attrelid = c.oid AND a.attnum = ANY(u.indkey)) = ARRAY['id', 'organization_id']))
		ORDER BY 1`, bun.List(referenceTables)).Scan(context.Background(), &bad)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range bad {
		if !slices.Contains(globalKeys, name) {
			t.Errorf("unique key %s does not include organization_id", name)
		}
	}
	for _, name := range globalKeys {
		if !slices.Contains(bad, name) {
			t.Errorf("global key %s is not seen (gone, or the query is wrong): update the list and docs/scaling.md", name)
		}
	}
}
