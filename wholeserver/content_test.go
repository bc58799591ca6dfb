package wholeserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// gql runs a GraphQL mutation as u, failing on errors, and decodes its data.
func gql(t *testing.T, u *servertest.User, query string, vars map[string]any, into any) {
	t.Helper()
	out := u.GraphQL(query, vars)
	if len(out.Errors) > 0 {
		t.Fatalf("%s: %+v", strings.Fields(query)[0], out.Errors)
	}
	if into != nil {
		if err := json.Unmarshal(out.Data, into); err != nil {
			t.Fatal(err)
		}
	}
}

// gqlError runs a GraphQL mutation expected to fail with an error of status.
func gqlError(t *testing.T, u *servertest.User, query string, vars map[string]any, status int) {
	t.Helper()
	out := u.GraphQL(query, vars)
	if len(out.Errors) == 0 {
		t.Fatalf("no error, want %d: %s", status, out.Data)
	}
	if got := out.Errors[0].Extensions["status"]; got != float64(status) {
		t.Fatalf("error %v (%s), want status %d", got, out.Errors[0].Message, status)
	}
}

const (
	createPageQuery = `mutation($s: ID!, $in: CreatePageInput!) { createPage(spaceId: $s, input: $in) { id path slug } }`
	updatePageQuery = `mutation($s: ID!, $p: ID!, $in: UpdatePageInput!) { updatePage(spaceId: $s, pageId: $p, input: $in) { id path } }`
	movePageQuery   = `mutation($s: ID!, $p: ID!, $in: MovePageInput!) { movePage(spaceId: $s, pageId: $p, input: $in) { id path } }`
	deletePageQuery = `mutation($s: ID!, $p: ID!) { deletePage(spaceId: $s, pageId: $p) }`
)

type pageRef struct{ ID, Path, Slug string }

func newPage(t *testing.T, u *servertest.User, space string, in map[string]any) pageRef {
	t.Helper()
	var out struct{ CreatePage pageRef }
	gql(t, u, createPageQuery, map[string]any{"s": space, "in": in}, &out)
	return out.CreatePage
}

// titles flattens a page tree (from GET .../pages) as "title[children]".
func titles(pages []any) string {
	var parts []string
	for _, p := range pages {
		m := p.(map[string]any)
		s := m["title"].(string)
		if kids, _ := m["pages"].([]any); len(kids) > 0 {
			s += "[" + titles(kids) + "]"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}

func TestSpaceContentReadAndEdit(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	base := "/v1/spaces/" + space

	// A new space has an empty first revision.
	rev := alice.Do("GET", base+"/content", nil).Expect(http.StatusOK).JSON()
	first := rev["id"].(string)
	if rev["object"] != "revision" || rev["type"] != "edits" || len(rev["pages"].([]any)) != 0 || len(rev["parents"].([]any)) != 0 ||
		rev["files"] == nil || rev["urls"].(map[string]any)["app"] == nil {
		t.Errorf("first revision: %v", rev)
	}

	md := "# Welcome\n\nSome **bold** and a [link](https://example.com).\n\n- one\n- two\n\n```go\nfmt.Println(1)\n```\n"
	intro := newPage(t, alice, space, map[string]any{"title": "Getting started", "markdown": md})
	install := newPage(t, alice, space, map[string]any{"title": "Install", "parent": intro.ID, "markdown": "Run it."})
	faq := newPage(t, alice, space, map[string]any{"title": "FAQ", "type": "group"})
	first2 := newPage(t, alice, space, map[string]any{"title": "Getting started", "position": map[string]any{"before": intro.ID}})
	if install.Path != "getting-started/install" || first2.Slug != "getting-started-2" {
		t.Errorf("paths: %+v %+v", install, first2)
	}
	pages := alice.Do("GET", base+"/content/pages", nil).Expect(http.StatusOK).JSON()["pages"].([]any)
	if got := titles(pages); got != "Getting started,Getting started[Install],FAQ" {
		t.Errorf("tree: %s", got)
	}

	// A page's body: a document by default, markdown on request.
	page := alice.Do("GET", base+"/content/page/"+intro.ID, nil).Expect(http.StatusOK).JSON()
	doc, _ := page["document"].(map[string]any)
	if _, has := page["markdown"]; has || doc["object"] != "document" {
		t.Fatalf("default format: %v", page)
	}
	nodes := doc["nodes"].([]any)
	var types []string
	for _, n := range nodes {
		types = append(types, n.(map[string]any)["type"].(string))
	}
	if fmt.Sprint(types) != "[heading-1 paragraph list-unordered code]" {
		t.Errorf("document blocks: %v", types)
	}
	if !strings.Contains(string(alice.Do("GET", base+"/content/page/"+intro.ID, nil).Body), `"type":"bold"`) {
		t.Error("no bold mark in the document")
	}
	page = alice.Do("GET", base+"/content/page/"+intro.ID+"?format=markdown", nil).Expect(http.StatusOK).JSON()
	if page["markdown"] != md || page["document"] != nil || page["path"] != "getting-started" || page["kind"] != "sheet" {
		t.Errorf("markdown format: %v", page)
	}
	if got := alice.Do("GET", base+"/content/path/getting-started/install?format=markdown", nil).Expect(http.StatusOK).JSON(); got["id"] != install.ID || got["markdown"] != "Run it." {
		t.Errorf("by path: %v", got)
	}
	alice.Do("GET", base+"/content/page/"+intro.ID+"?format=pdf", nil).Expect(http.StatusBadRequest).ErrorMessage()
	alice.Do("GET", base+"/content/page/nothing", nil).Expect(http.StatusNotFound).ErrorMessage()
	alice.Do("GET", base+"/content/path/no/such/page", nil).Expect(http.StatusNotFound).ErrorMessage()
	if got := alice.Do("GET", base+"/content/page/"+faq.ID, nil).Expect(http.StatusOK).JSON(); got["type"] != "group" || got["document"] != nil {
		t.Errorf("a group: %v", got)
	}

	// Edits make new revisions; old ones never change.
	before := alice.Do("GET", base+"/content", nil).Expect(http.StatusOK).String("id")
	gql(t, alice, updatePageQuery, map[string]any{"s": space, "p": install.ID, "in": map[string]any{"title": "Installation", "markdown": "Run it twice."}}, nil)
	after := alice.Do("GET", base+"/content", nil).Expect(http.StatusOK).JSON()
	if after["id"] == before || after["parents"].([]any)[0] != before {
		t.Errorf("new revision %v, parents %v, want a child of %s", after["id"], after["parents"], before)
	}
	old := alice.Do("GET", base+"/revisions/"+before+"/page/"+install.ID+"?format=markdown", nil).Expect(http.StatusOK).JSON()
	if old["markdown"] != "Run it." || old["title"] != "Install" {
		t.Errorf("the old revision changed: %v", old)
	}
	if n := len(alice.Do("GET", base+"/revisions/"+first+"/pages", nil).Expect(http.StatusOK).JSON()["pages"].([]any)); n != 0 {
		t.Errorf("the first revision now has %d pages", n)
	}
	alice.Do("GET", base+"/revisions/nothing", nil).Expect(http.StatusNotFound)

	// Moves: into FAQ, before nothing else; not under itself.
	gql(t, alice, movePageQuery, map[string]any{"s": space, "p": install.ID, "in": map[string]any{"parent": faq.ID}}, nil)
	gqlError(t, alice, movePageQuery, map[string]any{"s": space, "p": faq.ID, "in": map[string]any{"parent": install.ID}}, http.StatusBadRequest)
	gqlError(t, alice, movePageQuery, map[string]any{"s": space, "p": intro.ID, "in": map[string]any{"position": map[string]any{"before": install.ID}}}, http.StatusBadRequest)
	gql(t, alice, movePageQuery, map[string]any{"s": space, "p": faq.ID, "in": map[string]any{"position": map[string]any{"before": first2.ID}}}, nil)
	pages = alice.Do("GET", base+"/content/pages", nil).Expect(http.StatusOK).JSON()["pages"].([]any)
	if got := titles(pages); got != "FAQ[Installation],Getting started,Getting started" {
		t.Errorf("after moves: %s", got)
	}

	// Bad input changes nothing.
	current := alice.Do("GET", base+"/content", nil).Expect(http.StatusOK).String("id")
	for _, in := range []map[string]any{{"title": ""}, {"title": strings.Repeat("t", 256)}, {"title": "X", "parent": "nothing"},
		{"title": "X", "slug": "Not A Slug"}, {"title": "X", "slug": "faq"}, {"title": "X", "type": "group", "markdown": "body"}} {
		gqlError(t, alice, createPageQuery, map[string]any{"s": space, "in": in}, http.StatusBadRequest)
	}
	if got := alice.Do("GET", base+"/content", nil).Expect(http.StatusOK).String("id"); got != current {
		t.Errorf("a refused edit made revision %s", got)
	}

	// Deleting takes the pages under it too; deleting nothing is false.
	var del struct{ DeletePage bool }
	gql(t, alice, deletePageQuery, map[string]any{"s": space, "p": faq.ID}, &del)
	if !del.DeletePage {
		t.Error("deletePage answered false")
	}
	alice.Do("GET", base+"/content/page/"+install.ID, nil).Expect(http.StatusNotFound)
	gql(t, alice, deletePageQuery, map[string]any{"s": space, "p": faq.ID}, &del)
	if del.DeletePage {
		t.Error("deleting a deleted page answered true")
	}

	// Duplicating copies the content.
	dup := alice.Do("POST", base+"/duplicate", nil).Expect(http.StatusCreated).String("id")
	if got := titles(alice.Do("GET", "/v1/spaces/"+dup+"/content/pages", nil).Expect(http.StatusOK).JSON()["pages"].([]any)); got != "Getting started,Getting started" {
		t.Errorf("the copy's pages: %s", got)
	}

	// Readers read, editors edit, a locked space refuses every edit.
	reader, editor := env.NewUser("Reader"), env.NewUser("Editor")
	reader.Join(org, store.RoleRead)
	editor.Join(org, store.RoleEdit)
	reader.Do("GET", base+"/content/page/"+intro.ID, nil).Expect(http.StatusOK)
	gqlError(t, reader, createPageQuery, map[string]any{"s": space, "in": map[string]any{"title": "Mine"}}, http.StatusForbidden)
	newPage(t, editor, space, map[string]any{"title": "By the editor"})
	alice.Do("PATCH", base, `{"editMode":"locked"}`).Expect(http.StatusOK)
	gqlError(t, editor, createPageQuery, map[string]any{"s": space, "in": map[string]any{"title": "Locked out"}}, http.StatusConflict)
	env.NewUser("Stranger").Do("GET", base+"/content", nil).Expect(http.StatusNotFound)
}

func TestPageNestingIsBounded(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Deep"}`).Expect(http.StatusCreated).String("id")
	parent := ""
	for i := range 8 {
		in := map[string]any{"title": fmt.Sprintf("Level %d", i+1)}
		if parent != "" {
			in["parent"] = parent
		}
		parent = newPage(t, alice, space, in).ID
	}
	gqlError(t, alice, createPageQuery, map[string]any{"s": space, "in": map[string]any{"title": "Too deep", "parent": parent}}, http.StatusBadRequest)
	// The whole tree reads in one request.
	pages := alice.Do("GET", "/v1/spaces/"+space+"/content/pages", nil).Expect(http.StatusOK).JSON()["pages"].([]any)
	if got := titles(pages); !strings.Contains(got, "Level 8") {
		t.Errorf("the deepest page is missing: %s", got)
	}
}

// A revision never changes, so the server keeps its page tree: reading the
// same content again does not read its pages again, and an edit (a new
// revision) is read afresh.
func TestRevisionPagesAreReadOnce(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Debug: true})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Docs"}).Expect(http.StatusCreated).String("id")
	page, _, _ := createPage(t, alice, space, "Intro", "Hello")
	read := func() (title string, queries int) {
		res := alice.Do("GET", "/v1/spaces/"+space+"/content/page/"+page, nil).Expect(http.StatusOK)
		return res.String("title"), atoi(t, res.Header.Get("X-SQL-Queries"))
	}
	if out := alice.GraphQL(`mutation($s: ID!, $p: ID!) { updatePage(spaceId: $s, pageId: $p, input: {title: "Welcome"}) { id } }`,
		map[string]any{"s": space, "p": page}); len(out.Errors) > 0 {
		t.Fatalf("updatePage: %+v", out.Errors)
	}
	title1, first := read()
	title2, second := read()
	if title1 != "Welcome" || title2 != "Welcome" {
		t.Errorf("after the edit the page reads %q, then %q", title1, title2)
	}
	if second != first-1 {
		t.Errorf("page reads: %d then %d SQL queries, want one fewer the second time (the pages from memory)", first, second)
	}
}
