package rest_test

import (
	"os"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/rest"
)

// The coverage document is generated from the route table; it must not go stale.
func TestCoverageDocumentIsCurrent(t *testing.T) {
	t.Parallel()
	schema := graph.Schema()
	rows, err := rest.Coverage(schema)
	if err != nil {
		t.Fatal(err)
	}
	want := rest.CoverageMarkdown(rows)
	got, err := os.ReadFile("../docs/api-coverage.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatal("docs/api-coverage.md is stale: run `go run ./cmd/docsapi routes --markdown > docs/api-coverage.md`")
	}
	for _, r := range rows {
		if r.Implemented && r.GraphQL == "" {
			t.Errorf("%s %s has no GraphQL field", r.Method, r.Path)
		}
	}
}

// Every operation document is served by a route, and routes are unique.
func TestEveryDocumentHasARoute(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir("operations")
	if err != nil {
		t.Fatal(err)
	}
	routed := map[string]bool{}
	seen := map[string]bool{}
	for _, r := range rest.Routes {
		routed[r.Operation] = true
		if r.Extended != "" {
			routed[r.Extended] = true
		}
		if seen[r.Method+" "+r.Path] {
			t.Errorf("route %s %s listed twice", r.Method, r.Path)
		}
		seen[r.Method+" "+r.Path] = true
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".graphql")
		if ok && !routed[name] {
			t.Errorf("operations/%s has no route", e.Name())
		}
	}
}
