package store

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/uptrace/bun"
)

// On a Citus cluster (a coordinator whose database has the citus
// extension, with workers) the schema is distributed by organization: the
// organization is the tenant, and one organization's rows live together on
// one worker, so that a request for one organization is a query of one
// shard group, and every join and foreign key within it stays on that
// worker. Nothing is configured for it: Migrate places every table after
// the migrations when it finds the extension, and again at every start
// (Distribute is idempotent), so a table a later migration adds is
// distributed too, and an install whose database gained the extension is
// distributed at its next start.
//
// Each table is placed by what it holds (docs/scaling.md lists them, with
// the reasons):
//   - a table with organization_id is distributed by it, in one colocation
//     group (colocatedWith's);
//   - the instance-wide tables read with every organization's rows are
//     reference tables, copied to every node (ReferenceTables);
//   - the bookkeeping only the coordinator reads stays a plain table on the
//     coordinator (CoordinatorTable).
// A table that is none of these is an error: a new table must say where it
// goes.

// Placement is where a table lives on a Citus cluster.
type Placement string

const (
	// Distributed: sharded by organization_id, colocated with every other
	// tenant table.
	Distributed Placement = "distributed"
	// Reference: one copy on every node.
	Reference Placement = "reference"
	// Coordinator: an ordinary table on the coordinator.
	Coordinator Placement = "coordinator"
)

// ReferenceTables are shared by every organization and read together with
// any organization's rows: a copy on every node keeps those joins and
// foreign keys local to the worker of the organization.
var ReferenceTables = map[string]string{
	"users":             "a person belongs to any number of organizations",
	"organizations":     "the tenants themselves: small, read with everything, and a hostname names one instance-wide",
	"api_tokens":        "a token is looked up by its digest before any organization is known",
	"integrations":      "published by one organization under an instance-wide unique name, installed by any",
	"server_secrets":    "the instance's own secrets (the signing key of download addresses)",
	"saml_service_keys": "the instance's SAML key pair",
	"site_hostnames":    "a request to a site's custom hostname names the site before its organization is known",
}

// coordinatorTables are read and written by the coordinator alone (with
// the river_ tables, the job queue's).
var coordinatorTables = map[string]string{
	"bun_migrations":      "the migration tool's record of what ran",
	"bun_migration_locks": "the migration tool's lock",
	"rate_budget_usage":   "the rate budget's count per token and window (UNLOGGED), whatever organizations the token reaches",
}

// colocatedWith is the table every distributed table is colocated with.
const colocatedWith = "spaces"

// CoordinatorTable tells whether table stays on the coordinator, and why.
func CoordinatorTable(table string) (string, bool) {
	if strings.HasPrefix(table, "river_") {
		return "the job queue (River): polled with SKIP LOCKED and LISTEN by the coordinator's clients", true
	}
	why, ok := coordinatorTables[table]
	return why, ok
}

// PlacementOf is where table goes on a Citus cluster; hasOrganization
// tells whether it has an organization_id column.
func PlacementOf(table string, hasOrganization bool) (Placement, error) {
	if _, ok := ReferenceTables[table]; ok {
		return Reference, nil
	}
	if _, ok := CoordinatorTable(table); ok {
		return Coordinator, nil
	}
	if hasOrganization {
		return Distributed, nil
	}
	return "", fmt.Errorf("store: table %s has no organization_id and is neither a reference table nor the coordinator's: say where it goes (store/citus.go)", table)
}

// HasCitus tells whether the database has the citus extension.
func HasCitus(ctx context.Context, db bun.IDB) (bool, error) {
	var ok bool
	err := db.NewRaw("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')").Scan(ctx, &ok)
	return ok, translate(err)
}

// tableState is one table of the public schema as the catalog has it.
type tableState struct {
	Name            string `bun:"name"`
	HasOrganization bool   `bun:"has_organization"`
	// Current is "distributed", "reference", or "" (a plain table, or
	// one Citus holds as a local table of its metadata).
	Current string `bun:"current"`
}

// distribute places every table of the schema on the Citus cluster the
// database is the coordinator of (nothing without the extension), in one
// transaction. Tables already where they belong are left as they are.
//
// Citus distributes a table only when its foreign keys refer to
// distributed or reference tables, and refuses foreign keys from plain
// tables to distributed ones: in a schema whose tenant tables refer to
// each other, no table can go first. So the foreign keys that touch a
// table to be placed are dropped, the tables placed, and the keys added
// again as they were (which checks them again: on a database with data,
// plan it as a maintenance window, as with any migration that rewrites).
func distribute(ctx context.Context, db bun.IDB, log *slog.Logger) error {
	if ok, err := HasCitus(ctx, db); err != nil || !ok {
		return err
	}
	var tables []tableState
	err := db.NewRaw(`SELECT c.relname AS name,
			EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'organization_id' AND NOT a.attisdropped) AS has_organization,
			COALESCE((SELECT CASE WHEN p.partmethod = 'h' THEN 'distributed' WHEN p.repmodel = 't' THEN 'reference' ELSE '' END
			          FROM pg_dist_partition p WHERE p.logicalrelid = c.oid), '') AS current
		FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'
		ORDER BY c.relname`).Scan(ctx, &tables)
	if err != nil {
		return fmt.Errorf("store: read tables: %w", err)
	}
	var toReference, toDistribute []string
	anchor := ""
	for _, t := range tables {
		want, err := PlacementOf(t.Name, t.HasOrganization)
		if err != nil {
			return err
		}
		switch {
		case want == Distributed && t.Current == "distributed":
			if anchor == "" || t.Name == colocatedWith {
				anchor = t.Name
			}
		case want == Distributed:
			toDistribute = append(toDistribute, t.Name)
		case want == Reference && t.Current != "reference":
			toReference = append(toReference, t.Name)
		}
	}
	if len(toReference)+len(toDistribute) == 0 {
		return nil
	}
	// The colocation group is colocatedWith's: it goes first when it is
	// placed now.
	slices.SortStableFunc(toDistribute, func(a, b string) int {
		return boolOrder(a != colocatedWith, b != colocatedWith)
	})
	return RunUnhurried(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		// Triggers on distributed tables run on the workers' shards:
		// those of this schema touch only rows of their own organization,
		// in shards of the same group (migration 0043), which is what
		// makes them safe there.
		if _, err := tx.ExecContext(ctx, "SET LOCAL citus.enable_unsafe_triggers = on"); err != nil {
			return err
		}
		// Reference tables are written after distributed ones in this
		// transaction (the foreign keys added back check them): Citus
		// allows that over one connection per node only.
		if _, err := tx.ExecContext(ctx, "SET LOCAL citus.multi_shard_modify_mode = 'sequential'"); err != nil {
			return err
		}
		placing := append(slices.Clone(toReference), toDistribute...)
		var keys []struct {
			Table      string `bun:"table_name"`
			Name       string `bun:"name"`
			Definition string `bun:"definition"`
		}
		err := tx.NewRaw(`SELECT conrelid::regclass::text AS table_name, conname AS name, pg_get_constraintdef(oid) AS definition
			FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace
			AND (conrelid::regclass::text IN (?) OR confrelid::regclass::text IN (?))
			ORDER BY 1, 2`, bun.List(placing), bun.List(placing)).Scan(ctx, &keys)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if _, err := tx.ExecContext(ctx, "ALTER TABLE ? DROP CONSTRAINT ?", bun.Ident(k.Table), bun.Ident(k.Name)); err != nil {
				return fmt.Errorf("store: drop %s before distributing: %w", k.Name, err)
			}
		}
		for _, t := range toReference {
			if _, err := tx.ExecContext(ctx, "SELECT create_reference_table(?)", t); err != nil {
				return fmt.Errorf("store: make %s a reference table: %w", t, err)
			}
		}
		for _, t := range toDistribute {
			colocate := anchor
			if colocate == "" {
				colocate, anchor = "none", t
			}
			if _, err := tx.ExecContext(ctx, "SELECT create_distributed_table(?, 'organization_id', colocate_with => ?)", t, colocate); err != nil {
				return fmt.Errorf("store: distribute %s: %w", t, err)
			}
		}
		for _, k := range keys {
			if _, err := tx.ExecContext(ctx, "ALTER TABLE ? ADD CONSTRAINT ? ?", bun.Ident(k.Table), bun.Ident(k.Name), bun.Safe(k.Definition)); err != nil {
				return fmt.Errorf("store: add %s back after distributing: %w", k.Name, err)
			}
		}
		if log != nil {
			log.Info("distributed the schema on the Citus cluster", "reference", toReference, "distributed", toDistribute)
		}
		return nil
	})
}

func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	default:
		return 1
	}
}
