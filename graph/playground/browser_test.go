package playground_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/graph/playground"
)

// browserReport is what testdata/browser/playground.mjs observed.
type browserReport struct {
	// Every request the pages made (http, https and ws URLs), and those
	// the test blocked for leaving the server.
	Requests []string
	Blocked  []string
	// Content-Security-Policy violations and console errors of the pages.
	Violations    []string
	ConsoleErrors []string
	// The token field's status line once the token was given.
	Status string
	// Variables of the example tabs before and after the token was given.
	VariablesBefore []string
	VariablesAfter  []string
	// Per tab run with the token of the field: its title and response.
	Runs []struct{ Tab, Response string }
	// The tab run with the token in its Headers editor instead.
	HeadersRun string
	// Another browser: the status line after a bad token, then after the
	// token of a user of no organization, and that user's tab variables.
	RefusedStatus  string
	NoOrgStatus    string
	NoOrgVariables []string
	// A second page of the same browser: its status line, and whether its
	// first tab came back from the first page's (sanitized) tab state.
	SecondPageStatus    string
	SecondPageVariables string
	// Everything the browser keeps for the origin, and the page's DOM, at the
	// end; whether the token appears anywhere in them.
	Storage        string
	History        string
	TokenInStorage []string
	TokenInDOM     bool
}

// The playground in a real browser (Debian's chromium, driven by
// playwright-core from testdata/browser): it loads nothing from elsewhere,
// a token given once runs every tab, the example tabs get the caller's ids,
// and the token is left in no storage of the browser.
func TestPlaygroundInBrowser(t *testing.T) {
	node, chromium := servertest.BrowserTools(t)
	dir, err := filepath.Abs("testdata/browser")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core")); err != nil {
		t.Skipf("playwright-core is not installed: run `npm ci` in %s", dir)
	}

	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	bob := env.NewUser("Bob")
	site := alice.Do("POST", "/v1/orgs/"+org+"/sites", map[string]any{"title": "Handbook"}).Expect(http.StatusCreated).String("id")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "playground.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"PLAYGROUND_URL="+env.URL+"/graphql",
		"PLAYGROUND_TOKEN="+alice.Token,
		"PLAYGROUND_TOKEN_NO_ORG="+bob.Token,
		"CHROMIUM="+chromium,
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("playground.mjs: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("report: %s\nstderr:\n%s", stdout.String(), stderr.String())
		}
	})
	var r browserReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("report: %v\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}

	// Nothing leaves the server: every request is to its own origin.
	origin, _ := url.Parse(env.URL)
	if len(r.Requests) < 6 {
		t.Errorf("only %d requests recorded: %q", len(r.Requests), r.Requests)
	}
	for _, raw := range r.Requests {
		u, err := url.Parse(raw)
		if err != nil || u.Host != origin.Host || (u.Scheme != "http" && u.Scheme != "ws") {
			t.Errorf("request to %s, not to the server %s", raw, env.URL)
		}
	}
	if len(r.Blocked) > 0 {
		t.Errorf("requests leaving the server: %q", r.Blocked)
	}
	if len(r.Violations) > 0 || len(r.ConsoleErrors) > 0 {
		t.Errorf("Content-Security-Policy violations %q, console errors %q", r.Violations, r.ConsoleErrors)
	}

	// The example tabs: placeholders, then the caller's ids.
	if len(r.VariablesBefore) != len(playground.Examples) || len(r.VariablesAfter) != len(playground.Examples) {
		t.Fatalf("variables before %q, after %q", r.VariablesBefore, r.VariablesAfter)
	}
	for i, e := range playground.Examples {
		if r.VariablesBefore[i] != e.Variables {
			t.Errorf("tab %d before the token: variables %q, want %q", i, r.VariablesBefore[i], e.Variables)
		}
		want := strings.NewReplacer(playground.OrganizationPlaceholder, org, playground.SitePlaceholder, site).Replace(e.Variables)
		if r.VariablesAfter[i] != want {
			t.Errorf("tab %d with the token: variables %q, want %q", i, r.VariablesAfter[i], want)
		}
	}
	if !strings.Contains(r.Status, "Alice") || !strings.Contains(r.Status, "Acme") || !strings.Contains(r.Status, "Handbook") {
		t.Errorf("status %q", r.Status)
	}

	// One token, every tab: each ran with data and no error.
	if len(r.Runs) != len(playground.Examples) {
		t.Fatalf("runs %+v", r.Runs)
	}
	wants := [][]string{{alice.ID, `"Acme"`}, {site, `"Handbook"`}, {org, `"spaces"`}}
	for i, run := range r.Runs {
		var out struct {
			Data   map[string]any
			Errors []any
		}
		if err := json.Unmarshal([]byte(run.Response), &out); err != nil || len(out.Data) == 0 || len(out.Errors) > 0 {
			t.Errorf("tab %q: %v: %s", run.Tab, err, run.Response)
			continue
		}
		for _, w := range wants[i] {
			if !strings.Contains(run.Response, w) {
				t.Errorf("tab %q: no %s in %s", run.Tab, w, run.Response)
			}
		}
	}
	if !strings.Contains(r.HeadersRun, alice.ID) {
		t.Errorf("tab with the token in its Headers editor: %s", r.HeadersRun)
	}

	// A refused token; a user of no organization.
	if !strings.Contains(r.RefusedStatus, "refused") {
		t.Errorf("status after a bad token: %q", r.RefusedStatus)
	}
	if !strings.Contains(r.NoOrgStatus, "Bob") || !strings.Contains(r.NoOrgStatus, "no organization") {
		t.Errorf("status of a user of no organization: %q", r.NoOrgStatus)
	}
	if len(r.NoOrgVariables) != len(playground.Examples) {
		t.Errorf("variables of a user of no organization: %q", r.NoOrgVariables)
	}
	for i := range r.NoOrgVariables {
		if i < len(playground.Examples) && r.NoOrgVariables[i] != playground.Examples[i].Variables {
			t.Errorf("tab %d of a user of no organization: variables %q, want the placeholders", i, r.NoOrgVariables[i])
		}
	}

	// A second page: no token, but the history and the filled tabs.
	if strings.Contains(r.SecondPageStatus, "Alice") {
		t.Errorf("second page status %q", r.SecondPageStatus)
	}
	if !strings.Contains(r.SecondPageVariables, org) {
		t.Errorf("second page's tab variables %q", r.SecondPageVariables)
	}
	if !strings.Contains(r.History, "query SiteTree") {
		t.Errorf("history %s", r.History)
	}

	// The token is nowhere the browser keeps things, nor in the page.
	if !strings.Contains(r.Storage, "graphiql:queries") {
		t.Errorf("storage scan saw no history: %s", r.Storage)
	}
	if len(r.TokenInStorage) > 0 || strings.Contains(r.Storage, alice.Token) {
		t.Errorf("the token is left in %q:\n%s", r.TokenInStorage, r.Storage)
	}
	if r.TokenInDOM {
		t.Error("the token is in the page's DOM")
	}
}
