package wholeserver_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

// The graphql-http audit of the GraphQL over HTTP specification (the npm
// package graphql-http, pinned by testdata/graphql-http-audit/package-lock.json), run
// against the real server: every check passes, none warns. It needs node
// (18 or later) and the package, which .ci/run installs (npm ci); the test
// installs it itself when npm is there, and is skipped, saying why, when
// either cannot be had.
func TestGraphQLOverHTTPAudit(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "graphql-http-audit")
	node := servertest.NodeHarness(t, dir, "graphql-http")
	env := servertest.New(t)
	out := servertest.RunNode(t, node, dir, "audit.mjs", env.URL+"/graphql")
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
