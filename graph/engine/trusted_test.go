package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadTrustedDocuments(t *testing.T) {
	const viewer, orgs = `query V { viewer { id } }`, `query O { organizations { items { id } } }`
	write := func(t *testing.T, files map[string]string) string {
		dir := t.TempDir()
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	t.Run("formats", func(t *testing.T) {
		dir := write(t, map[string]string{
			"codegen.json":  `{"` + DocumentHash(viewer) + `": ` + quote(viewer) + `}`,
			"apollo.json":   `{"format":"apollo-persisted-query-manifest","version":1,"operations":[{"id":"op-1","name":"O","type":"query","body":` + quote(orgs) + `}]}`,
			"extra.graphql": `subscription S { spaceEvents(spaceId: "x") { type } }`,
			"notes.txt":     "not read",
		})
		docs, err := LoadTrustedDocuments(dir)
		if err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]string{
			DocumentHash(viewer): viewer, "sha256:" + DocumentHash(viewer): viewer, "sha256:" + strings.ToUpper(DocumentHash(viewer)): viewer,
			"op-1": orgs, DocumentHash(orgs): orgs,
		} {
			if got, ok := docs.Lookup(id); !ok || got != want {
				t.Errorf("Lookup(%s) = %q, %v", id, got, ok)
			}
		}
		if docs.Len() != 4 {
			t.Errorf("%d ids registered, want 4", docs.Len())
		}
		one, err := LoadTrustedDocuments(filepath.Join(dir, "apollo.json"))
		if err != nil || one.Len() != 2 {
			t.Fatalf("a single manifest: %v, %d ids", err, one.Len())
		}
	})
	for name, files := range map[string]map[string]string{
		"not a manifest":        {"m.json": `["a"]`},
		"not a document":        {"m.json": `{"x": "query {"}`},
		"one id, two documents": {"a.json": `{"x": ` + quote(viewer) + `}`, "b.json": `{"x": ` + quote(orgs) + `}`},
		"a bad .graphql file":   {"a.graphql": "{"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := LoadTrustedDocuments(write(t, files)); err == nil {
				t.Fatal("loaded")
			}
		})
	}
	if _, err := LoadTrustedDocuments(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Fatal("a missing file loaded")
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
