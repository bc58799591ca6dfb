package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/pgserver"
)

// A Citus cluster for tests: a coordinator and two workers on loopback,
// each an embedded server (store/pgserver) with the citus library loaded.
// With DOCSAPI_TEST_CITUS=1 the server every test's database lives on is
// such a cluster: each test's database is a copy of a migrated (so
// distributed) template on every node, so the tests of a package run on a
// distributed schema as they run on one PostgreSQL. NewCitusCluster starts
// one of a test's own (to stop a worker under it).
//
// Citus is not packaged for every machine: where it is not installed
// (CitusInstalled), DOCSAPI_TEST_CITUS fails the tests that need the
// cluster, and tests asking for one of their own skip, saying why.

// CitusEnv turns the shared server into a Citus cluster.
const CitusEnv = "DOCSAPI_TEST_CITUS"

// citusShardCount is the shards of each distributed table in test
// clusters: Citus's default is 32, which makes a database of 1,300 shard
// tables that every test copies; four (two per worker) spread the
// organizations over both workers all the same.
const citusShardCount = "4"

// citusMode tells whether the shared server is a Citus cluster.
func citusMode() bool { return os.Getenv(CitusEnv) != "" && os.Getenv(CitusEnv) != "0" }

// Citus reports whether the databases NewDatabase gives are on a Citus
// cluster (DOCSAPI_TEST_CITUS).
func Citus() bool { return citusMode() }

// CitusInstalled tells whether the citus extension is installed in the
// machine's PostgreSQL, or why not.
func CitusInstalled() error {
	libs, _ := filepath.Glob("/usr/lib/postgresql/*/lib/citus.so")
	if len(libs) > 0 {
		return nil
	}
	return errors.New("the citus extension is not installed in this machine's PostgreSQL (../shared/tools/build-citus builds and installs it; .ci/run runs it when it can)")
}

// CitusCluster is a coordinator and its workers.
type CitusCluster struct {
	// Nodes are the coordinator, then the workers.
	Nodes []*pgserver.Server
	opts  []pgserver.Options
}

// Coordinator is the node clients connect to.
func (c *CitusCluster) Coordinator() *pgserver.Server { return c.Nodes[0] }

// startCitus starts a coordinator and two workers in dirs under dataDir,
// sharing one password (the nodes present it to one another).
func startCitus(ctx context.Context, dataDir string) (*CitusCluster, error) {
	if err := CitusInstalled(); err != nil {
		return nil, err
	}
	// The nodes' directories are below: the servers' OS user must be able
	// to pass through (when root, they run as another user).
	if err := os.Chmod(dataDir, 0o711); err != nil {
		return nil, err
	}
	password := randomHex(32)
	c := &CitusCluster{}
	for i := range 3 {
		opts := pgserver.Options{DataDir: filepath.Join(dataDir, fmt.Sprintf("node%d", i)), Password: password,
			Settings: map[string]string{
				"shared_preload_libraries": "citus",
				// Every write touching two workers commits in two phases.
				"max_prepared_transactions": "200",
				"citus.shard_count":         citusShardCount,
			}}
		// DOCSAPI_TEST_PG_LOGS=dir keeps each node's log there (the
		// statements Citus refused, with their errors).
		if dir := os.Getenv("DOCSAPI_TEST_PG_LOGS"); dir != "" {
			f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("citus-node%d.log", i)), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				c.stop()
				return nil, err
			}
			opts.Log = f
			// And the statements planned on every shard (whether they
			// should be is for whoever reads the log: the sweeps and the
			// lookups across organizations are).
			opts.Settings["citus.multi_task_query_log_level"] = "log"
			opts.Settings["log_min_error_statement"] = "log"
		}
		srv, err := pgserver.Start(ctx, opts)
		if err != nil {
			c.stop()
			return nil, fmt.Errorf("pgtest: start citus node %d: %w", i, err)
		}
		c.Nodes = append(c.Nodes, srv)
		c.opts = append(c.opts, opts)
	}
	return c, nil
}

func (c *CitusCluster) stop() {
	for _, n := range c.Nodes {
		n.Stop()
	}
}

// StopNode stops node i (a worker: 1 or 2), as a crash or an operator
// would; StartNode starts it again on the same port.
func (c *CitusCluster) StopNode(i int) { c.Nodes[i].Stop() }

// StartNode starts node i again after StopNode.
func (c *CitusCluster) StartNode(ctx context.Context, i int) error {
	opts := c.opts[i]
	opts.Port = c.Nodes[i].Port()
	srv, err := pgserver.Start(ctx, opts)
	if err != nil {
		return err
	}
	c.Nodes[i] = srv
	return nil
}

// createDatabase makes database name on every node, ready to be
// distributed: the citus extension, the password the nodes present to
// one another, and the workers registered with the coordinator (all but
// the migrations). With template, every node copies its own copy of the
// template instead (a copy of a ready database is ready).
func (c *CitusCluster) createDatabase(ctx context.Context, name, template string) error {
	for i := len(c.Nodes) - 1; i >= 0; i-- {
		stmt := "CREATE DATABASE " + name
		if template != "" {
			stmt += " TEMPLATE " + template + " ALLOW_CONNECTIONS true"
		}
		if err := execOn(ctx, c.Nodes[i].URL("postgres"), stmt); err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
	}
	if template != "" {
		return nil
	}
	password := passwordOf(c.Nodes[0].URL(name))
	for i, n := range c.Nodes {
		if err := execOn(ctx, n.URL(name), "CREATE EXTENSION citus",
			// Node 0 in pg_dist_authinfo is every node.
			"INSERT INTO pg_dist_authinfo (nodeid, rolename, authinfo) VALUES (0, 'postgres', 'password="+password+"')"); err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
	}
	stmts := []string{fmt.Sprintf("SELECT citus_set_coordinator_host('127.0.0.1', %d)", c.Nodes[0].Port())}
	for _, w := range c.Nodes[1:] {
		stmts = append(stmts, fmt.Sprintf("SELECT citus_add_node('127.0.0.1', %d)", w.Port()))
	}
	return execOn(ctx, c.Nodes[0].URL(name), stmts...)
}

// sealTemplate lets nothing connect to database name any more, and ends
// the sessions on it (Citus's maintenance daemon keeps one on every
// database with the extension), so that it can be copied.
func (c *CitusCluster) sealTemplate(ctx context.Context, name string) error {
	for _, n := range c.Nodes {
		if err := execOn(ctx, n.URL("postgres"), "ALTER DATABASE "+name+" ALLOW_CONNECTIONS false",
			"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '"+name+"' AND pid <> pg_backend_pid()"); err != nil {
			return err
		}
	}
	// pg_terminate_backend returns before the sessions are gone.
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range c.Nodes {
		for {
			var sessions int
			if err := queryOn(ctx, n.URL("postgres"), &sessions, "SELECT count(*) FROM pg_stat_activity WHERE datname = '"+name+"'"); err != nil {
				return err
			}
			if sessions == 0 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("pgtest: %d sessions still on template %s", sessions, name)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return nil
}

// dropDatabase drops database name on every node.
func (c *CitusCluster) dropDatabase(ctx context.Context, name string) {
	for _, n := range c.Nodes {
		_ = execOn(ctx, n.URL("postgres"), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	}
}

// NewCitusCluster starts a Citus cluster of the test's own, stopped when
// the test ends; the test skips when Citus is not installed.
func NewCitusCluster(t testing.TB) *CitusCluster {
	t.Helper()
	if err := CitusInstalled(); err != nil {
		t.Skipf("pgtest: no Citus cluster: %v", err)
	}
	c, err := startCitusIn(NewDataDir(t))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(c.stop)
	return c
}

// SharedCitusCluster is a Citus cluster for the tests that need a database
// of their own on one, not a cluster (NewCitusCluster: to stop a worker
// under it): one per test binary, started when a test first asks and
// stopped by Main; each test's databases (NewDatabase, NewDB) are its own.
// Under DOCSAPI_TEST_CITUS it is the cluster every test's database is on.
// The test skips when Citus is not installed.
func SharedCitusCluster(t testing.TB) *CitusCluster {
	t.Helper()
	if err := CitusInstalled(); err != nil {
		t.Skipf("pgtest: no Citus cluster: %v", err)
	}
	if citusMode() {
		once.Do(setup)
		if setupErr != nil {
			t.Fatalf("pgtest: %v", setupErr)
		}
		return citus
	}
	shared.once.Do(func() {
		if shared.dir, shared.err = os.MkdirTemp(dataDirParent(), "docsapi-test-citus-"); shared.err == nil {
			shared.cluster, shared.err = startCitusIn(shared.dir)
		}
	})
	if shared.err != nil {
		t.Fatalf("pgtest: %v", shared.err)
	}
	return shared.cluster
}

// startCitusIn starts a cluster of a test's in dataDir, within the time a
// test waits for one.
func startCitusIn(dataDir string) (*CitusCluster, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return startCitus(ctx, dataDir)
}

// shared is SharedCitusCluster's cluster.
var shared struct {
	once    sync.Once
	cluster *CitusCluster
	dir     string
	err     error
}

// stopShared stops SharedCitusCluster's cluster, if a test started it.
func stopShared() {
	if shared.cluster != nil {
		shared.cluster.stop()
	}
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
}

// NewDatabase creates a database on the cluster, ready to be distributed
// but not migrated (store.Migrate distributes it), dropped when the test
// ends, and returns the coordinator's URL of it.
func (c *CitusCluster) NewDatabase(t testing.TB) string {
	t.Helper()
	name := "t_" + randomHex(8)
	if err := c.createDatabase(context.Background(), name, ""); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { c.dropDatabase(context.Background(), name) })
	return c.Coordinator().URL(name)
}

func execOn(ctx context.Context, url string, stmts ...string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

func queryOn(ctx context.Context, url string, dest any, query string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, query).Scan(dest)
}

func passwordOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	p, _ := u.User.Password()
	return p
}

// NewDB opens a new database on the cluster with opts, migrated (so
// distributed), closed when the test ends.
func (c *CitusCluster) NewDB(t testing.TB, opts store.Options) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.OpenWith(ctx, c.NewDatabase(t), opts)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(db.Close)
	if err := db.Migrate(ctx, nil); err != nil {
		t.Fatalf("pgtest: migrate: %v", err)
	}
	return db
}
