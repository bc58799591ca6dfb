package wholeserver_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// contentEnv is an organization with helpers to make and read its content.
type contentEnv struct {
	t     *testing.T
	alice *servertest.User
	org   string
}

func (e contentEnv) collection(title string, parent string) string {
	body := map[string]any{"title": title}
	if parent != "" {
		body["parent"] = parent
	}
	return e.alice.Do("POST", "/v1/orgs/"+e.org+"/collections", body).Expect(http.StatusCreated).String("id")
}

func (e contentEnv) space(title string, parent string) string {
	body := map[string]any{"title": title}
	if parent != "" {
		body["parent"] = parent
	}
	return e.alice.Do("POST", "/v1/orgs/"+e.org+"/spaces", body).Expect(http.StatusCreated).String("id")
}

// spacesIn lists the titles of a collection's spaces, in order.
func (e contentEnv) spacesIn(collection string) string {
	e.t.Helper()
	var page struct{ Items []struct{ Title string } }
	e.alice.Do("GET", "/v1/collections/"+collection+"/spaces", nil).Expect(http.StatusOK).Decode(&page)
	var titles []string
	for _, s := range page.Items {
		titles = append(titles, s.Title)
	}
	return strings.Join(titles, ",")
}

func newContentEnv(t *testing.T) (*servertest.Env, contentEnv) {
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	return env, contentEnv{t: t, alice: alice, org: alice.NewOrg("Acme")}
}

func TestCollectionsCreateReadUpdate(t *testing.T) {
	t.Parallel()
	env, c := newContentEnv(t)
	top := c.alice.Do("POST", "/v1/orgs/"+c.org+"/collections", `{"title":"Guides"}`).Expect(http.StatusCreated).JSON()
	id := top["id"].(string)
	perms, _ := top["permissions"].(map[string]any)
	urls, _ := top["urls"].(map[string]any)
	if top["object"] != "collection" || top["organization"] != c.org || top["defaultLevel"] != "inherit" || top["parent"] != nil ||
		perms["admin"] != true || perms["create"] != true || urls["location"] == nil || urls["app"] == nil {
		t.Errorf("collection: %v", top)
	}
	nested := c.collection("Deep", id)
	if got := c.alice.Do("GET", "/v1/collections/"+nested, nil).Expect(http.StatusOK).JSON()["parent"]; got != id {
		t.Errorf("nested parent: %v", got)
	}
	count := func(query string) any {
		return c.alice.Do("GET", "/v1/orgs/"+c.org+"/collections"+query, nil).Expect(http.StatusOK).JSON()["count"]
	}
	if all, top := count(""), count("?nested=false"); all != 2.0 || top != 1.0 {
		t.Errorf("listed %v collections, %v at the root", all, top)
	}

	for _, body := range []string{`{}`, `{"title":"` + strings.Repeat("x", 51) + `"}`, `{"title":"X","parent":"nothing"}`, `{"title":3}`} {
		c.alice.Do("POST", "/v1/orgs/"+c.org+"/collections", body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	reader := env.NewUser("Reader")
	reader.Join(c.org, store.RoleRead)
	reader.Do("POST", "/v1/orgs/"+c.org+"/collections", `{"title":"Mine"}`).Expect(http.StatusForbidden).ErrorMessage()
	reader.Do("PATCH", "/v1/collections/"+id, `{"title":"Mine"}`).Expect(http.StatusForbidden).ErrorMessage()
	if got := reader.Do("GET", "/v1/collections/"+id, nil).Expect(http.StatusOK).JSON()["permissions"].(map[string]any); got["admin"] != false || got["view"] != true {
		t.Errorf("reader's permissions: %v", got)
	}
	if n := count(""); n != 2.0 {
		t.Fatalf("rejected creations created something: %v", n)
	}

	for _, body := range []string{`{"title":"` + strings.Repeat("x", 51) + `"}`, `{"description":"` + strings.Repeat("x", 101) + `"}`,
		`{"defaultLevel":"owner"}`, `{"title":null}`} {
		c.alice.Do("PATCH", "/v1/collections/"+id, body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	got := c.alice.Do("PATCH", "/v1/collections/"+id, `{"title":"Handbooks","description":"How we work","defaultLevel":"read"}`).Expect(http.StatusOK).JSON()
	if got["title"] != "Handbooks" || got["description"] != "How we work" || got["defaultLevel"] != "read" {
		t.Errorf("after update: %v", got)
	}
	got = c.alice.Do("PATCH", "/v1/collections/"+id, `{"description":null,"defaultLevel":null}`).Expect(http.StatusOK).JSON()
	if _, has := got["description"]; has || got["defaultLevel"] != nil {
		t.Errorf("after clearing: %v", got)
	}
	// Cleared levels stay cleared (NULL is "guest", not the column default).
	if got := c.alice.Do("GET", "/v1/collections/"+id, nil).Expect(http.StatusOK).JSON(); got["defaultLevel"] != nil {
		t.Errorf("collection level after clearing, read again: %v", got["defaultLevel"])
	}
	space := c.space("Docs", "")
	c.alice.Do("PATCH", "/v1/spaces/"+space, `{"defaultLevel":null}`).Expect(http.StatusOK)
	if got := c.alice.Do("GET", "/v1/spaces/"+space, nil).Expect(http.StatusOK).JSON(); got["defaultLevel"] != nil {
		t.Errorf("space level after clearing, read again: %v", got["defaultLevel"])
	}
	c.alice.Do("GET", "/v1/collections/nothing", nil).Expect(http.StatusNotFound).ErrorMessage()
}

func TestMoveSpacesAndCollections(t *testing.T) {
	t.Parallel()
	_, c := newContentEnv(t)
	a := c.collection("A", "")
	b := c.collection("B", a)
	s1, s2, s3 := c.space("s1", a), c.space("s2", a), c.space("s3", "")
	if got := c.spacesIn(a); got != "s1,s2" {
		t.Fatalf("spaces of A: %q", got)
	}
	if got := c.alice.Do("GET", "/v1/spaces/"+s1, nil).Expect(http.StatusOK).JSON()["parent"]; got != a {
		t.Errorf("s1's parent: %v", got)
	}
	move := func(kind, id, body string, status int) {
		t.Helper()
		res := c.alice.Do("POST", "/v1/"+kind+"/"+id+"/move", body).Expect(status)
		if status >= 400 {
			res.ErrorMessage()
		}
	}
	// s3 joins A before s1; then s2 moves to the front.
	move("spaces", s3, `{"parent":"`+a+`","position":{"before":{"type":"space","space":"`+s1+`"}}}`, http.StatusOK)
	move("spaces", s2, `{"position":{"before":{"type":"space","space":"`+s3+`"}}}`, http.StatusOK)
	if got := c.spacesIn(a); got != "s2,s3,s1" {
		t.Errorf("after moves: %q", got)
	}
	// Errors change nothing.
	for _, bad := range []struct {
		kind, id, body string
		status         int
	}{
		{"spaces", s1, `{}`, http.StatusBadRequest},
		{"spaces", s1, `{"parent":"nothing"}`, http.StatusBadRequest},
		{"spaces", s1, `{"position":{"before":{"type":"space","space":"nothing"}}}`, http.StatusBadRequest},
		{"spaces", s1, `{"position":{"before":{"type":"space"}}}`, http.StatusBadRequest},
		{"spaces", s1, `{"position":{"before":{"type":"space","space":"` + s2 + `"},"after":{"type":"space","space":"` + s3 + `"}}}`, http.StatusBadRequest},
		{"spaces", s1, `{"position":{"before":{"type":"folder","space":"` + s2 + `"}}}`, http.StatusBadRequest},
		{"spaces", s1, `{"parent":"` + a + `"}`, http.StatusConflict}, // already last in A
		{"spaces", s2, `{"position":{"before":{"type":"space","space":"` + s3 + `"}}}`, http.StatusConflict},
		{"collections", a, `{"parent":"` + b + `"}`, http.StatusBadRequest}, // into its own descendant
		{"collections", a, `{"parent":"` + a + `"}`, http.StatusBadRequest}, // into itself
		{"collections", b, `{"position":{"after":{"type":"space","space":"` + s3 + `"}}}`, http.StatusOK},
		{"collections", b, `{"position":{"after":{"type":"space","space":"` + s3 + `"}}}`, http.StatusConflict},
	} {
		move(bad.kind, bad.id, bad.body, bad.status)
	}
	if got := c.spacesIn(a); got != "s2,s3,s1" {
		t.Errorf("after rejected moves: %q", got)
	}
	// Out to the root.
	move("spaces", s1, `{"parent":null}`, http.StatusOK)
	if got := c.spacesIn(a); got != "s2,s3" {
		t.Errorf("after moving s1 out: %q", got)
	}
	if _, has := c.alice.Do("GET", "/v1/spaces/"+s1, nil).Expect(http.StatusOK).JSON()["parent"]; has {
		t.Error("s1 still has a parent")
	}
}

// Deleting a collection puts its content where it was.
func TestDeleteCollectionKeepsItsContent(t *testing.T) {
	t.Parallel()
	_, c := newContentEnv(t)
	a := c.collection("A", "")
	c.space("first", a)
	b := c.collection("B", a)
	c.space("inner1", b)
	c.space("inner2", b)
	c.space("last", a)
	c.alice.Do("DELETE", "/v1/collections/"+b, nil).Expect(http.StatusResetContent)
	c.alice.Do("DELETE", "/v1/collections/"+b, nil).Expect(http.StatusNoContent)
	c.alice.Do("GET", "/v1/collections/"+b, nil).Expect(http.StatusNotFound)
	if got := c.spacesIn(a); got != "first,inner1,inner2,last" {
		t.Errorf("spaces of A after deleting B: %q", got)
	}
}

func TestTransferContent(t *testing.T) {
	t.Parallel()
	env, c := newContentEnv(t)
	other := c.alice.NewOrg("Other")
	a := c.collection("A", "")
	b := c.collection("B", a)
	inB := c.space("in B", b)
	loose := c.space("loose", "")
	published := c.space("published", "")
	c.alice.Do("POST", "/v1/orgs/"+c.org+"/sites", map[string]any{"title": "Docs", "spaces": []string{published}}).Expect(http.StatusCreated)

	// Into an organization the caller does not administer: not found, or forbidden.
	stranger := env.NewUser("Stranger").NewOrg("Elsewhere")
	c.alice.Do("POST", "/v1/spaces/"+loose+"/transfer", `{"organization":"`+stranger+`"}`).Expect(http.StatusNotFound).ErrorMessage()
	c.alice.Do("POST", "/v1/spaces/"+loose+"/transfer", `{"organization":"`+c.org+`"}`).Expect(http.StatusConflict).ErrorMessage()
	c.alice.Do("POST", "/v1/spaces/"+loose+"/transfer", `{}`).Expect(http.StatusBadRequest).ErrorMessage()
	c.alice.Do("POST", "/v1/spaces/"+published+"/transfer", `{"organization":"`+other+`"}`).Expect(http.StatusPreconditionFailed).ErrorMessage()
	if got := c.alice.Do("GET", "/v1/spaces/"+published, nil).Expect(http.StatusOK).JSON()["organization"]; got != c.org {
		t.Fatalf("a refused transfer moved the space to %v", got)
	}

	// An admin grant on the item is not enough: it leaves its organization
	// only by the hand of an admin of that organization, whatever the
	// caller holds elsewhere.
	mallory := env.NewUser("Mallory")
	mallory.Join(c.org, store.RoleEdit)
	malloryOrg := mallory.NewOrg("Mallory's")
	c.alice.Do("POST", "/v1/spaces/"+loose+"/permissions", `{"role":"admin","users":["`+mallory.ID+`"]}`).Expect(http.StatusNoContent)
	c.alice.Do("POST", "/v1/collections/"+a+"/permissions", `{"role":"admin","users":["`+mallory.ID+`"]}`).Expect(http.StatusNoContent)
	mallory.Do("POST", "/v1/spaces/"+loose+"/transfer", `{"organization":"`+malloryOrg+`"}`).Expect(http.StatusForbidden).ErrorMessage()
	mallory.Do("POST", "/v1/collections/"+a+"/transfer", `{"organization":"`+malloryOrg+`"}`).Expect(http.StatusForbidden).ErrorMessage()
	if got := c.alice.Do("GET", "/v1/spaces/"+loose, nil).Expect(http.StatusOK).JSON()["organization"]; got != c.org {
		t.Fatalf("a refused transfer moved the space to %v", got)
	}

	c.alice.Do("POST", "/v1/spaces/"+loose+"/transfer", `{"organization":"`+other+`"}`).Expect(http.StatusOK)
	got := c.alice.Do("POST", "/v1/collections/"+a+"/transfer", `{"organization":"`+other+`"}`).Expect(http.StatusOK).JSON()
	if got["organization"] != other || got["parent"] != nil {
		t.Errorf("transferred collection: %v", got)
	}
	for _, id := range []string{inB, loose} {
		if org := c.alice.Do("GET", "/v1/spaces/"+id, nil).Expect(http.StatusOK).JSON()["organization"]; org != other {
			t.Errorf("space %s is in %v", id, org)
		}
	}
	if org := c.alice.Do("GET", "/v1/collections/"+b, nil).Expect(http.StatusOK).JSON()["organization"]; org != other {
		t.Errorf("nested collection is in %v", org)
	}
	titles := func(org string) string {
		var page struct{ Items []struct{ Title string } }
		c.alice.Do("GET", "/v1/orgs/"+org+"/spaces", nil).Expect(http.StatusOK).Decode(&page)
		var out []string
		for _, s := range page.Items {
			out = append(out, s.Title)
		}
		slices.Sort(out) // created in the same instant: their order is their ids'
		return strings.Join(out, ",")
	}
	if got := titles(c.org); got != "published" {
		t.Errorf("spaces left behind: %s", got)
	}
	if got := titles(other); got != "in B,loose" {
		t.Errorf("spaces received: %s", got)
	}
}
