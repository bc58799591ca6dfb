package wholeserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/rest"
)

// gitbookClientDir holds the node harness: package.json and package-lock.json
// pinning @gitbook/api at the reference's version, and client.mjs.
var gitbookClientDir = filepath.Join("testdata", "gitbook-client")

// GitBook's own client, @gitbook/api, works against this server unchanged,
// pointed at its address: every route of the table that the reference has
// (all but createOrganization) is called through the client's method of
// its operationId, with the fixture TestReferenceShapes uses and in the
// same order (deletions last, so they are called too), the bodies given
// to the client as the objects a program hands it. Each call must not
// throw in the client and must answer the route's status; what the client
// sent must be the route's path and query, and a body the reference's
// request schema (the client's request types) admits; what it decoded,
// the answer's body, must validate against the reference's response
// schema as in TestReferenceShapes (its deviations alone set aside), or be
// empty for a route answering none.
//
// It needs node (18 or later) and the client, which .ci/run installs (npm
// ci in testdata/gitbook-client); the test installs it itself when npm is
// there, and is skipped, saying why, when either cannot be had.
func TestGitBookClient(t *testing.T) {
	t.Parallel()
	node := gitbookClient(t)
	ref := loadReference(t)
	env := servertest.New(t)
	f := newShapesFixture(t, env)

	type plannedCall struct {
		Operation string            `json:"operation"`
		Params    map[string]string `json:"params"`
		Query     map[string]any    `json:"query,omitempty"`
		Body      json.RawMessage   `json:"body,omitempty"`
	}
	var calls []referenceCall
	var planned []plannedCall
	var notInReference []string
	for _, route := range referenceOrder(rest.Routes) {
		if ref.ops[route.Operation] == nil {
			notInReference = append(notInReference, route.Operation)
			continue
		}
		for _, c := range f.calls(t, route) {
			p := plannedCall{Operation: route.Operation, Params: c.params, Query: c.query}
			if c.body != "" {
				p.Body = json.RawMessage(c.body)
			}
			calls, planned = append(calls, c), append(planned, p)
		}
	}
	plan := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(plan, []byte(mustJSON(t, map[string]any{
		"endpoint": env.URL, "authToken": f.caller.Token, "calls": planned,
	})), 0o600); err != nil {
		t.Fatal(err)
	}
	out := servertest.RunNode(t, node, gitbookClientDir, "client.mjs", plan)
	var answers []clientAnswer
	if err := json.Unmarshal(out, &answers); err != nil {
		t.Fatalf("client.mjs's report: %v\n%.2000s", err, out)
	}
	if len(answers) != len(calls) {
		t.Fatalf("client.mjs answered %d calls of %d", len(answers), len(calls))
	}

	seed := seedOperations(t)
	failed := map[string]bool{}
	var failures []string
	validated, noBody := 0, 0
	deviationsSeen := map[int]bool{}
	for i, a := range answers {
		c := calls[i]
		if a.Operation != c.route.Operation {
			t.Fatalf("client.mjs's answer %d is of %s, not %s", i, a.Operation, c.route.Operation)
		}
		route, op := c.route, ref.ops[c.route.Operation]
		problems := a.problems(c, ref, op)
		if len(problems) == 0 {
			if route.Status == http.StatusNoContent || route.Status == http.StatusResetContent {
				noBody++
			} else if problems = ref.answerProblems(route, op, a.Status, a.JSON, deviationsSeen); len(problems) == 0 {
				validated++
			}
		}
		if len(problems) > 0 {
			failed[route.Operation] = true
			failures = append(failures, fmt.Sprintf("%s (%s, %s %s):\n    %s", route.Operation, a.Method, route.Method, c.target(),
				strings.Join(problems, "\n    ")))
		}
	}
	failures = append(failures, unseenDeviations(deviationsSeen)...)

	operations, passed, seedPassed, seedTotal := 0, 0, 0, 0
	for _, route := range rest.Routes {
		if ref.ops[route.Operation] == nil {
			continue
		}
		operations++
		inSeed := seed[route.Operation] || slices.Contains(laterReferenceTags, route.Tag)
		if inSeed {
			seedTotal++
		}
		if !failed[route.Operation] {
			passed++
			if inSeed {
				seedPassed++
			}
		}
	}
	t.Logf("%d/%d operations of the route table through @gitbook/api %s (the specification's %d and those of %s since: %d/%d): "+
		"%d validated bodies (%d deviations kept), %d no-body statuses; not in the reference, so not called: %s",
		passed, operations, referenceVersion, len(seed), strings.Join(laterReferenceTags, ", "), seedPassed, seedTotal, validated,
		len(referenceDeviations), noBody, strings.Join(notInReference, ", "))
	if len(failures) > 0 {
		t.Errorf("%d calls through @gitbook/api %s failed:\n%s", len(failures), referenceVersion, strings.Join(failures, "\n"))
	}
}

// laterReferenceTags are the tags of the reference's operations added to
// the route table after the specification's: counted with them.
var laterReferenceTags = []string{"site-customization", "site-share-links", "site-publishing-auth", "site-redirects", "urls"}

// clientAnswer is client.mjs's report of a call.
type clientAnswer struct {
	Operation string
	// Method is the client's: api.<group>.<name>.
	Method string
	Sent   *struct {
		Method, URL, ContentType string
		Body                     *string
	}
	Status int
	// JSON is the answer as the client decoded it, for a method answering
	// JSON; Text is the body of one answering none.
	JSON  json.RawMessage
	Text  *string
	Error string
}

// problems is what is wrong with the call c as the client made it and with
// its answer, the body of a JSON answer aside: the client threw, sent
// another request than c's, a body the reference's request schema (op's)
// refuses, or the answer has another status than the route's.
func (a clientAnswer) problems(c referenceCall, ref *reference, op *referenceOperation) []string {
	route := c.route
	if a.Error != "" {
		return []string{fmt.Sprintf("the client threw (%d): %s", a.Status, a.Error)}
	}
	if a.Sent == nil {
		return []string{"the client sent nothing"}
	}
	var out []string
	u, err := url.Parse(a.Sent.URL)
	if err != nil {
		return []string{err.Error()}
	}
	target := u.Path
	if q := u.Query().Encode(); q != "" {
		target += "?" + q
	}
	if a.Sent.Method != route.Method || target != c.target() {
		out = append(out, fmt.Sprintf("the client sent %s %s, not %s %s", a.Sent.Method, target, route.Method, c.target()))
	}
	switch {
	case a.Sent.Body == nil && c.body != "":
		out = append(out, "the client sent no body")
	case a.Sent.Body != nil:
		if a.Sent.ContentType != "application/json" {
			out = append(out, fmt.Sprintf("the client sent its body as %q", a.Sent.ContentType))
		}
		leaves, err := ref.validateRequest(op, []byte(*a.Sent.Body))
		if err != nil {
			leaves = []string{err.Error()}
		}
		for _, leaf := range leaves {
			out = append(out, "the body sent, by the reference's request schema: "+leaf)
		}
	}
	created := route.Created != "" && a.Status == http.StatusCreated
	if a.Status != route.Status && !created {
		out = append(out, fmt.Sprintf("answered %d, not %d", a.Status, route.Status))
	}
	if limit, ok := c.query["limit"].(int); ok {
		var page struct {
			Next  *struct{ Page string }
			Items []json.RawMessage
		}
		if err := json.Unmarshal(a.JSON, &page); err != nil || len(page.Items) != limit || page.Next == nil || page.Next.Page == "" {
			out = append(out, fmt.Sprintf("a page of %d answered %d items and next %v (%v)", limit, len(page.Items), page.Next, err))
		}
	}
	noBody := route.Status == http.StatusNoContent || route.Status == http.StatusResetContent
	switch {
	case noBody && (a.Text == nil || *a.Text != ""):
		out = append(out, fmt.Sprintf("answered a body, where the route has none: %.200s", a.JSON))
	case !noBody && a.JSON == nil:
		out = append(out, "the client read no JSON answer")
	}
	return out
}

// seedOperations are the operationIds of the specification's 143
// operations (rest/spec_operations.txt).
func seedOperations(t *testing.T) map[string]bool {
	t.Helper()
	raw, err := restFile("spec_operations.txt")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) == 3 && !strings.HasPrefix(line, "#") {
			out[f[2]] = true
		}
	}
	return out
}

// gitbookClient is node, with @gitbook/api installed in gitbookClientDir
// at the reference's release (its own copy of the API description is
// referenceFile, byte for byte); the test is skipped, saying why, when
// either cannot be had.
func gitbookClient(t *testing.T) string {
	t.Helper()
	node := servertest.NodeHarness(t, gitbookClientDir, "@gitbook/api")
	installed := filepath.Join(gitbookClientDir, "node_modules", "@gitbook", "api")
	raw, err := os.ReadFile(filepath.Join(installed, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Version != referenceVersion {
		t.Fatalf("%s has @gitbook/api %s, not %s: run npm ci in %s", installed, pkg.Version, referenceVersion, gitbookClientDir)
	}
	theirs, err := os.ReadFile(filepath.Join(installed, "spec", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := restFile(referenceFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(theirs, ours) {
		t.Fatalf("@gitbook/api %s's API description is not %s", referenceVersion, referenceFile)
	}
	return node
}
