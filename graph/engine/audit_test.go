package engine_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

// The graphql-http audit of the GraphQL over HTTP specification (the npm
// package graphql-http, pinned by testdata/audit/package-lock.json), run
// against the real server: every check passes, none warns. It needs node
// (18 or later) and the package, which .ci/run installs (npm ci); the test
// installs it itself when npm is there, and is skipped, saying why, when
// either cannot be had.
func TestGraphQLOverHTTPAudit(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the graphql-http audit cannot run (.ci/run installs nodejs and npm)")
	}
	dir := filepath.Join("testdata", "audit")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "graphql-http", "package.json")); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Skip("npm is not installed and graphql-http is not in testdata/audit/node_modules: the audit cannot run")
		}
		install := exec.Command(npm, "ci", "--no-audit", "--no-fund")
		install.Dir = dir
		if out, err := install.CombinedOutput(); err != nil {
			t.Skipf("npm ci could not install graphql-http (no registry?): %v\n%s", err, out)
		}
	}

	env := servertest.New(t)
	audit := exec.Command(node, "audit.mjs", env.URL+"/graphql")
	audit.Dir = dir
	var stderr bytes.Buffer
	audit.Stderr = &stderr
	out, err := audit.Output()
	if exitErr := (*exec.ExitError)(nil); errors.As(err, &exitErr) && exitErr.ExitCode() == 3 {
		t.Skipf("this node cannot run the audit: %s", stderr.Bytes())
	}
	if err != nil {
		t.Fatalf("the audit did not run: %v\n%s%s", err, out, stderr.Bytes())
	}
	var report struct {
		Counts  map[string]int `json:"counts"`
		Results []struct {
			ID, Name, Status, Reason string
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("the audit's report: %v\n%s", err, out)
	}
	t.Logf("graphql-http audit: %d ok, %d warn, %d error", report.Counts["ok"], report.Counts["warn"], report.Counts["error"])
	if len(report.Results) == 0 {
		t.Fatal("the audit checked nothing")
	}
	for _, r := range report.Results {
		if r.Status != "ok" {
			t.Errorf("%s %s: %s: %s", r.Status, r.ID, r.Name, r.Reason)
		}
	}
}
