package pgtest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/docsapi/docsapi/store/pgtest"
)

// What killed test binaries leave in memory is removed by the next one: a
// data directory over an hour old in which no postmaster runs. A directory
// whose postmaster (or a Citus node's) runs stays, as do new ones and what
// is not a test server's.
func TestStaleDataDirectoriesAreSwept(t *testing.T) {
	t.Parallel()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	alive, gone := strconv.Itoa(os.Getpid()), strconv.Itoa(dead.Process.Pid)
	parent := t.TempDir()
	dirs := []struct {
		name, pidFile, pid string
		old, kept          bool
	}{
		{"docsapi-test-1", "", "", true, false},
		{"docsapi-test-2", "pgdata/postmaster.pid", gone, true, false},
		{"docsapi-test-3", "pgdata/postmaster.pid", alive, true, true},
		{"docsapi-test-citus-4", "node1/pgdata/postmaster.pid", alive, true, true},
		{"docsapi-test-cluster-5", "pgdata/postmaster.pid", gone, false, true},
		{"someone-else", "", "", true, true},
	}
	for _, d := range dirs {
		dir := filepath.Join(parent, d.name)
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(d.pidFile)), 0o700); err != nil {
			t.Fatal(err)
		}
		if d.pidFile != "" {
			// postmaster.pid's first lines: pid, data directory, start
			// time, port.
			pidFile := d.pid + "\n" + filepath.Dir(filepath.Join(dir, d.pidFile)) + "\n1764400000\n5432\n"
			if err := os.WriteFile(filepath.Join(dir, d.pidFile), []byte(pidFile), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if d.old {
			then := time.Now().Add(-2 * time.Hour)
			if err := os.Chtimes(dir, then, then); err != nil {
				t.Fatal(err)
			}
		}
	}
	pgtest.SweepStale(parent)
	for _, d := range dirs {
		_, err := os.Stat(filepath.Join(parent, d.name))
		if kept := err == nil; kept != d.kept {
			t.Errorf("%s: kept %v, want %v", d.name, kept, d.kept)
		}
	}
}
