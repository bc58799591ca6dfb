package pgtest

import (
	"context"
	"fmt"
)

// What a program outside the tests (cmd/docsbench's citus scenario) needs
// of the test cluster (citus.go): start it in a directory of its own,
// create a database on it, stop it.

// StartCitus starts a Citus cluster, a coordinator and two workers on
// loopback, in directories under dataDir (which must exist; the caller
// removes it after Stop). The nodes run as tests run them: without fsync,
// four shards per distributed table. It fails, saying why, when Citus is
// not installed (CitusInstalled).
func StartCitus(ctx context.Context, dataDir string) (*CitusCluster, error) {
	return startCitus(ctx, dataDir)
}

// Stop stops every node of the cluster.
func (c *CitusCluster) Stop() { c.stop() }

// CreateDatabase creates database name on every node, ready to be
// distributed (the citus extension, the nodes' password, the workers
// registered) but not migrated: store's Migrate distributes the schema.
// It returns the coordinator's URL of the database.
func (c *CitusCluster) CreateDatabase(ctx context.Context, name string) (string, error) {
	if err := c.createDatabase(ctx, name, ""); err != nil {
		return "", fmt.Errorf("pgtest: create database %s on the citus cluster: %w", name, err)
	}
	return c.Coordinator().URL(name), nil
}
