package store_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/pgtest"
)

// On a Citus coordinator, the migrations distribute the schema with no
// setting of their own: every tenant table by organization_id in one
// colocation group, the named shared tables as reference tables, the
// coordinator's bookkeeping left local; again at every start, so a table a
// later migration adds is placed too, and one that says nothing of where
// it goes stops the start.
func TestMigrateDistributesTheSchemaOnCitus(t *testing.T) {
	db := pgtest.SharedCitusCluster(t).NewDB(t, store.Options{MaxConns: 4})
	ctx := context.Background()
	checkPlacements(t, db)

	// Rows of many organizations land on both workers.
	var workers int
	err := db.NewRaw(`WITH orgs AS (SELECT 'org' || i AS id FROM generate_series(1, 20) i)
		SELECT count(DISTINCT p.groupid) FROM orgs
		JOIN pg_dist_placement p ON p.shardid = get_shard_id_for_distribution_column('spaces', orgs.id)`).Scan(ctx, &workers)
	if err != nil {
		t.Fatal(err)
	}
	if workers != 2 {
		t.Errorf("20 organizations' spaces are on %d workers, want 2", workers)
	}

	// A later migration's tenant table is distributed at the next start,
	// colocated with the rest; an unnamed table without an organization
	// stops it, saying so.
	if _, err := db.ExecContext(ctx, `CREATE TABLE later_things (id text, organization_id text NOT NULL, PRIMARY KEY (id, organization_id))`); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	checkPlacements(t, db)
	if _, err := db.ExecContext(ctx, `CREATE TABLE nobodys (id text PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, nil); err == nil || !strings.Contains(err.Error(), "nobodys") {
		t.Errorf("a table with no organization and no placement of its own was let through: %v", err)
	}
}

// checkPlacements fails t unless every table is where store.PlacementOf
// says.
func checkPlacements(t *testing.T, db *store.DB) {
	t.Helper()
	var tables []struct {
		Name       string  `bun:"name"`
		HasOrg     bool    `bun:"has_org"`
		Method     *string `bun:"method"`
		Column     *string `bun:"dist_column"`
		Colocation *int    `bun:"colocation"`
		Replicated *bool   `bun:"replicated"`
	}
	err := db.NewRaw(`SELECT c.relname AS name,
			EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'organization_id' AND NOT a.attisdropped) AS has_org,
			p.partmethod::text AS method, column_to_column_name(p.logicalrelid, p.partkey) AS dist_column,
			p.colocationid AS colocation, p.repmodel = 't' AS replicated
		FROM pg_class c LEFT JOIN pg_dist_partition p ON p.logicalrelid = c.oid
		WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' ORDER BY 1`).Scan(context.Background(), &tables)
	if err != nil {
		t.Fatal(err)
	}
	groups := map[int]bool{}
	counts := map[store.Placement]int{}
	for _, tb := range tables {
		want, err := store.PlacementOf(tb.Name, tb.HasOrg)
		if err != nil {
			t.Error(err)
			continue
		}
		counts[want]++
		got := "local"
		switch {
		case tb.Method != nil && *tb.Method == "h":
			got = fmt.Sprintf("distributed by %s", *tb.Column)
			groups[*tb.Colocation] = true
		case tb.Replicated != nil && *tb.Replicated:
			got = "reference"
		}
		expected := map[store.Placement]string{store.Distributed: "distributed by organization_id", store.Reference: "reference", store.Coordinator: "local"}[want]
		if got != expected {
			t.Errorf("%s is %s, want %s", tb.Name, got, expected)
		}
	}
	if len(groups) != 1 {
		t.Errorf("the distributed tables are in %d colocation groups, want 1", len(groups))
	}
	if counts[store.Distributed] < 40 || counts[store.Reference] != len(store.ReferenceTables) {
		t.Errorf("placements %v: is the query right?", counts)
	}
}

// On a Citus cluster every hot read of one organization runs on one shard
// group: each statement it sends (the reads of plans_test.go's hotReads,
// after a first run has placed the ids it names: store/directory.go)
// plans as one task, so one worker answers it and a request does not
// wait on every worker. The statements are planned for their arguments,
// as the store sends them (the simple protocol, values inline).
func TestHotReadsAreSingleShardOnCitus(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a database")
	}
	db := pgtest.SharedCitusCluster(t).NewDB(t, store.Options{MaxConns: 4})
	ctx := context.Background()
	fillOrganizations(t, db, 2_000, 1_000+myCollectionSpaces+1_000)
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, r := range hotReads(db, 1_000+myCollectionSpaces+1_000) {
		t.Run(r.name, func(t *testing.T) {
			if err := r.read(ctx); err != nil {
				t.Fatal(err)
			}
			before := workerReads(t, db)
			rctx, statements := store.RecordStatements(ctx)
			if err := r.read(rctx); err != nil {
				t.Fatal(err)
			}
			// And each ran on the worker holding the organization, not
			// through the coordinator (citus_reads.go).
			if ran := workerReads(t, db) - before; ran != len(*statements) {
				t.Errorf("%d of its %d statements ran on the organization's worker", ran, len(*statements))
			}
			for _, s := range *statements {
				plan := explain(t, conn.Conn(), "force_custom_plan", s)
				tasks := taskCounts(plan)
				t.Logf("%v tasks: %s", tasks, s.SQL)
				for _, n := range tasks {
					if n != 1 {
						t.Errorf("%d tasks, want 1:\n%s\n%s", n, s.SQL, plan)
					}
				}
			}
		})
	}
}

// workerReads is how many reads db's Citus workers have answered.
func workerReads(t *testing.T, db *store.DB) int {
	t.Helper()
	stats, ok := db.WorkerStats()
	if !ok {
		t.Fatal("the store does not read on the cluster's workers")
	}
	n := 0
	for _, w := range stats.Workers {
		if !w.Up {
			t.Errorf("worker %s is down", w.Name)
		}
		n += int(w.Reads)
	}
	return n
}

// taskCounts are the task counts of the distributed parts of a JSON plan
// (Citus's "Task Count": one per job and subplan); none for a statement
// only of the coordinator's own tables.
func taskCounts(plan string) []int {
	var counts []int
	for _, m := range taskCountPattern.FindAllStringSubmatch(plan, -1) {
		n, _ := strconv.Atoi(m[1])
		counts = append(counts, n)
	}
	return counts
}

var taskCountPattern = regexp.MustCompile(`"Task Count": (\d+)`)

// A request to a site's custom hostname finds its site asking one shard
// at most: the hostname's organization from the reference table
// site_hostnames (a copy on every node), then the site in it.
func TestSiteByHostnameAsksOneShardOnCitus(t *testing.T) {
	db := pgtest.SharedCitusCluster(t).NewDB(t, store.Options{MaxConns: 4})
	ctx := context.Background()
	for _, org := range []string{"a", "b", "c", "d"} {
		if _, err := db.Pool.Exec(ctx, `INSERT INTO organizations (id, title, created_at, updated_at) VALUES ($1, $1, now(), now())`, org); err != nil {
			t.Fatal(err)
		}
		site := &store.Site{ID: "site-" + org, OrganizationID: org, Type: "basic", Title: "Docs", Visibility: "public", ShareKey: "k" + org,
			AgentsContext: "included", CreatedAt: time.Now(), UpdatedAt: time.Now()}
		if err := store.CreateSite(ctx, db, site); err != nil {
			t.Fatal(err)
		}
		host := "docs." + org + ".example"
		site.Hostname = &host
		if err := store.UpdateSite(ctx, db, site, "hostname"); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	rctx, statements := store.RecordStatements(ctx)
	site, err := store.SiteByHostname(rctx, db, "docs.c.example")
	if err != nil || site.ID != "site-c" {
		t.Fatalf("SiteByHostname = %v, %v", site, err)
	}
	for _, s := range *statements {
		plan := explain(t, conn.Conn(), "force_custom_plan", s)
		for _, n := range taskCounts(plan) {
			if n != 1 {
				t.Errorf("%d tasks, want 1:\n%s\n%s", n, s.SQL, plan)
			}
		}
	}
}
