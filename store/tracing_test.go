package store_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/pgtest"
	"github.com/docsapi/docsapi/tracing"
)

// A statement's span shows its SQL without the values bun writes into it:
// strings and numbers become ?, placeholders and identifiers stay.
func TestStatementTextHasNoValues(t *testing.T) {
	for _, c := range []struct{ sql, want string }{
		{`SELECT "s"."id" FROM "spaces" AS "s" WHERE ("s"."organization_id" = 'org1') AND (s.deleted_at IS NULL) LIMIT 1`,
			`SELECT "s"."id" FROM "spaces" AS "s" WHERE ("s"."organization_id" = ?) AND (s.deleted_at IS NULL) LIMIT ?`},
		{`UPDATE users SET name = 'O''Brien', bio = E'a\'b\\', n2 = 42, f = -3.5 WHERE id = $1`,
			`UPDATE users SET name = ?, bio = ?, n2 = ?, f = -? WHERE id = $1`},
		{`INSERT INTO "t1" ("x") VALUES ('{"a": "secret"}'::jsonb), (ARRAY['a','b'])`,
			`INSERT INTO "t1" ("x") VALUES (?::jsonb), (ARRAY[?,?])`},
		{`SELECT "weird""name 7" FROM x`, `SELECT "weird""name 7" FROM x`},
	} {
		if got := store.SanitizeSQL(c.sql); got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.sql, got, c.want)
		}
	}
}

// On a Citus cluster a statement's span names the pool that answered it:
// the organization's worker for a read of one organization (its host in
// server.address), the coordinator for the rest. Outside a recording span
// no statement makes one.
func TestStatementSpansNameTheirPoolOnCitus(t *testing.T) {
	exporter := tracetest.NewInMemoryExporter()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	defer provider.Shutdown(context.Background())
	db := pgtest.SharedCitusCluster(t).NewDB(t, store.Options{MaxConns: 4, Tracing: provider})
	fillOrganizations(t, db, 100, 200)
	ctx := context.Background()
	if _, err := store.GetSpace(ctx, db, "ms1"); err != nil { // places the space (directory.go)
		t.Fatal(err)
	}
	if n := len(exporter.GetSpans()); n != 0 {
		t.Fatalf("%d spans without a recording span above them", n)
	}
	ctx, root := provider.Tracer("test").Start(ctx, "request")
	if _, err := store.GetSpace(ctx, db, "ms1"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.NewRaw("SELECT count(*) FROM organizations").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	root.End()
	stats, _ := db.WorkerStats()
	workers := map[string]bool{}
	for _, w := range stats.Workers {
		workers[w.Name] = true
	}
	pools := map[string]int{}
	for _, s := range exporter.GetSpans() {
		if s.InstrumentationScope.Name != "github.com/exaring/otelpgx" || s.Name == "connect" {
			continue
		}
		values := map[attribute.Key]attribute.Value{}
		for _, kv := range s.Attributes {
			values[kv.Key] = kv.Value
		}
		pool := values[tracing.DBPool].AsString()
		pools[pool]++
		host := values["server.address"].AsString() + ":" + values["server.port"].Emit()
		if pool == "worker" && (!workers[host] || values[tracing.Organization].AsString() == "") {
			t.Errorf("a worker's statement on %s (workers %v), organization %q: %s", host, workers,
				values[tracing.Organization].AsString(), values["db.query.text"].AsString())
		}
	}
	if pools["worker"] == 0 || pools["coordinator"] == 0 || len(pools) != 2 {
		t.Errorf("statements by pool: %v, want worker and coordinator", pools)
	}
}
