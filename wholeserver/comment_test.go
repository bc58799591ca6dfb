package wholeserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/docsapi/docsapi/store"
)

// A body may be a document (GitBook's Document: markdown, or a JSON
// document): kept as given, answered as given in the document format, as
// its text in markdown; comments and replies alike, posted and edited. The
// empty document is refused, and so is a body with both.
func TestCommentDocumentBodies(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	base := e.spaceBase + "/comments"
	hint := map[string]any{"object": "document", "data": map[string]any{}, "nodes": []any{
		map[string]any{"object": "block", "type": "hint", "data": map[string]any{"style": "warning"}, "nodes": []any{
			map[string]any{"object": "block", "type": "paragraph", "nodes": []any{
				map[string]any{"object": "text", "leaves": []any{map[string]any{"object": "leaf", "text": "Mind the gap", "marks": []any{}}}}}}}},
		map[string]any{"object": "block", "type": "divider", "isVoid": true, "data": map[string]any{}, "nodes": []any{}},
	}}
	read := func(path, format string) map[string]any {
		t.Helper()
		return e.alice.Do("GET", path+"?format="+format, nil).Expect(http.StatusOK).JSON()["body"].(map[string]any)
	}
	same := func(what string, got, want any) {
		t.Helper()
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("%s:\n%s\nwant\n%s", what, g, w)
		}
	}

	id := e.alice.Do("POST", base, map[string]any{"body": map[string]any{"document": hint}}).Expect(http.StatusOK).String("id")
	same("the comment, as a document", read(base+"/"+id, "document")["document"], hint)
	if md := read(base+"/"+id, "markdown")["markdown"]; md != "Mind the gap" {
		t.Errorf("the comment, as markdown: %q", md)
	}
	reply := e.alice.Do("POST", base+"/"+id+"/replies", map[string]any{"body": map[string]any{"document": hint}}).Expect(http.StatusOK).String("id")
	same("the reply, as a document", read(base+"/"+id+"/replies/"+reply, "document")["document"], hint)

	// Edited to markdown, the document is derived from it again; and back.
	e.alice.Do("PUT", base+"/"+id, `{"body":{"markdown":"Plain **words**"}}`).Expect(http.StatusOK)
	if doc := read(base+"/"+id, "document")["document"].(map[string]any); doc["nodes"].([]any)[0].(map[string]any)["type"] != "paragraph" {
		t.Errorf("a markdown body as a document: %v", doc)
	}
	e.alice.Do("PUT", base+"/"+id+"/replies/"+reply, map[string]any{"body": map[string]any{"markdown": "Later"}}).Expect(http.StatusOK)
	if md := read(base+"/"+id+"/replies/"+reply, "markdown")["markdown"]; md != "Later" {
		t.Errorf("the reply edited to markdown: %q", md)
	}
	e.alice.Do("PUT", base+"/"+id, map[string]any{"body": map[string]any{"document": hint}}).Expect(http.StatusOK)
	same("the comment edited to a document", read(base+"/"+id, "document")["document"], hint)

	// Refused, changing nothing.
	for _, tc := range []struct{ body, want string }{
		{`{"body":{}}`, "body: is empty: a comment says something"},
		{`{"body":{"markdown":"x","document":{"object":"document","data":{},"nodes":[]}}}`, "body"},
		{`{"body":{"document":{"object":"document","data":{},"nodes":[]}}}`, "body.document: has no blocks"},
		{`{"body":{"document":{"object":"page","nodes":[]}}}`, "body.document"},
	} {
		for _, path := range []string{base, base + "/" + id + "/replies"} {
			if msg := e.alice.Do("POST", path, tc.body).Expect(http.StatusBadRequest).ErrorMessage(); !strings.HasPrefix(msg, tc.want) {
				t.Errorf("POST %s %s: %q", path, tc.body, msg)
			}
		}
		e.alice.Do("PUT", base+"/"+id, tc.body).Expect(http.StatusBadRequest)
	}
	same("the comment after refused edits", read(base+"/"+id, "document")["document"], hint)
}

func TestComments(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	base := e.spaceBase + "/comments"
	bob, reader := e.env.NewUser("Bob"), e.env.NewUser("Reader")
	bob.Join(e.org, store.RoleComment)
	reader.Join(e.org, store.RoleRead)
	editor := e.env.NewUser("Editor")
	editor.Join(e.org, store.RoleEdit)

	c := bob.Do("POST", base, map[string]any{"body": map[string]any{"markdown": "Is **this** right?"}, "page": e.pageA}).Expect(http.StatusOK).JSON()
	id := c["id"].(string)
	perms := c["permissions"].(map[string]any)
	if c["object"] != "comment" || c["status"] != "open" || c["body"].(map[string]any)["markdown"] != "Is **this** right?" ||
		c["target"].(map[string]any)["page"].(map[string]any)["id"] != e.pageA || perms["edit"] != true || perms["delete"] != true || c["replies"] != 0.0 {
		t.Fatalf("comment: %v", c)
	}
	for _, body := range []string{`{}`, `{"body":{"markdown":""}}`, `{"body":{"markdown":"x"},"page":"nothing"}`, `{"body":"text"}`} {
		bob.Do("POST", base, body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	reader.Do("POST", base, `{"body":{"markdown":"x"}}`).Expect(http.StatusForbidden)
	if got := e.alice.Do("GET", base+"/"+id, nil).Expect(http.StatusOK).JSON()["permissions"].(map[string]any); got["edit"] != false || got["delete"] != true {
		t.Errorf("an admin's permissions on another's comment: %v", got)
	}
	if n := e.alice.Do("GET", e.spaceBase, nil).Expect(http.StatusOK).JSON()["comments"]; n != 1.0 {
		t.Errorf("open comments: %v", n)
	}

	// Lists: status (default all), page, authors, format.
	other := e.alice.Do("POST", base, `{"body":{"markdown":"Another"}}`).Expect(http.StatusOK).String("id")
	count := func(query string) any {
		return e.alice.Do("GET", base+query, nil).Expect(http.StatusOK).JSON()["count"]
	}
	for q, want := range map[string]float64{"": 2, "?status=open": 2, "?status=resolved": 0, "?targetPage=" + e.pageA: 1,
		"?authors=" + bob.ID: 1, "?authors=" + bob.ID + "&authors=" + e.alice.ID: 2} {
		if got := count(q); got != want {
			t.Errorf("comments%s: %v, want %v", q, got, want)
		}
	}
	e.alice.Do("GET", base+"?status=closed", nil).Expect(http.StatusBadRequest)
	doc := e.alice.Do("GET", base+"/"+id+"?format=document", nil).Expect(http.StatusOK).JSON()["body"].(map[string]any)
	if _, has := doc["markdown"]; has || doc["document"].(map[string]any)["object"] != "document" {
		t.Errorf("document format: %v", doc)
	}

	// Resolving: the author or an editor; others may not.
	reader.Do("PUT", base+"/"+id, `{"resolved":true}`).Expect(http.StatusForbidden)
	e.alice.Do("PUT", base+"/"+other, `{"resolved":true}`).Expect(http.StatusOK)
	bob.Do("PUT", base+"/"+other, `{"resolved":false}`).Expect(http.StatusForbidden)
	res := editor.Do("PUT", base+"/"+id, `{"resolved":true}`).Expect(http.StatusOK).JSON()
	if res["status"] != "resolved" || res["resolvedBy"].(map[string]any)["id"] != editor.ID || res["resolvedAt"] == nil {
		t.Errorf("resolved: %v", res)
	}
	if n := e.alice.Do("GET", e.spaceBase, nil).Expect(http.StatusOK).JSON()["comments"]; n != 0.0 {
		t.Errorf("open comments after resolving both: %v", n)
	}
	bob.Do("PUT", base+"/"+id, `{"resolved":false}`).Expect(http.StatusOK)
	// Editing: the author only.
	e.alice.Do("PUT", base+"/"+id, `{"body":{"markdown":"Hijacked"}}`).Expect(http.StatusForbidden)
	edited := bob.Do("PUT", base+"/"+id, `{"body":{"markdown":"Is this right?"}}`).Expect(http.StatusOK).JSON()
	if edited["editedAt"] == nil || edited["body"].(map[string]any)["markdown"] != "Is this right?" {
		t.Errorf("edited: %v", edited)
	}
	// Reactions, by user and emoji.
	bob.Do("PUT", base+"/"+id, `{"addedReactions":["+1","tada"]}`).Expect(http.StatusOK)
	reacted := e.alice.Do("PUT", base+"/"+id, `{"addedReactions":["+1"]}`).Expect(http.StatusOK).JSON()["reactions"].([]any)
	if len(reacted) != 2 || reacted[0].(map[string]any)["emoji"] != "+1" || reacted[0].(map[string]any)["count"] != 2.0 {
		t.Errorf("reactions: %v", reacted)
	}
	reacted = bob.Do("PUT", base+"/"+id, `{"removedReactions":["tada"]}`).Expect(http.StatusOK).JSON()["reactions"].([]any)
	if len(reacted) != 1 {
		t.Errorf("after removing: %v", reacted)
	}

	// Replies, with true counts under parallel posts and deletes.
	var wg sync.WaitGroup
	replies := make([]string, 10)
	for i := range replies {
		wg.Go(func() {
			u := bob
			if i%2 == 0 {
				u = e.alice
			}
			replies[i] = u.Do("POST", base+"/"+id+"/replies", map[string]any{"body": map[string]any{"markdown": fmt.Sprint("Reply ", i)}}).
				Expect(http.StatusOK).String("id")
		})
	}
	wg.Wait()
	for i := range 4 {
		wg.Go(func() { e.alice.Do("DELETE", base+"/"+id+"/replies/"+replies[i], nil).Expect(http.StatusNoContent) })
	}
	wg.Wait()
	got := e.alice.Do("GET", base+"/"+id, nil).Expect(http.StatusOK).JSON()
	repliers := map[string]float64{}
	for _, r := range got["repliers"].([]any) {
		m := r.(map[string]any)
		repliers[m["user"].(map[string]any)["id"].(string)] = m["count"].(float64)
	}
	if got["replies"] != 6.0 || repliers[bob.ID] != 3 || repliers[e.alice.ID] != 3 {
		t.Errorf("replies %v, repliers %v", got["replies"], repliers)
	}
	if n := e.alice.Do("GET", base+"/"+id+"/replies", nil).Expect(http.StatusOK).JSON()["count"]; n != 6.0 {
		t.Errorf("listed replies: %v", n)
	}
	bobsReply := replies[9]
	e.alice.Do("PUT", base+"/"+id+"/replies/"+bobsReply, `{"body":{"markdown":"Hijacked"}}`).Expect(http.StatusForbidden)
	if got := bob.Do("PUT", base+"/"+id+"/replies/"+bobsReply, `{"body":{"markdown":"Edited"}}`).Expect(http.StatusOK).JSON(); got["object"] != "comment-reply" || got["editedAt"] == nil {
		t.Errorf("edited reply: %v", got)
	}
	reader.Do("DELETE", base+"/"+id+"/replies/"+bobsReply, nil).Expect(http.StatusForbidden)
	e.alice.Do("GET", base+"/"+id+"/replies/nothing", nil).Expect(http.StatusNotFound)

	// Change request comments are their own thread.
	cr := e.open("Discuss")
	crBase := e.crBase + "/" + cr + "/comments"
	bob.Do("POST", crBase, `{"body":{"markdown":"On the change"}}`).Expect(http.StatusOK)
	if n := count(""); n != 2.0 {
		t.Errorf("the space's list holds change request comments: %v", n)
	}
	if c := e.cr(cr); c["comments"] != 1.0 {
		t.Errorf("change request comments: %v", c["comments"])
	}

	// Deleting: the author or an admin; 204 also when already gone.
	reader.Do("DELETE", base+"/"+id, nil).Expect(http.StatusForbidden)
	e.alice.Do("DELETE", base+"/"+id, nil).Expect(http.StatusNoContent)
	e.alice.Do("DELETE", base+"/"+id, nil).Expect(http.StatusNoContent)
	e.alice.Do("GET", base+"/"+id, nil).Expect(http.StatusNotFound)
}
