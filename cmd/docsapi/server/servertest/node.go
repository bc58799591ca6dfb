package servertest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The tests that drive the server from node (graphql-http's audit, GitBook's
// own API client) run a harness: a testdata folder with a package.json, a
// package-lock.json pinning the npm packages, and a script. .ci/run installs
// the packages (npm ci); a test installs them itself when npm is there.

// NodeHarness is node, with the packages of the harness in dir installed:
// npm ci runs there when node_modules lacks pkg. The test is skipped,
// saying why, when node, npm or the registry cannot be had.
func NodeHarness(t testing.TB, dir, pkg string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node is not installed: %s (%s) cannot run (.ci/run installs nodejs and npm)", pkg, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Skipf("npm is not installed and %s is not in %s/node_modules: it cannot run", pkg, dir)
		}
		install := exec.Command(npm, "ci", "--no-audit", "--no-fund")
		install.Dir = dir
		if out, err := install.CombinedOutput(); err != nil {
			t.Skipf("npm ci could not install %s in %s (no registry?): %v\n%s", pkg, dir, err, out)
		}
	}
	return node
}

// RunNode runs node in dir with args and returns what it wrote to standard
// output. Exit status 3 is a script's "this node cannot run me" (no fetch
// before node 18): the test is skipped with what it wrote to standard
// error. Another failure fails the test.
func RunNode(t testing.TB, node, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(node, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if exitErr := (*exec.ExitError)(nil); errors.As(err, &exitErr) && exitErr.ExitCode() == 3 {
		t.Skipf("this node cannot run %s: %s", args[0], stderr.Bytes())
	}
	if err != nil {
		t.Fatalf("node %s did not run: %v\n%s%s", args[0], err, out, stderr.Bytes())
	}
	return out
}
