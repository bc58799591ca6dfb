// Package pgtest gives each test its own PostgreSQL database, cloned from a
// migrated template, on one embedded server per test binary (or on the server
// of DOCSAPI_TEST_DATABASE_URL when set). Tests are isolated from each other
// and can run in parallel; a clone takes a few milliseconds. The embedded
// servers keep their data in memory when the machine has room
// (dataDirParent), and Main runs more tests at a time than go test's default
// (docs/contributing.md: what the suite's time goes to).
//
// The embedded server lets no one in without its password (store/pgserver):
// the URLs given here carry it.
//
// A package using it calls Main from TestMain so the server stops, and its
// data goes, at the end.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/pgserver"
)

const templateName = "docsapi_template"

var (
	once      sync.Once
	server    *pgserver.Server
	citus     *CitusCluster // the shared server, when it is a Citus cluster (citus.go)
	adminURL  string        // a URL on the maintenance database "postgres"
	dataDir   string
	setupErr  error
	clusterMu sync.Mutex // CREATE DATABASE ... TEMPLATE takes the template exclusively
	// copyTemplate are the options of CREATE DATABASE that copy the
	// template: its files, where the server can (PostgreSQL 15's default,
	// WAL_LOG, writes every page of the copy to the WAL too: twice the
	// time, and gigabytes of WAL over a suite).
	copyTemplate = "TEMPLATE " + templateName
)

// Main runs the tests (Run) and exits with their code.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run runs the tests and stops the embedded server afterwards, for a
// TestMain with more to clean up; it returns the tests' exit code.
//
// On the embedded server, unless -test.parallel is given, it runs three
// parallel tests per CPU, at most eight, rather than go test's one per CPU:
// tests of a server wait on it, on its database and on the clients they
// drive about as long as they compute, and one per CPU left the CPUs idle a
// quarter of the time (the whole-server tests alone on 2 cores: 160 s with
// 2, 132 s with 6, for the same CPU time). Eight test servers stay well
// within the embedded server's 200 connections (a test server's pool takes
// 10); another server's limit, or a Citus cluster's connections between
// nodes, are not known here, so those keep go test's default.
func Run(m *testing.M) int {
	flag.Parse()
	keepDefault := os.Getenv("DOCSAPI_TEST_DATABASE_URL") != "" || citusMode()
	flag.Visit(func(f *flag.Flag) { keepDefault = keepDefault || f.Name == "test.parallel" })
	if !keepDefault {
		_ = flag.Set("test.parallel", strconv.Itoa(min(3*runtime.GOMAXPROCS(0), 8)))
	}
	code := m.Run()
	stopShared()
	if server != nil {
		server.Stop()
	}
	if citus != nil {
		citus.stop()
	}
	if dataDir != "" {
		_ = os.RemoveAll(dataDir)
	}
	return code
}

func setup() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	switch u := os.Getenv("DOCSAPI_TEST_DATABASE_URL"); {
	case u != "":
		adminURL = u
	case citusMode():
		dataDir, setupErr = os.MkdirTemp(dataDirParent(), "docsapi-test-citus-")
		if setupErr != nil {
			return
		}
		if citus, setupErr = startCitus(ctx, dataDir); setupErr != nil {
			return
		}
		adminURL = citus.Coordinator().URL("postgres")
	default:
		dataDir, setupErr = os.MkdirTemp(dataDirParent(), "docsapi-test-")
		if setupErr != nil {
			return
		}
		server, setupErr = pgserver.Start(ctx, pgserver.Options{DataDir: dataDir})
		if setupErr != nil {
			return
		}
		adminURL = server.URL("postgres")
	}
	setupErr = createTemplate(ctx)
}

// dataDirParent is where the test servers' data directories go: Linux's
// memory file system (/dev/shm) when it has room, else the temporary
// directory. The suite creates and drops a database per test, some 800
// files each: on ext4, under that churn, the kernel's search for free
// inodes took more CPU time than the tests themselves (the whole-server
// tests: 355 s of CPU on disk, 242 s in memory, on 2 cores; see
// docs/contributing.md). Nothing of a test server needs to outlive it.
// Decided once per test binary, when it first starts a server.
var dataDirParent = sync.OnceValue(func() string {
	const shm, room = "/dev/shm", 2 << 30
	var st syscall.Statfs_t
	if err := syscall.Statfs(shm, &st); err != nil || st.Type != tmpfsMagic || st.Bavail*uint64(st.Bsize) < room {
		return ""
	}
	probe, err := os.MkdirTemp(shm, "docsapi-test-probe-")
	if err != nil {
		return "" // not ours to write to
	}
	_ = os.Remove(probe)
	sweepStale(shm)
	return shm
})

// sweepStale removes what test binaries killed before Main's cleanup (by
// -timeout's panic, by a kill) left in dir: data directories over an hour
// old in which no postmaster runs. In memory, what is left is memory.
func sweepStale(dir string) {
	left, _ := filepath.Glob(filepath.Join(dir, "docsapi-test-*"))
	for _, d := range left {
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < time.Hour {
			continue
		}
		// A server's own directory, or a Citus cluster's, with its nodes'.
		nodes, _ := filepath.Glob(filepath.Join(d, "*"))
		if !slices.ContainsFunc(append(nodes, d), pgserver.Runs) {
			_ = os.RemoveAll(d)
		}
	}
}

// tmpfsMagic is a tmpfs's file system type in statfs(2).
const tmpfsMagic = 0x01021994

// createTemplate builds a fresh template database with every migration applied.
func createTemplate(ctx context.Context) error {
	if citus != nil {
		citus.dropDatabase(ctx, templateName)
		if err := citus.createDatabase(ctx, templateName, ""); err != nil {
			return err
		}
		if err := migrateTemplate(ctx); err != nil {
			return err
		}
		return citus.sealTemplate(ctx, templateName)
	}
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+templateName+" WITH (FORCE)"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+templateName); err != nil {
		return err
	}
	var version int
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		return err
	}
	if version >= 150000 {
		copyTemplate += " STRATEGY FILE_COPY"
	}
	return migrateTemplate(ctx)
}

func migrateTemplate(ctx context.Context) error {
	db, err := store.Open(ctx, withDatabase(adminURL, templateName), 4)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Migrate(ctx, nil)
}

// NewDatabase returns the URL of a new, migrated database that is dropped when
// the test ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	once.Do(setup)
	return newDatabase(t, copyTemplate)
}

// NewEmptyDatabase returns the URL of a new database with no migration
// applied (for tests of what servers do at their first start), dropped when
// the test ends.
func NewEmptyDatabase(t testing.TB) string {
	t.Helper()
	return newDatabase(t, "")
}

// newDatabase creates a database with the options of CREATE DATABASE
// given, and drops it when the test ends. Copies of the template are
// serialized (clusterMu): PostgreSQL refuses to copy a template another
// session is copying.
func newDatabase(t testing.TB, options string) string {
	t.Helper()
	once.Do(setup)
	if setupErr != nil {
		t.Fatalf("pgtest: %v", setupErr)
	}
	ctx := context.Background()
	name := "t_" + randomHex(8)
	if citus != nil {
		return newCitusDatabase(t, name, options)
	}
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer conn.Close(ctx)
	clusterMu.Lock()
	_, err = conn.Exec(ctx, strings.TrimSpace("CREATE DATABASE "+name+" "+options))
	clusterMu.Unlock()
	if err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, adminURL)
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return withDatabase(adminURL, name)
}

// newCitusDatabase is newDatabase on the shared Citus cluster: the
// database on every node, a copy of the template's there, or an empty one
// ready to be distributed.
func newCitusDatabase(t testing.TB, name, options string) string {
	t.Helper()
	ctx := context.Background()
	template := ""
	if options != "" {
		template = templateName
	}
	clusterMu.Lock()
	err := citus.createDatabase(ctx, name, template)
	clusterMu.Unlock()
	if err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() { citus.dropDatabase(ctx, name) })
	return citus.Coordinator().URL(name)
}

// NewDB opens a new database (see NewDatabase), with the default statement
// timeout, and closes it when the test ends.
func NewDB(t testing.TB) *store.DB {
	t.Helper()
	return NewDBWith(t, store.Options{MaxConns: 10, StatementTimeout: store.DefaultStatementTimeout})
}

// NewDBWith is NewDB with the pool's options.
func NewDBWith(t testing.TB, opts store.Options) *store.DB {
	t.Helper()
	db, err := store.OpenWith(context.Background(), NewDatabase(t), opts)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(db.Close)
	return db
}

// Cluster is a PostgreSQL server of one test's own, for tests that stop,
// start or kill it under a running server (the shared server must stay up
// for the other tests). Like the shared one it keeps fsync off.
type Cluster struct {
	t       testing.TB
	opts    pgserver.Options
	DataDir string
	// Server is the running server; Stop and Start replace it.
	Server *pgserver.Server
}

// NewCluster starts a server in a new data directory (opts.DataDir is
// ignored); it is stopped and its directory removed when the test ends.
func NewCluster(t testing.TB, opts pgserver.Options) *Cluster {
	t.Helper()
	opts.DataDir = NewDataDir(t)
	c := &Cluster{t: t, opts: opts, DataDir: opts.DataDir}
	c.Start()
	// Registered after NewDataDir's removal: cleanups run last first.
	t.Cleanup(func() { c.Server.Stop() })
	return c
}

// Start starts the cluster's server again after Stop, on the same port
// (the URLs handed out before stay right).
func (c *Cluster) Start() {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if c.Server != nil {
		c.opts.Port = c.Server.Port()
	}
	srv, err := pgserver.Start(ctx, c.opts)
	if err != nil {
		c.t.Fatalf("pgtest: %v", err)
	}
	c.Server = srv
}

// Stop stops the cluster's server (fast shutdown, as at a server's
// shutdown: sessions are ended).
func (c *Cluster) Stop() { c.Server.Stop() }

// NewDatabase creates a migrated database on the cluster and returns its
// URL.
func (c *Cluster) NewDatabase() string {
	c.t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.Server.URL("postgres"))
	if err != nil {
		c.t.Fatalf("pgtest: %v", err)
	}
	defer conn.Close(ctx)
	name := "t_" + randomHex(8)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		c.t.Fatalf("pgtest: create database: %v", err)
	}
	url := c.Server.URL(name)
	db, err := store.Open(ctx, url, 4)
	if err != nil {
		c.t.Fatalf("pgtest: %v", err)
	}
	defer db.Close()
	if err := db.Migrate(ctx, nil); err != nil {
		c.t.Fatalf("pgtest: migrate: %v", err)
	}
	return url
}

// NewDataDir returns a new directory for a PostgreSQL data directory,
// removed when the test ends. Unlike t.TempDir, which nests it in a
// directory only this process's user may enter, the server's OS user can
// reach it (when root, the server runs as another user).
func NewDataDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp(dataDirParent(), "docsapi-test-cluster-")
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func withDatabase(raw, name string) string {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	u.Path = "/" + name
	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
