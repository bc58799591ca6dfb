// Command vulncheck fails when the server's code calls a function with a
// known vulnerability, as govulncheck finds it, unless the vulnerability is
// allowed below with the reason why.
//
// govulncheck reads Go's vulnerability database from vuln.go.dev, which CI
// machines may not reach; they do reach the module proxy, which serves the
// database's sources as the golang.org/x/vulndb module. This command builds
// the database's index from that module's OSV entries (the layout
// govulncheck's -db file:// reads: index/db.json, index/modules.json,
// ID/<id>.json) and runs govulncheck over it. The database is as recent as
// vulndbVersion: bump it to learn of newer vulnerabilities.
//
// Run from the repository's root: go run ./.ci/vulncheck
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

const (
	vulndb         = "golang.org/x/vulndb@v0.0.0-20261105234957-e22db6528018"
	govulncheck    = "golang.org/x/vuln/cmd/govulncheck@v1.1.4"
	packagesToScan = "./..."
)

// allowed are the vulnerabilities the code is known to reach and that stay
// for a stated reason (no fixed release, and the server guards against
// them). Each must still be found: one no longer reached is an error, so
// the list stays true.
var allowed = map[string]string{
	"GO-2026-6909": "crewjam/saml has no fixed release: its panic on a signed assertion without a Subject is " +
		"refused with 403 (graph/sso_login.go parseSAMLResponse, TestSAMLSignIn), and a NameID in a foreign " +
		"namespace lets a provider assert only what it could assert anyway (docs/sso.md)",
}

// Exit statuses: 1 when a vulnerability is reached (or the allowed list is
// stale), 2 when the check could not run (the database or govulncheck could
// not be had), which .ci/run reports without failing.
func main() {
	called, err := scan()
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulncheck: could not check:", err)
		os.Exit(2)
	}
	if err := judge(called); err != nil {
		fmt.Fprintln(os.Stderr, "vulncheck:", err)
		os.Exit(1)
	}
	fmt.Println("vulncheck: no other known vulnerability is reached")
}

// scan runs govulncheck over the database built from the vulndb module and
// returns the vulnerabilities the code reaches.
func scan() (map[string]finding, error) {
	src, err := moduleDir(vulndb)
	if err != nil {
		return nil, err
	}
	db, err := os.MkdirTemp("", "vulndb-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(db)
	n, err := buildIndex(filepath.Join(src, "data", "osv"), db)
	if err != nil {
		return nil, err
	}
	fmt.Printf("vulncheck: %d advisories from %s\n", n, vulndb)

	var out bytes.Buffer
	cmd := exec.Command("go", "run", govulncheck, "-db", "file://"+db, "-format", "json", packagesToScan)
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("govulncheck: %w", err)
	}
	return calledVulnerabilities(&out)
}

// judge fails for every reached vulnerability not allowed, and for every
// allowed one no longer reached.
func judge(called map[string]finding) error {
	var failures []string
	for _, id := range sortedKeys(called) {
		if reason, ok := allowed[id]; ok {
			fmt.Printf("vulncheck: %s reached, allowed: %s\n", id, reason)
			continue
		}
		failures = append(failures, fmt.Sprintf("%s (%s) is reached: %s", id, called[id].summary, called[id].where))
	}
	for _, id := range sortedKeys(allowed) {
		if _, ok := called[id]; !ok {
			failures = append(failures, fmt.Sprintf("%s is allowed but no longer reached: remove it from .ci/vulncheck", id))
		}
	}
	if len(failures) > 0 {
		return errors.New(strings.Join(failures, "\n"))
	}
	return nil
}

// moduleDir downloads module@version through the module proxy and returns
// its directory in the module cache. It runs outside this module so that
// go.mod and go.sum stay as they are.
func moduleDir(module string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", module)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jsonErr := json.Unmarshal(out, &info); jsonErr != nil || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s: %v %s", module, err, info.Error)
	}
	return info.Dir, nil
}

// osvEntry is what the index needs of an OSV entry.
type osvEntry struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Affected []struct {
		Module struct {
			Path string `json:"name"`
		} `json:"package"`
	} `json:"affected"`
}

type moduleVulns struct {
	Path  string      `json:"path"`
	Vulns []indexVuln `json:"vulns"`
}

// indexVuln leaves out the optional fixed version: govulncheck then reads
// every entry of a module it finds and matches the versions itself.
type indexVuln struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
}

// buildIndex writes the database of the OSV entries in dir to out and
// returns how many it holds.
func buildIndex(dir, out string) (int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		return 0, fmt.Errorf("no OSV entries in %s (%v)", dir, err)
	}
	for _, sub := range []string{"ID", "index"} {
		if err := os.MkdirAll(filepath.Join(out, sub), 0o755); err != nil {
			return 0, err
		}
	}
	var modified time.Time
	modules := map[string]*moduleVulns{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		var e osvEntry
		if err := json.Unmarshal(raw, &e); err != nil || e.ID == "" {
			return 0, fmt.Errorf("%s: not an OSV entry (%v)", f, err)
		}
		if err := os.WriteFile(filepath.Join(out, "ID", e.ID+".json"), raw, 0o644); err != nil {
			return 0, err
		}
		if e.Modified.After(modified) {
			modified = e.Modified
		}
		for _, a := range e.Affected {
			m := modules[a.Module.Path]
			if m == nil {
				m = &moduleVulns{Path: a.Module.Path}
				modules[a.Module.Path] = m
			}
			m.Vulns = append(m.Vulns, indexVuln{ID: e.ID, Modified: e.Modified})
		}
	}
	list := make([]*moduleVulns, 0, len(modules))
	for _, path := range sortedKeys(modules) {
		list = append(list, modules[path])
	}
	if err := writeJSON(filepath.Join(out, "index", "modules.json"), list); err != nil {
		return 0, err
	}
	return len(files), writeJSON(filepath.Join(out, "index", "db.json"), map[string]time.Time{"modified": modified})
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

type finding struct{ summary, where string }

// calledVulnerabilities reads govulncheck's JSON stream and returns the
// vulnerabilities whose vulnerable functions the code calls (a finding
// whose trace starts at a function), with a summary and where one is
// called. Findings of imported packages or required modules only are not
// reached.
func calledVulnerabilities(r io.Reader) (map[string]finding, error) {
	dec := json.NewDecoder(r)
	summaries := map[string]string{}
	called := map[string]finding{}
	for {
		var msg struct {
			OSV *struct {
				ID      string `json:"id"`
				Summary string `json:"summary"`
			} `json:"osv"`
			Finding *struct {
				OSV   string `json:"osv"`
				Trace []struct {
					Module, Version, Package, Function, Receiver string
					Position                                     *struct {
						Filename     string `json:"filename"`
						Line, Column int
					} `json:"position"`
				} `json:"trace"`
			} `json:"finding"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("govulncheck's output: %w", err)
		}
		if msg.OSV != nil {
			summaries[msg.OSV.ID] = msg.OSV.Summary
		}
		f := msg.Finding
		if f == nil || len(f.Trace) == 0 || f.Trace[0].Function == "" {
			continue
		}
		where := f.Trace[0].Module + "@" + f.Trace[0].Version + " " + f.Trace[0].Package + "." + f.Trace[0].Function
		if last := f.Trace[len(f.Trace)-1]; last.Position != nil {
			where += fmt.Sprintf(", from %s:%d", last.Position.Filename, last.Position.Line)
		}
		called[f.OSV] = finding{where: where}
	}
	for id, f := range called {
		f.summary = summaries[id]
		called[id] = f
	}
	return called, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
