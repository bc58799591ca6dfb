package wholeserver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// paragraph is a JSON document of one paragraph of text.
func paragraph(text string) map[string]any {
	return map[string]any{"object": "document", "data": map[string]any{}, "nodes": []any{
		map[string]any{"object": "block", "type": "paragraph", "nodes": []any{
			map[string]any{"object": "text", "leaves": []any{map[string]any{"object": "leaf", "text": text, "marks": []any{}}}},
		}},
	}}
}

// listItems returns the items of a list response, failing unless count (the
// number of items in it, list_count_test.go) says how many.
func listItems(t *testing.T, res *servertest.Response) []map[string]any {
	t.Helper()
	var list struct {
		Count int              `json:"count"`
		Items []map[string]any `json:"items"`
	}
	res.Expect(http.StatusOK).Decode(&list)
	if list.Count != len(list.Items) {
		t.Fatalf("count %d for %d items", list.Count, len(list.Items))
	}
	return list.Items
}

// itemIDs is the id of each item, or of the object its key names.
func itemIDs(items []map[string]any, key string) []string {
	var out []string
	for _, it := range items {
		v := it[key]
		if m, ok := v.(map[string]any); ok {
			v = m["id"]
		}
		out = append(out, v.(string))
	}
	return out
}

func TestReviewLifecycle(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	bob, dave, carol, reader := e.env.NewUser("Bob"), e.env.NewUser("Dave"), e.env.NewUser("Carol"), e.env.NewUser("Reader")
	bob.Join(e.org, store.RoleReview)
	dave.Join(e.org, store.RoleReview)
	carol.Join(e.org, store.RoleEdit)
	reader.Join(e.org, store.RoleRead)
	cr := e.open("Fix A")
	e.mustEdit(cr, e.pageA, "a1 fixed")
	reviews := e.crBase + "/" + cr + "/reviews"
	requested := e.crBase + "/" + cr + "/requested-reviewers"

	if got := listItems(t, e.alice.Do("GET", reviews, nil)); len(got) != 0 {
		t.Fatalf("reviews of a new change request: %v", got)
	}
	// The review role or higher reviews; editors and readers may not.
	reader.Do("POST", reviews, `{"status":"approved"}`).Expect(http.StatusForbidden).ErrorMessage()
	carol.Do("POST", reviews, `{"status":"approved"}`).Expect(http.StatusForbidden).ErrorMessage()
	// Bad input changes nothing.
	for _, body := range []string{`{}`, `{"status":"maybe"}`, `{"status":"approved","comment":"text"}`,
		`{"status":"approved","comment":{"nodes":[]}}`} {
		bob.Do("POST", reviews, body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	bob.Do("POST", e.crBase+"/nothing/reviews", `{"status":"approved"}`).Expect(http.StatusNotFound).ErrorMessage()
	if got := listItems(t, e.alice.Do("GET", reviews, nil)); len(got) != 0 {
		t.Fatalf("refused reviews were recorded: %v", got)
	}

	res := bob.Do("POST", reviews, map[string]any{"status": "changes-requested", "comment": paragraph("Please say more about A.")}).Expect(http.StatusCreated)
	first := res.JSON()
	firstID := first["id"].(string)
	rev := e.cr(cr)["revision"]
	if first["object"] != "change-request-review" || first["status"] != "changes-requested" || first["outdated"] != false ||
		first["revision"] != rev || first["reviewer"].(map[string]any)["id"] != bob.ID || first["requestedBy"] != nil {
		t.Fatalf("review: %v", first)
	}
	if c := first["comment"].(map[string]any); c["body"].(map[string]any)["markdown"] != "Please say more about A." {
		t.Errorf("review comment: %v", c)
	}
	if loc := res.Header.Get("Location"); loc == "" || !strings.HasSuffix(loc, "/reviews/"+firstID) {
		t.Errorf("Location: %q", loc)
	}
	got := e.alice.Do("GET", reviews+"/"+firstID, nil).Expect(http.StatusOK).JSON()
	if got["id"] != firstID || got["status"] != "changes-requested" {
		t.Errorf("get review: %v", got)
	}
	// The comment is on the change request, with the others.
	if comments := listItems(t, e.alice.Do("GET", e.crBase+"/"+cr+"/comments", nil)); len(comments) != 1 {
		t.Errorf("change request comments: %v", comments)
	}
	e.alice.Do("GET", reviews+"/nothing", nil).Expect(http.StatusNotFound).ErrorMessage()
	reader.Do("GET", reviews+"/"+firstID, nil).Expect(http.StatusOK)

	// Requested reviewers: editors ask members who may review.
	for _, body := range []string{`{}`, `{"users":[]}`, `{"users":["nobody"]}`, `{"users":["` + reader.ID + `"]}`,
		`{"users":["` + bob.ID + `"],"subject":null}`, `{"users":["` + bob.ID + `"],"description":"text"}`} {
		e.alice.Do("POST", requested, body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	reader.Do("POST", requested, `{"users":["`+bob.ID+`"]}`).Expect(http.StatusForbidden)
	if got := listItems(t, e.alice.Do("GET", requested, nil)); len(got) != 0 {
		t.Fatalf("refused requests were recorded: %v", got)
	}
	asked := e.alice.Do("POST", requested, map[string]any{"users": []string{bob.ID, dave.ID, bob.ID}, "subject": "Fix A, please review"}).
		Expect(http.StatusOK).JSON()["users"].([]any)
	if len(asked) != 2 {
		t.Fatalf("requests made: %v", asked)
	}
	if q := asked[0].(map[string]any); q["object"] != "change-request-requested-reviewer" || q["kind"] != "user" ||
		q["requestedBy"].(map[string]any)["id"] != e.alice.ID || q["revision"] != rev {
		t.Errorf("requested reviewer: %v", q)
	}
	if s := e.cr(cr)["subject"]; s != "Fix A, please review" {
		t.Errorf("subject set with the request: %v", s)
	}
	if got := itemIDs(listItems(t, e.alice.Do("GET", requested, nil)), "user"); len(got) != 2 {
		t.Errorf("requested reviewers: %v", got)
	}
	// Change requests awaiting a user's review.
	if got := itemIDs(listItems(t, e.alice.Do("GET", e.crBase+"?requestedReviewer="+dave.ID, nil)), "id"); len(got) != 1 || got[0] != cr {
		t.Errorf("change requests awaiting Dave: %v", got)
	}
	if got := listItems(t, e.alice.Do("GET", "/v1/orgs/"+e.org+"/change-requests?requestedReviewer="+reader.ID, nil)); len(got) != 0 {
		t.Errorf("change requests awaiting Reader: %v", got)
	}
	// Asking Bob again superseded his review.
	if got := e.alice.Do("GET", reviews+"/"+firstID, nil).Expect(http.StatusOK).JSON(); got["outdated"] != true {
		t.Errorf("a review after its reviewer was asked again: %v", got)
	}

	// Bob reviews again, as asked: his request is fulfilled. An empty
	// comment document is no comment.
	second := bob.Do("POST", reviews, `{"status":"approved","comment":{"object":"document","data":{},"nodes":[]}}`).Expect(http.StatusCreated).JSON()
	if second["outdated"] != false || second["requestedBy"].(map[string]any)["id"] != e.alice.ID || second["comment"] != nil {
		t.Errorf("second review: %v", second)
	}
	if got := itemIDs(listItems(t, e.alice.Do("GET", requested, nil)), "user"); len(got) != 1 || got[0] != dave.ID {
		t.Errorf("requested reviewers after Bob's review: %v", got)
	}
	all := listItems(t, e.alice.Do("GET", reviews, nil))
	if got := itemIDs(all, "id"); len(got) != 2 || got[0] != second["id"] || got[1] != firstID {
		t.Errorf("reviews, newest first: %v", got)
	}
	if got := itemIDs(listItems(t, e.alice.Do("GET", reviews+"?outdated=true", nil)), "id"); len(got) != 1 || got[0] != firstID {
		t.Errorf("outdated reviews: %v", got)
	}
	if got := itemIDs(listItems(t, e.alice.Do("GET", reviews+"?outdated=false", nil)), "id"); len(got) != 1 || got[0] != second["id"] {
		t.Errorf("current reviews: %v", got)
	}
	e.alice.Do("GET", reviews+"?outdated=maybe", nil).Expect(http.StatusBadRequest).ErrorMessage()
	var page struct {
		Next  struct{ Page string } `json:"next"`
		Items []map[string]any      `json:"items"`
	}
	e.alice.Do("GET", reviews+"?limit=1", nil).Expect(http.StatusOK).Decode(&page)
	if len(page.Items) != 1 || page.Items[0]["id"] != second["id"] || page.Next.Page == "" {
		t.Fatalf("a page of one: %+v", page)
	}
	if got := itemIDs(listItems(t, e.alice.Do("GET", reviews+"?limit=1&page="+page.Next.Page, nil)), "id"); len(got) != 1 || got[0] != firstID {
		t.Errorf("the next page: %v", got)
	}
	// A new revision of the change request outdates every review.
	e.mustEdit(cr, e.pageB, "b1 changed")
	if got := listItems(t, e.alice.Do("GET", reviews+"?outdated=false", nil)); len(got) != 0 {
		t.Errorf("current reviews after a new revision: %v", got)
	}

	// Withdrawing a request: 205, then 204; editors only.
	reader.Do("DELETE", requested+"/"+dave.ID, nil).Expect(http.StatusForbidden)
	e.alice.Do("DELETE", requested+"/"+dave.ID, nil).Expect(http.StatusResetContent)
	e.alice.Do("DELETE", requested+"/"+dave.ID, nil).Expect(http.StatusNoContent)
	if got := listItems(t, e.alice.Do("GET", requested, nil)); len(got) != 0 {
		t.Errorf("requested reviewers after withdrawal: %v", got)
	}
	e.alice.Do("GET", e.crBase+"/nothing/requested-reviewers", nil).Expect(http.StatusNotFound)

	// A merged change request is not reviewed any more.
	e.alice.Do("POST", e.crBase+"/"+cr+"/merge", nil).Expect(http.StatusOK)
	bob.Do("POST", reviews, `{"status":"approved"}`).Expect(http.StatusConflict).ErrorMessage()
	e.alice.Do("POST", requested, `{"users":["`+bob.ID+`"]}`).Expect(http.StatusConflict).ErrorMessage()
}

// Merge rules about reviews weigh the reviews of the change request's
// current revision; a refused merge says which rule failed.
func TestMergeRulesWithReviews(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	bob, dave := e.env.NewUser("Bob"), e.env.NewUser("Dave")
	bob.Join(e.org, store.RoleReview)
	dave.Join(e.org, store.RoleReview)
	cr := e.open("Reviewed change")
	e.mustEdit(cr, e.pageA, "a1 reviewed")
	reviews := e.crBase + "/" + cr + "/reviews"
	before := e.body("", e.pageA)
	merge := func(status int, rule string) {
		t.Helper()
		res := e.alice.Do("POST", e.crBase+"/"+cr+"/merge", nil).Expect(status)
		if status == http.StatusConflict {
			if msg := res.ErrorMessage(); !strings.Contains(msg, rule) {
				t.Errorf("refusal %q does not name %s", msg, rule)
			}
			if got := e.body("", e.pageA); got != before {
				t.Errorf("a refused merge changed the space: %q", got)
			}
		}
	}
	e.alice.Do("PATCH", e.spaceBase, `{"mergeRules":{"type":"rules","rules":[{"rule":"require_at_least_one_review"},{"rule":"require_all_reviews_approved"},`+
		`{"rule":"require_specific_reviewers","users":["`+bob.ID+`"]}]}}`).Expect(http.StatusOK)
	merge(http.StatusConflict, "require_at_least_one_review")
	dave.Do("POST", reviews, `{"status":"changes-requested"}`).Expect(http.StatusCreated)
	merge(http.StatusConflict, "require_all_reviews_approved")
	dave.Do("POST", reviews, `{"status":"approved"}`).Expect(http.StatusCreated)
	merge(http.StatusConflict, "require_specific_reviewers")
	bob.Do("POST", reviews, `{"status":"approved"}`).Expect(http.StatusCreated)
	// A new revision outdates the approvals.
	e.mustEdit(cr, e.pageA, "a1 reviewed again")
	merge(http.StatusConflict, "require_at_least_one_review")
	bob.Do("POST", reviews, `{"status":"approved"}`).Expect(http.StatusCreated)
	merge(http.StatusOK, "")
	if got := e.body("", e.pageA); got != "a1 reviewed again" {
		t.Errorf("merged content: %q", got)
	}

	// One of specific reviewers, inherited from the organization.
	cr2 := e.open("Another")
	e.mustEdit(cr2, e.pageB, "b1 again")
	e.alice.Do("PATCH", "/v1/orgs/"+e.org, `{"mergeRules":{"type":"rules","rules":[{"rule":"require_one_of_specific_reviewers","users":["`+bob.ID+`","`+dave.ID+`"]}]}}`).Expect(http.StatusOK)
	e.alice.Do("PATCH", e.spaceBase, `{"mergeRules":{"type":"inherit"}}`).Expect(http.StatusOK)
	msg := e.alice.Do("POST", e.crBase+"/"+cr2+"/merge", nil).Expect(http.StatusConflict).ErrorMessage()
	if !strings.Contains(msg, "require_one_of_specific_reviewers") {
		t.Errorf("refusal: %q", msg)
	}
	e.alice.Do("POST", e.crBase+"/"+cr2+"/reviews", `{"status":"approved"}`).Expect(http.StatusCreated) // not one of them
	e.alice.Do("POST", e.crBase+"/"+cr2+"/merge", nil).Expect(http.StatusConflict)
	dave.Do("POST", e.crBase+"/"+cr2+"/reviews", `{"status":"approved"}`).Expect(http.StatusCreated)
	e.alice.Do("POST", e.crBase+"/"+cr2+"/merge", nil).Expect(http.StatusOK)
}

// Reviews and requests go with their space when it is purged: the foreign
// keys to its revisions do not hold the purge back.
func TestReviewsPurgedWithTheirSpace(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	bob := e.env.NewUser("Bob")
	bob.Join(e.org, store.RoleReview)
	cr := e.open("Reviewed")
	e.mustEdit(cr, e.pageA, "a1 changed")
	bob.Do("POST", e.crBase+"/"+cr+"/reviews", map[string]any{"status": "approved", "comment": paragraph("Fine.")}).Expect(http.StatusCreated)
	e.alice.Do("POST", e.crBase+"/"+cr+"/requested-reviewers", `{"users":["`+bob.ID+`"]}`).Expect(http.StatusOK)
	e.alice.Do("DELETE", e.spaceBase, nil).Expect(http.StatusNoContent)
	ctx := context.Background()
	if n, err := store.PurgeSpacesDeletedBefore(ctx, e.env.DB, e.env.Clock.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("purge: %d, %v", n, err)
	}
	for _, table := range []string{"change_request_reviews", "change_request_requested_reviewers"} {
		var n int
		if err := e.env.DB.NewRaw("SELECT count(*) FROM "+table).Scan(ctx, &n); err != nil || n != 0 {
			t.Errorf("%s after the purge: %d rows, %v", table, n, err)
		}
	}
}

// The comment left with a review takes each form GitBook's Document has:
// markdown, a document (read back as sent), the empty {} (no comment), and
// this server's first form, a JSON document itself.
func TestReviewCommentForms(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	bob := e.env.NewUser("Bob")
	bob.Join(e.org, store.RoleReview)
	doc := paragraph("Looks right.")
	for _, tc := range []struct {
		name     string
		comment  any
		markdown string // "" for no comment
	}{
		{"markdown", map[string]any{"markdown": "**Fine.**"}, "**Fine.**"},
		{"document", map[string]any{"document": doc}, "Looks right."},
		{"a JSON document", doc, "Looks right."},
		{"the empty document", map[string]any{}, ""},
		{"a document with no text", map[string]any{"document": paragraph("  ")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr := e.open("Review " + tc.name)
			review := bob.Do("POST", e.crBase+"/"+cr+"/reviews", map[string]any{"status": "approved", "comment": tc.comment}).
				Expect(http.StatusCreated).JSON()
			comments := listItems(t, e.alice.Do("GET", e.crBase+"/"+cr+"/comments?format=document", nil))
			if tc.markdown == "" {
				if review["comment"] != nil || len(comments) != 0 {
					t.Fatalf("no comment expected: %v, %v", review["comment"], comments)
				}
				return
			}
			id, _ := review["comment"].(map[string]any)["id"].(string)
			got := e.alice.Do("GET", e.crBase+"/"+cr+"/comments/"+id, nil).Expect(http.StatusOK).JSON()
			if md := got["body"].(map[string]any)["markdown"]; md != tc.markdown || len(comments) != 1 {
				t.Errorf("the comment: %q (%d comments)", md, len(comments))
			}
			if tc.name == "document" && !sameJSON(t, comments[0]["body"].(map[string]any)["document"], doc) {
				t.Errorf("the document, read back: %v", comments[0]["body"])
			}
		})
	}
	// Bad input changes nothing.
	cr := e.open("Refused")
	for _, body := range []string{`{"status":"approved","comment":{"markdown":"x","document":{"object":"document","nodes":[]}}}`,
		`{"status":"approved","comment":{"markdown":12}}`, `{"status":"approved","comment":{"document":{"object":"page"}}}`} {
		bob.Do("POST", e.crBase+"/"+cr+"/reviews", body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	if got := listItems(t, e.alice.Do("GET", e.crBase+"/"+cr+"/reviews", nil)); len(got) != 0 {
		t.Errorf("reviews after refusals: %v", got)
	}
}
