package wholeserver_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// crEnv is a space with two pages, A and B, and helpers for change requests.
type crEnv struct {
	t          *testing.T
	env        *servertest.Env
	alice      *servertest.User
	org, space string
	pageA      string
	pageB      string
	spaceBase  string
	crBase     string
}

func newCREnv(t *testing.T) *crEnv {
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	a, _, _ := createPage(t, alice, space, "A", "a1\na2\na3\na4\na5")
	b, _, _ := createPage(t, alice, space, "B", "b1\nb2")
	return &crEnv{t: t, env: env, alice: alice, org: org, space: space, pageA: a, pageB: b,
		spaceBase: "/v1/spaces/" + space, crBase: "/v1/spaces/" + space + "/change-requests"}
}

// edit sets a page's markdown, in change request cr or ("") on the space.
func (e *crEnv) edit(u *servertest.User, cr, page, markdown string) *servertest.GraphQLResponse {
	e.t.Helper()
	vars := map[string]any{"s": e.space, "p": page, "in": map[string]any{"markdown": markdown}}
	if cr != "" {
		vars["cr"] = cr
	}
	return u.GraphQL(`mutation($s: ID!, $cr: ID, $p: ID!, $in: UpdatePageInput!) { updatePage(spaceId: $s, changeRequestId: $cr, pageId: $p, input: $in) { id } }`, vars)
}

func (e *crEnv) mustEdit(cr, page, markdown string) {
	e.t.Helper()
	if out := e.edit(e.alice, cr, page, markdown); len(out.Errors) > 0 {
		e.t.Fatalf("edit: %+v", out.Errors)
	}
}

// body is a page's markdown in the space's content, or in change request cr.
func (e *crEnv) body(cr, page string) string {
	e.t.Helper()
	path := e.spaceBase + "/content/page/" + page + "?format=markdown"
	if cr != "" {
		path = e.crBase + "/" + cr + "/content/page/" + page + "?format=markdown"
	}
	return e.alice.Do("GET", path, nil).Expect(http.StatusOK).JSON()["markdown"].(string)
}

func (e *crEnv) open(subject string) string {
	e.t.Helper()
	return e.alice.Do("POST", e.crBase, map[string]any{"subject": subject}).Expect(http.StatusCreated).String("id")
}

func (e *crEnv) cr(id string) map[string]any {
	e.t.Helper()
	return e.alice.Do("GET", e.crBase+"/"+id, nil).Expect(http.StatusOK).JSON()
}

func TestChangeRequestLifecycle(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	main := e.alice.Do("GET", e.spaceBase+"/content", nil).Expect(http.StatusOK).String("id")

	cr := e.alice.Do("POST", e.crBase, `{"subject":"Rewrite B","description":{"object":"document","data":{},"nodes":[]}}`).Expect(http.StatusCreated).JSON()
	id := cr["id"].(string)
	if cr["object"] != "change-request" || cr["number"] != 1.0 || cr["status"] != "open" || cr["revisionInitial"] != main ||
		cr["revision"] != main || cr["outdated"] != false || cr["createdBy"].(map[string]any)["id"] != e.alice.ID {
		t.Errorf("new change request: %v", cr)
	}
	// By number too.
	if got := e.alice.Do("GET", e.crBase+"/1", nil).Expect(http.StatusOK).String("id"); got != id {
		t.Errorf("by number: %s", got)
	}
	e.alice.Do("GET", e.crBase+"/99", nil).Expect(http.StatusNotFound).ErrorMessage()

	// Edits in the change request leave the space's content alone.
	e.mustEdit(id, e.pageB, "b1\nb2 edited")
	if e.body("", e.pageB) != "b1\nb2" || e.body(id, e.pageB) != "b1\nb2 edited" {
		t.Fatalf("bodies: main %q, change request %q", e.body("", e.pageB), e.body(id, e.pageB))
	}
	if n := e.alice.Do("GET", e.spaceBase, nil).Expect(http.StatusOK).JSON()["changeRequestsOpen"]; n != 1.0 {
		t.Errorf("open change requests: %v", n)
	}

	// Main moves on elsewhere: the change request is outdated, and merging
	// keeps both changes.
	e.mustEdit("", e.pageA, "a1 edited\na2\na3\na4\na5")
	if e.cr(id)["outdated"] != true {
		t.Error("not outdated after main moved")
	}
	res := e.alice.Do("POST", e.crBase+"/"+id+"/merge", nil).Expect(http.StatusOK).JSON()
	if res["result"] != "merge" {
		t.Errorf("merge: %v", res)
	}
	if e.body("", e.pageA) != "a1 edited\na2\na3\na4\na5" || e.body("", e.pageB) != "b1\nb2 edited" {
		t.Errorf("after merge: %q / %q", e.body("", e.pageA), e.body("", e.pageB))
	}
	merged := e.cr(id)
	if merged["status"] != "merged" || merged["revisionMerged"] != res["revision"] {
		t.Errorf("merged change request: %v", merged)
	}
	if got := e.alice.Do("GET", e.spaceBase+"/content", nil).Expect(http.StatusOK).String("id"); got != res["revision"] {
		t.Errorf("the space's content is %s, not the merge %s", got, res["revision"])
	}
	e.alice.Do("POST", e.crBase+"/"+id+"/merge", nil).Expect(http.StatusConflict).ErrorMessage()
	e.alice.Do("PATCH", e.crBase+"/"+id, `{"status":"open"}`).Expect(http.StatusConflict).ErrorMessage()
	if out := e.edit(e.alice, id, e.pageB, "late"); len(out.Errors) == 0 {
		t.Error("a merged change request took an edit")
	}

	// Lists: open by default, by status, creator and contributor.
	second := e.open("Second")
	count := func(query string) any {
		return e.alice.Do("GET", e.crBase+query, nil).Expect(http.StatusOK).JSON()["count"]
	}
	for query, want := range map[string]float64{"": 1, "?status=merged": 1, "?status=archived": 0, "?creator=" + e.alice.ID: 1,
		"?contributor=" + e.alice.ID: 0, "?status=merged&contributor=" + e.alice.ID: 1, "?requestedReviewer=" + e.alice.ID: 0} {
		if got := count(query); got != want {
			t.Errorf("list%s: %v, want %v", query, got, want)
		}
	}
	if got := e.alice.Do("GET", "/v1/orgs/"+e.org+"/change-requests?status=merged", nil).Expect(http.StatusOK).JSON()["count"]; got != 1.0 {
		t.Errorf("organization list: %v", got)
	}
	e.alice.Do("GET", e.crBase+"?status=done", nil).Expect(http.StatusBadRequest)

	// Updates: subject, description, status; merged is not a status one sets.
	for _, body := range []string{`{"status":"merged"}`, `{"subject":"` + strings.Repeat("s", 101) + `"}`, `{"description":{"object":"paragraph"}}`, `{"status":null}`} {
		e.alice.Do("PATCH", e.crBase+"/"+second, body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	got := e.alice.Do("PATCH", e.crBase+"/"+second, `{"subject":"Renamed","status":"archived"}`).Expect(http.StatusOK).JSON()
	if got["subject"] != "Renamed" || got["status"] != "archived" {
		t.Errorf("after PATCH: %v", got)
	}
	if out := e.edit(e.alice, second, e.pageA, "x"); len(out.Errors) == 0 {
		t.Error("an archived change request took an edit")
	}

	// Readers read change requests; only editors open and merge them.
	reader := e.env.NewUser("Reader")
	reader.Join(e.org, store.RoleRead)
	reader.Do("GET", e.crBase+"/"+id, nil).Expect(http.StatusOK)
	reader.Do("POST", e.crBase, `{"subject":"Mine"}`).Expect(http.StatusForbidden)
}

func TestChangeRequestConflictsAndUpdate(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)

	// The same lines changed both ways: merging is a 409 naming the page,
	// and nothing changes.
	cr := e.open("Conflicting")
	e.mustEdit(cr, e.pageA, "a1\nCR\na3\na4\na5")
	e.mustEdit("", e.pageA, "a1\nMAIN\na3\na4\na5")
	before := e.alice.Do("GET", e.spaceBase+"/content", nil).Expect(http.StatusOK).String("id")
	msg := e.alice.Do("POST", e.crBase+"/"+cr+"/merge", nil).Expect(http.StatusConflict).ErrorMessage()
	if !strings.Contains(msg, e.pageA) || !strings.Contains(msg, `"A"`) {
		t.Errorf("conflict message: %q", msg)
	}
	e.alice.Do("POST", e.crBase+"/"+cr+"/update", nil).Expect(http.StatusConflict)
	if after := e.alice.Do("GET", e.spaceBase+"/content", nil).Expect(http.StatusOK).String("id"); after != before {
		t.Error("a refused merge changed the space's content")
	}
	if c := e.cr(cr); c["status"] != "open" || e.body(cr, e.pageA) != "a1\nCR\na3\na4\na5" {
		t.Errorf("a refused merge changed the change request: %v", c)
	}

	// Edits to different parts of one page: updating from main keeps both.
	cr2 := e.open("Compatible")
	e.mustEdit(cr2, e.pageA, "a1\nMAIN\na3\na4\nCR tail")
	e.mustEdit("", e.pageB, "b1\nb2\nb3")
	res := e.alice.Do("POST", e.crBase+"/"+cr2+"/update", nil).Expect(http.StatusOK).JSON()
	updated := e.cr(cr2)
	if res["result"] != "update" || updated["revision"] != res["revision"] || updated["outdated"] != false {
		t.Errorf("update: %v, change request %v", res, updated)
	}
	if e.body(cr2, e.pageB) != "b1\nb2\nb3" || e.body(cr2, e.pageA) != "a1\nMAIN\na3\na4\nCR tail" {
		t.Errorf("after update: %q / %q", e.body(cr2, e.pageA), e.body(cr2, e.pageB))
	}
	e.alice.Do("POST", e.crBase+"/"+cr2+"/merge", nil).Expect(http.StatusOK)
	if e.body("", e.pageA) != "a1\nMAIN\na3\na4\nCR tail" {
		t.Errorf("after merging: %q", e.body("", e.pageA))
	}
}

// Many change requests opened at once get 1..n, no gap and no duplicate; two
// merged at once both land.
func TestChangeRequestConcurrency(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	const n = 12
	numbers := make([]int, n)
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res := e.alice.Do("POST", e.crBase, map[string]any{"subject": fmt.Sprintf("CR %d", i)}).Expect(http.StatusCreated).JSON()
			numbers[i], ids[i] = int(res["number"].(float64)), res["id"].(string)
		})
	}
	wg.Wait()
	slices.Sort(numbers)
	for i, got := range numbers {
		if got != i+1 {
			t.Fatalf("numbers: %v", numbers)
		}
	}

	e.mustEdit(ids[0], e.pageA, "a1\na2\na3\na4\na5 from one")
	e.mustEdit(ids[1], e.pageB, "b1\nb2 from two")
	statuses := make([]int, 2)
	for i := range 2 {
		wg.Go(func() { statuses[i] = e.alice.Do("POST", e.crBase+"/"+ids[i]+"/merge", nil).Status })
	}
	wg.Wait()
	if statuses[0] != http.StatusOK || statuses[1] != http.StatusOK {
		t.Fatalf("merge statuses: %v", statuses)
	}
	if e.body("", e.pageA) != "a1\na2\na3\na4\na5 from one" || e.body("", e.pageB) != "b1\nb2 from two" {
		t.Errorf("a merged change was lost: %q / %q", e.body("", e.pageA), e.body("", e.pageB))
	}
}

func TestMergeRules(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	cr := e.open("")
	e.mustEdit(cr, e.pageA, "a1")
	e.alice.Do("PATCH", e.spaceBase, `{"mergeRules":{"type":"rules","rules":[{"rule":"require_change_request_subject"}]}}`).Expect(http.StatusOK)
	msg := e.alice.Do("POST", e.crBase+"/"+cr+"/merge", nil).Expect(http.StatusConflict).ErrorMessage()
	if !strings.Contains(msg, "require_change_request_subject") {
		t.Errorf("message: %q", msg)
	}
	e.alice.Do("PATCH", e.crBase+"/"+cr, `{"subject":"Now with a subject"}`).Expect(http.StatusOK)
	e.alice.Do("PATCH", e.spaceBase, `{"mergeRules":{"type":"rules","rules":[{"rule":"require_change_request_subject"},{"rule":"require_at_least_one_review"}]}}`).Expect(http.StatusOK)
	e.alice.Do("POST", e.crBase+"/"+cr+"/merge", nil).Expect(http.StatusConflict)
	// Those allowed to bypass the rules merge anyway.
	e.alice.Do("PATCH", e.spaceBase, `{"mergeRules":{"type":"rules","rules":[{"rule":"require_at_least_one_review"},{"rule":"allow_bypass","users":["`+e.alice.ID+`"]}]}}`).Expect(http.StatusOK)
	e.alice.Do("POST", e.crBase+"/"+cr+"/merge", nil).Expect(http.StatusOK)
	// A locked space takes no edits, in change requests either.
	cr2 := e.open("Later")
	e.alice.Do("PATCH", e.spaceBase, `{"editMode":"locked"}`).Expect(http.StatusOK)
	if out := e.edit(e.alice, cr2, e.pageA, "x"); len(out.Errors) == 0 || out.Errors[0].Extensions["status"] != float64(http.StatusConflict) {
		t.Errorf("edit in a locked space: %+v", out.Errors)
	}
}

func TestChangeRequestPDF(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	cr := e.open("Print me")
	e.mustEdit(cr, e.pageA, "# Heading\n\nSome text with caf\u00e9.\n\n- one\n- two\n\n```\ncode\n```")
	url := e.alice.Do("GET", e.crBase+"/"+cr+"/pdf", nil).Expect(http.StatusOK).String("url")
	fetch := func(url string) (int, string, []byte) {
		resp, err := http.Get(url) // no token: the address is signed
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), b
	}
	status, ctype, body := fetch(url)
	if status != http.StatusOK || ctype != "application/pdf" || !bytes.HasPrefix(body, []byte("%PDF-")) || len(body) < 500 {
		t.Fatalf("pdf: %d %s %d bytes", status, ctype, len(body))
	}
	one := e.alice.Do("GET", e.crBase+"/"+cr+"/pdf?page="+e.pageB+"&only=true", nil).Expect(http.StatusOK).String("url")
	if status, _, body := fetch(one); status != http.StatusOK || !bytes.HasPrefix(body, []byte("%PDF-")) {
		t.Errorf("one page: %d", status)
	}
	if status, _, _ := fetch(strings.Replace(one, "only=true", "only=false", 1)); status != http.StatusNotFound {
		t.Errorf("an altered address answered %d", status)
	}
	e.alice.Do("GET", e.crBase+"/"+cr+"/pdf?page=nothing", nil).Expect(http.StatusNotFound)
	e.env.Clock.Advance(2 * time.Hour)
	if status, _, _ := fetch(url); status != http.StatusNotFound {
		t.Errorf("an expired address answered %d", status)
	}
}
