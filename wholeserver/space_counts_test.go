package wholeserver_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

// TestSpaceCounts checks that the counts a space shows (open comments, open
// and draft change requests) stay exact under concurrent writes of every
// kind, and whatever writes the rows: they are carried on the space's row
// and kept by database triggers (migration 0025), so reading a space is one
// query.
func TestSpaceCounts(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Debug: true})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	newSpace := func(title string) string {
		return alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": title}).Expect(http.StatusCreated).String("id")
	}
	space, other := newSpace("Docs"), newSpace("Other")
	base := "/v1/spaces/" + space

	type counts struct{ comments, changeRequests, open, draft float64 }
	// read returns what GET space shows, and checks it agrees with a count
	// of the rows themselves.
	read := func(id string) counts {
		t.Helper()
		m := alice.Do("GET", "/v1/spaces/"+id, nil).Expect(http.StatusOK).JSON()
		got := counts{m["comments"].(float64), m["changeRequests"].(float64), m["changeRequestsOpen"].(float64), m["changeRequestsDraft"].(float64)}
		var want counts
		err := env.DB.QueryRowContext(context.Background(), `SELECT
			(SELECT count(*) FROM comments WHERE space_id = ? AND change_request_id IS NULL AND status = 'open'),
			(SELECT count(*) FROM change_requests WHERE space_id = ? AND status IN ('open', 'draft')),
			(SELECT count(*) FROM change_requests WHERE space_id = ? AND status = 'open'),
			(SELECT count(*) FROM change_requests WHERE space_id = ? AND status = 'draft')`, id, id, id, id).
			Scan(&want.comments, &want.changeRequests, &want.open, &want.draft)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("space %s shows %+v; its rows count %+v", id, got, want)
		}
		return got
	}
	if got := read(space); got != (counts{}) {
		t.Errorf("a new space: %+v", got)
	}
	// An organization admin's read of a space is the space's row alone. (The
	// caller's token costs a query more while the caller cache refills
	// after a write to members, e.g. last seen times: the steady state is
	// what is asserted.)
	queries := func() int {
		n := 0
		for range 50 {
			res := alice.Do("GET", base, nil).Expect(http.StatusOK)
			if n = atoi(t, res.Header.Get("X-SQL-Queries")); n <= 1 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		return n
	}
	if n := queries(); n != 1 {
		t.Errorf("GET space: %d SQL queries, want 1", n)
	}

	post := func(path string, body any) func() *servertest.Response {
		return func() *servertest.Response { return alice.Do("POST", path, body) }
	}
	comment := map[string]any{"body": map[string]any{"markdown": "Is this right?"}}

	// 10 change requests and 10 comments on the space, at once.
	var reqs []func() *servertest.Response
	for i := range 10 {
		reqs = append(reqs, post(base+"/change-requests", map[string]any{"subject": fmt.Sprint("CR ", i)}), post(base+"/comments", comment))
	}
	var crs, comments []string
	for _, res := range atOnce(reqs...) {
		switch res.Status {
		case http.StatusCreated:
			crs = append(crs, res.String("id"))
		case http.StatusOK:
			comments = append(comments, res.String("id"))
		default:
			t.Fatalf("%d: %s", res.Status, res.Body)
		}
	}
	if len(crs) != 10 || len(comments) != 10 {
		t.Fatalf("%d change requests, %d comments", len(crs), len(comments))
	}
	if got := read(space); got != (counts{comments: 10, changeRequests: 10, open: 10}) {
		t.Errorf("after creating: %+v", got)
	}

	// Then at once: comments on change requests (not the space's), drafts,
	// archives, merges, a draft reopened, resolves, deletes, and more of
	// each kind created.
	patch := func(path, body string) func() *servertest.Response {
		return func() *servertest.Response { return alice.Do("PATCH", path, body) }
	}
	put := func(path, body string) func() *servertest.Response {
		return func() *servertest.Response { return alice.Do("PUT", path, body) }
	}
	del := func(path string) func() *servertest.Response {
		return func() *servertest.Response { return alice.Do("DELETE", path, nil) }
	}
	cr := func(i int) string { return base + "/change-requests/" + crs[i] }
	reqs = []func() *servertest.Response{
		post(cr(0)+"/comments", comment), post(cr(1)+"/comments", comment),
		patch(cr(0), `{"status":"draft"}`), patch(cr(1), `{"status":"draft"}`), patch(cr(2), `{"status":"draft"}`),
		patch(cr(3), `{"status":"archived"}`), patch(cr(4), `{"status":"archived"}`),
		post(cr(5)+"/merge", nil), post(cr(6)+"/merge", nil),
		patch(cr(7), `{"subject":"Renamed"}`), // no status change: no count moves
		put(base+"/comments/"+comments[0], `{"resolved":true}`), put(base+"/comments/"+comments[1], `{"resolved":true}`),
		put(base+"/comments/"+comments[2], `{"resolved":true}`),
		del(base + "/comments/" + comments[3]), del(base + "/comments/" + comments[4]),
		put(base+"/comments/"+comments[5], `{"body":{"markdown":"Edited"}}`), // still open
		post(base+"/change-requests", map[string]any{"subject": "Late"}), post(base+"/comments", comment),
	}
	for _, res := range atOnce(reqs...) {
		if res.Status >= 300 {
			t.Fatalf("%d: %s", res.Status, res.Body)
		}
	}
	// Change requests: 11, of which 3 drafts, 2 archived, 2 merged: 4 open.
	// Comments on the space: 11, 3 resolved and 2 deleted: 6 open.
	if got := read(space); got != (counts{comments: 6, changeRequests: 7, open: 4, draft: 3}) {
		t.Errorf("after status changes and deletes: %+v", got)
	}
	if n := queries(); n != 1 {
		t.Errorf("GET space with change requests and comments: %d SQL queries, want 1", n)
	}

	// Back and forth: a draft reopened, a resolved comment reopened, a
	// resolved one deleted (no change), an open one deleted.
	for _, res := range atOnce(patch(cr(0), `{"status":"open"}`), put(base+"/comments/"+comments[0], `{"resolved":false}`),
		del(base+"/comments/"+comments[1]), del(base+"/comments/"+comments[6])) {
		if res.Status >= 300 {
			t.Fatalf("%d: %s", res.Status, res.Body)
		}
	}
	if got := read(space); got != (counts{comments: 6, changeRequests: 7, open: 5, draft: 2}) {
		t.Errorf("after reopening: %+v", got)
	}
	// Lists of spaces show the same counts.
	for _, s := range alice.Do("GET", "/v1/orgs/"+org+"/spaces", nil).Expect(http.StatusOK).JSON()["items"].([]any) {
		s := s.(map[string]any)
		if s["id"] == space && (s["comments"] != 6.0 || s["changeRequestsOpen"] != 5.0 || s["changeRequestsDraft"] != 2.0) {
			t.Errorf("listed: %v", s)
		}
	}

	// Whatever writes the rows keeps the counts: a change request and a
	// comment moved to another space, a change request deleted outright.
	exec := func(query string, args ...any) {
		t.Helper()
		if _, err := env.DB.ExecContext(context.Background(), query, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec("UPDATE change_requests SET space_id = ?, number = 100 WHERE id = ?", other, crs[0]) // open
	exec("UPDATE comments SET space_id = ? WHERE id = ?", other, comments[7])                 // open
	exec("DELETE FROM change_requests WHERE id = ?", crs[1])                                  // draft
	exec("UPDATE comments SET change_request_id = ? WHERE id = ?", crs[8], comments[8])       // open, onto a change request
	if got := read(space); got != (counts{comments: 4, changeRequests: 5, open: 4, draft: 1}) {
		t.Errorf("space after rows moved out: %+v", got)
	}
	if got := read(other); got != (counts{comments: 1, changeRequests: 1, open: 1}) {
		t.Errorf("space the rows moved to: %+v", got)
	}
	// Only the triggers write the counts: a whole-row write of a space keeps
	// them, and a duplicate starts at zero.
	exec("UPDATE spaces SET open_comments = 99, change_requests_open = 99, change_requests_draft = 99 WHERE id = ?", space)
	if got := read(space); got != (counts{comments: 4, changeRequests: 5, open: 4, draft: 1}) {
		t.Errorf("after a direct write: %+v", got)
	}
	dup := alice.Do("POST", base+"/duplicate", nil).Expect(http.StatusCreated).JSON()
	if dup["comments"] != 0.0 || dup["changeRequests"] != 0.0 || dup["changeRequestsOpen"] != 0.0 {
		t.Errorf("duplicate: %v", dup)
	}
	read(dup["id"].(string))

	// Removing a space for good (the purge job) cascades to its change
	// requests and comments, whose triggers find no space left to count on.
	exec("DELETE FROM spaces WHERE id IN (?, ?)", other, space)
	alice.Do("GET", base, nil).Expect(http.StatusNotFound)
}
