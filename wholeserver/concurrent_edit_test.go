package wholeserver_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

// Concurrent edits lose nothing: a content mutation given the revision it
// was based on (baseRevision) is refused with a 409 naming the current
// revision when the content has moved on, and of two edits from the same
// base exactly one is made.

const updatePageOnBase = `mutation($s: ID!, $cr: ID, $p: ID!, $in: UpdatePageInput!, $base: ID) {
  updatePage(spaceId: $s, changeRequestId: $cr, pageId: $p, input: $in, baseRevision: $base) { id } }`

// editOnBase sets page's markdown in the space's content (or change request
// cr, when not ""), based on revision base ("": none).
func (e *crEnv) editOnBase(cr, page, markdown, base string) *servertest.GraphQLResponse {
	e.t.Helper()
	vars := map[string]any{"s": e.space, "p": page, "in": map[string]any{"markdown": markdown}}
	if cr != "" {
		vars["cr"] = cr
	}
	if base != "" {
		vars["base"] = base
	}
	return e.alice.GraphQL(updatePageOnBase, vars)
}

// revision is the current revision of the space's content, or of change request cr.
func (e *crEnv) revision(cr string) string {
	e.t.Helper()
	if cr != "" {
		return e.alice.Do("GET", e.crBase+"/"+cr+"/content", nil).Expect(http.StatusOK).String("id")
	}
	return e.alice.Do("GET", e.spaceBase+"/content", nil).Expect(http.StatusOK).String("id")
}

// wantStale checks out is the 409 of a stale base naming current.
func wantStale(t *testing.T, out *servertest.GraphQLResponse, current string) {
	t.Helper()
	if len(out.Errors) == 0 {
		t.Fatalf("a stale base was accepted: %s", out.Data)
	}
	e := out.Errors[0]
	if e.Extensions["code"] != "CONFLICT" || e.Extensions["status"] != float64(http.StatusConflict) ||
		e.Extensions["currentRevision"] != current || !strings.Contains(e.Message, current) {
		t.Fatalf("stale base: %s %v, want a 409 naming %s", e.Message, e.Extensions, current)
	}
}

func TestBaseRevisionRefusesStaleEdits(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	for _, cr := range []string{"", e.open("Edits")} {
		r0 := e.revision(cr)
		if out := e.editOnBase(cr, e.pageA, "first", r0); len(out.Errors) > 0 {
			t.Fatalf("an edit on the current revision: %+v", out.Errors)
		}
		r1 := e.revision(cr)
		// Another editor, still on r0, would undo "first": refused, naming r1.
		wantStale(t, e.editOnBase(cr, e.pageA, "second, over a stale read", r0), r1)
		if got := e.body(cr, e.pageA); got != "first" || e.revision(cr) != r1 {
			t.Fatalf("a refused edit changed the content: %q", got)
		}
		// Every content mutation takes it.
		for name, q := range map[string]string{
			"createPage": `mutation($s: ID!, $cr: ID, $b: ID) { createPage(spaceId: $s, changeRequestId: $cr, input: {title: "New"}, baseRevision: $b) { id } }`,
			"movePage":   `mutation($s: ID!, $cr: ID, $p: ID!, $b: ID) { movePage(spaceId: $s, changeRequestId: $cr, pageId: $p, input: {}, baseRevision: $b) { id } }`,
			"deletePage": `mutation($s: ID!, $cr: ID, $p: ID!, $b: ID) { deletePage(spaceId: $s, changeRequestId: $cr, pageId: $p, baseRevision: $b) }`,
			"deleteFile": `mutation($s: ID!, $cr: ID, $p: ID!, $b: ID) { deleteFile(spaceId: $s, changeRequestId: $cr, fileId: $p, baseRevision: $b) }`,
		} {
			vars := map[string]any{"s": e.space, "p": e.pageB, "b": r0}
			if cr != "" {
				vars["cr"] = cr
			}
			t.Run(name, func(t *testing.T) { wantStale(t, e.alice.GraphQL(q, vars), r1) })
		}
		// The current one is accepted; none at all, as before, too.
		if out := e.editOnBase(cr, e.pageA, "third", r1); len(out.Errors) > 0 {
			t.Fatalf("an edit on the current revision: %+v", out.Errors)
		}
		if out := e.editOnBase(cr, e.pageA, "fourth", ""); len(out.Errors) > 0 {
			t.Fatalf("an edit with no base: %+v", out.Errors)
		}
		if got := e.body(cr, e.pageA); got != "fourth" {
			t.Fatalf("body = %q", got)
		}
	}
}

// Two editors on the same base at once: one edit is made, the other gets
// the 409, whatever the timing (the check runs under the row lock).
func TestConcurrentEditsOnTheSameBase(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	cr := e.open("Race")
	for round := range 4 {
		on := []string{"", cr}[round%2]
		base := e.revision(on)
		outs := make([]*servertest.GraphQLResponse, 2)
		var wg sync.WaitGroup
		for i := range outs {
			wg.Go(func() { outs[i] = e.editOnBase(on, e.pageA, []string{"left", "right"}[i], base) })
		}
		wg.Wait()
		var won, lost []int
		for i, out := range outs {
			if len(out.Errors) == 0 {
				won = append(won, i)
			} else {
				lost = append(lost, i)
			}
		}
		if len(won) != 1 || len(lost) != 1 {
			t.Fatalf("round %d: %d edits made, %d refused, want 1 and 1: %+v / %+v", round, len(won), len(lost), outs[0].Errors, outs[1].Errors)
		}
		current := e.revision(on)
		wantStale(t, outs[lost[0]], current)
		if got, want := e.body(on, e.pageA), []string{"left", "right"}[won[0]]; got != want {
			t.Fatalf("round %d: body %q, want the winner's %q", round, got, want)
		}
	}
}

// Merging and updating a change request take the change request's revision
// the caller saw; the REST routes of content take it as well (a body member,
// or the query parameter of the merge routes).
func TestBaseRevisionOfMergesAndRESTContentRoutes(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	cr := e.open("Reviewed")
	e.mustEdit(cr, e.pageA, "a1\na2\na3\na4\nreviewed")
	reviewed := e.revision(cr)
	e.mustEdit(cr, e.pageA, "a1\na2\na3\na4\nnot reviewed")
	current := e.revision(cr)

	merge := `mutation($s: ID!, $cr: ID!, $b: ID) { mergeChangeRequest(spaceId: $s, changeRequestId: $cr, baseRevision: $b) { result } }`
	wantStale(t, e.alice.GraphQL(merge, map[string]any{"s": e.space, "cr": cr, "b": reviewed}), current)
	res := e.alice.Do("POST", e.crBase+"/"+cr+"/merge?baseRevision="+reviewed, nil).Expect(http.StatusConflict)
	if msg := res.ErrorMessage(); !strings.Contains(msg, current) {
		t.Errorf("REST merge on a stale base: %q does not name %s", msg, current)
	}
	if e.cr(cr)["status"] != "open" {
		t.Fatal("a refused merge merged")
	}

	e.mustEdit("", e.pageB, "b1\nb2 on main")
	update := `mutation($s: ID!, $cr: ID!, $b: ID) { updateChangeRequestFromMain(spaceId: $s, changeRequestId: $cr, baseRevision: $b) { result } }`
	wantStale(t, e.alice.GraphQL(update, map[string]any{"s": e.space, "cr": cr, "b": reviewed}), current)
	e.alice.Do("POST", e.crBase+"/"+cr+"/update?baseRevision="+current, nil).Expect(http.StatusOK)
	updated := e.revision(cr)
	e.alice.Do("POST", e.crBase+"/"+cr+"/merge?baseRevision="+updated, nil).Expect(http.StatusOK)

	main := e.revision("")
	msg := e.alice.Do("POST", e.spaceBase+"/content/template", map[string]any{"id": "product-docs", "baseRevision": reviewed}).
		Expect(http.StatusConflict).ErrorMessage()
	if !strings.Contains(msg, main) {
		t.Errorf("template on a stale base: %q does not name %s", msg, main)
	}
	e.alice.Do("POST", e.spaceBase+"/content/template", map[string]any{"id": "product-docs", "baseRevision": main}).Expect(http.StatusNoContent)
}
