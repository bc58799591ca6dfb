package wholeserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

func TestAuthentication(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")

	for _, tc := range []struct {
		name, header string
	}{
		{"no header", ""},
		{"unknown token", "Bearer not-a-token"},
		{"wrong scheme", "Basic " + alice.Token},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", env.URL+"/v1/user", nil)
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401", resp.StatusCode)
			}
		})
	}
	env.Do("GET", "/v1/user", "", nil).Expect(http.StatusUnauthorized).ErrorMessage()

	me := alice.Do("GET", "/v1/user", nil).Expect(http.StatusOK).JSON()
	if me["id"] != alice.ID || me["object"] != "user" || me["email"] != alice.Email || me["displayName"] != "Alice" {
		t.Fatalf("GET /v1/user = %v", me)
	}
	if loc := me["urls"].(map[string]any)["location"]; loc != env.URL+"/v1/users/"+alice.ID {
		t.Fatalf("urls.location = %v", loc)
	}
}

func TestCreateAndReadOrganization(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")

	res := alice.Do("POST", "/v1/orgs", map[string]any{"title": "Acme", "emailDomains": []string{"Acme.com"}, "useCase": "docsSite"}).
		Expect(http.StatusCreated)
	org := res.JSON()
	id := org["id"].(string)
	if res.Header.Get("Location") != env.URL+"/v1/orgs/"+id {
		t.Fatalf("Location = %q", res.Header.Get("Location"))
	}
	for key, want := range map[string]any{
		"object": "organization", "title": "Acme", "type": "business", "useCase": "docsSite",
		"plan": "free_2024", "inviteLinks": true, "sso": false, "ai": false, "internal_isOnNewTrial": true,
	} {
		if org[key] != want {
			t.Errorf("%s = %v, want %v", key, org[key], want)
		}
	}
	if fmt.Sprint(org["emailDomains"]) != "[acme.com]" {
		t.Errorf("emailDomains = %v", org["emailDomains"])
	}
	perms := org["permissions"].(map[string]any)
	if perms["admin"] != true || perms["createContent"] != true || perms["view"] != true {
		t.Errorf("creator's permissions = %v", perms)
	}
	if _, present := org["hostname"]; present {
		t.Errorf("unset optional hostname is present: %v", org["hostname"])
	}

	got := alice.Do("GET", "/v1/orgs/"+id, nil).Expect(http.StatusOK).JSON()
	if got["title"] != "Acme" || got["createdAt"] != org["createdAt"] {
		t.Fatalf("GET org = %v", got)
	}
	list := alice.Do("GET", "/v1/orgs", nil).Expect(http.StatusOK).JSON()
	if list["count"] != 1.0 || list["items"].([]any)[0].(map[string]any)["id"] != id {
		t.Fatalf("GET /v1/orgs = %v", list)
	}
	if _, present := list["next"]; present {
		t.Fatalf("a single page has next: %v", list)
	}

	alice.Do("GET", "/v1/orgs/nope", nil).Expect(http.StatusNotFound).ErrorMessage()
	for _, body := range []string{`{}`, `{"title":"A"}`, `{"title":5}`, `{"title":"Acme","type":"gov"}`, `{"title":"Acme","emailDomains":["not a domain"]}`, `[1]`, `{"title":`} {
		alice.Do("POST", "/v1/orgs", body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	list = alice.Do("GET", "/v1/orgs", nil).Expect(http.StatusOK).JSON()
	if list["count"] != 1.0 {
		t.Fatalf("rejected creates created organizations: %v", list)
	}
}

func TestUpdateOrganization(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	path := "/v1/orgs/" + org

	long := func(n int) string { return strings.Repeat("é", n) }
	bad := []struct {
		body  string
		field string
	}{
		{`{"title":"A"}`, "title"},
		{`{"title":"` + long(256) + `"}`, "title"},
		{`{"title":null}`, "title"},
		{`{"title":7}`, "title"},
		{`{"hostname":"ab"}`, "hostname"},
		{`{"hostname":"` + long(33) + `"}`, "hostname"},
		{`{"hostname":"Not Valid"}`, "hostname"},
		{`{"defaultRole":"owner"}`, "defaultRole"},
		{`{"logo":"not a url"}`, "logo"},
		{`{"logo":"https://example.com/` + strings.Repeat("a", 2048) + `"}`, "logo"},
		{`{"emailDomains":"acme.com"}`, "emailDomains"},
		{`{"emailDomains":["acme"]}`, "emailDomains"},
		{`{"sso":"yes"}`, "sso"},
		{`{"ai":null}`, "ai"},
		{`{"defaultContent":{"type":"site","site":"missing"}}`, "defaultContent"},
		{`{"defaultContent":{"type":"space","site":"x"}}`, "defaultContent"},
		{`{"mergeRules":{"type":"inherit"}}`, "mergeRules"},
		{`{"mergeRules":{"type":"rules"}}`, "mergeRules"},
		{`{"mergeRules":{"type":"rules","rules":[{"rule":"require_specific_reviewers"}]}}`, "mergeRules"},
		{`{"mergeRules":{"type":"rules","rules":[{"rule":"custom"}]}}`, "mergeRules"},
		{`{"mergeRules":{"type":"rules","rules":[{"rule":"made_up"}]}}`, "mergeRules"},
		{`{"unknown":true}`, "unknown"},
		{`{"title":"ok"`, ""},
	}
	before := alice.Do("GET", path, nil).Expect(http.StatusOK).Body
	for _, tc := range bad {
		t.Run(tc.body[:min(len(tc.body), 40)], func(t *testing.T) {
			msg := alice.Do("PATCH", path, tc.body).Expect(http.StatusBadRequest).ErrorMessage()
			if !strings.Contains(msg, tc.field) {
				t.Errorf("message %q does not name %q", msg, tc.field)
			}
		})
	}
	if after := alice.Do("GET", path, nil).Expect(http.StatusOK).Body; string(after) != string(before) {
		t.Fatalf("rejected updates changed the organization:\n%s\n%s", before, after)
	}

	updated := alice.Do("PATCH", path, map[string]any{
		"title": "Acme Inc", "emailDomains": []string{"acme.com", "acme.io"}, "hostname": "acme",
		"defaultRole": "edit", "logo": "https://acme.com/logo.png", "sso": true, "ai": true, "inviteLinks": false,
		"mergeRules": map[string]any{"type": "rules", "rules": []any{
			map[string]any{"rule": "require_specific_reviewers", "users": []string{alice.ID}},
			map[string]any{"rule": "require_at_least_one_review"},
			map[string]any{"rule": "custom", "expression": "reviews.length > 1"},
		}},
	}).Expect(http.StatusOK).JSON()
	got := alice.Do("GET", path, nil).Expect(http.StatusOK).JSON()
	for _, o := range []map[string]any{updated, got} {
		for key, want := range map[string]string{
			"title": "Acme Inc", "emailDomains": "[acme.com acme.io]", "hostname": "acme", "defaultRole": "edit",
			"sso": "true", "ai": "true", "inviteLinks": "false",
			"mergeRules": "map[rules:[map[rule:require_specific_reviewers users:[" + alice.ID + "]] map[rule:require_at_least_one_review] map[expression:reviews.length > 1 rule:custom]] type:rules]",
		} {
			if fmt.Sprint(o[key]) != want {
				t.Errorf("%s = %v, want %v", key, o[key], want)
			}
		}
		if o["urls"].(map[string]any)["logo"] != "https://acme.com/logo.png" {
			t.Errorf("urls.logo = %v", o["urls"])
		}
	}

	// null clears what can be cleared; a null role makes new members guests.
	cleared := alice.Do("PATCH", path, `{"hostname":null,"logo":null,"defaultRole":null}`).Expect(http.StatusOK).JSON()
	if _, ok := cleared["hostname"]; ok {
		t.Errorf("hostname not cleared: %v", cleared["hostname"])
	}
	if v, ok := cleared["defaultRole"]; !ok || v != nil {
		t.Errorf("defaultRole = %v (present %v), want null", v, ok)
	}

	// Hostnames are unique across organizations.
	alice.Do("PATCH", path, `{"hostname":"acme"}`).Expect(http.StatusOK)
	other := alice.NewOrg("Other")
	alice.Do("PATCH", "/v1/orgs/"+other, `{"hostname":"acme"}`).Expect(http.StatusConflict).ErrorMessage()
}

func TestOrganizationRolesAndTenants(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice, bob, eve := env.NewUser("Alice"), env.NewUser("Bob"), env.NewUser("Eve")
	org := alice.NewOrg("Acme")
	bob.Join(org, store.RoleRead)
	eve.NewOrg("Evil")
	path := "/v1/orgs/" + org
	before := alice.Do("GET", path, nil).Expect(http.StatusOK).Body

	// A reader sees the organization, with a reader's permissions, and may not change it.
	seen := bob.Do("GET", path, nil).Expect(http.StatusOK).JSON()
	perms := seen["permissions"].(map[string]any)
	if perms["admin"] != false || perms["view"] != true || perms["listMembers"] != true || perms["createContent"] != false {
		t.Fatalf("reader's permissions = %v", perms)
	}
	bob.Do("PATCH", path, `{"title":"Bob's"}`).Expect(http.StatusForbidden).ErrorMessage()
	bob.Do("PUT", path+"/agent-instructions", `{"instructions":{"object":"document","data":{},"nodes":[]}}`).Expect(http.StatusForbidden)

	// Another tenant cannot tell the organization exists.
	missing := eve.Do("GET", "/v1/orgs/does-not-exist", nil).Expect(http.StatusNotFound).Body
	hidden := eve.Do("GET", path, nil).Expect(http.StatusNotFound).Body
	if strings.Replace(string(hidden), org, "", 1) != strings.Replace(string(missing), "does-not-exist", "", 1) {
		t.Fatalf("another tenant's organization answers differently from a missing one:\n%s\n%s", hidden, missing)
	}
	eve.Do("PATCH", path, `{"title":"Pwned"}`).Expect(http.StatusNotFound)
	eve.Do("GET", path+"/agent-instructions", nil).Expect(http.StatusNotFound)
	eve.Do("PUT", path+"/agent-instructions", `{"instructions":{"object":"document","data":{},"nodes":[]}}`).Expect(http.StatusNotFound)
	list := eve.Do("GET", "/v1/orgs", nil).Expect(http.StatusOK).JSON()
	if list["count"] != 1.0 {
		t.Fatalf("eve lists %v", list)
	}
	if after := alice.Do("GET", path, nil).Expect(http.StatusOK).Body; string(after) != string(before) {
		t.Fatalf("forbidden writes changed the organization")
	}
}

func TestAgentInstructions(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	path := "/v1/orgs/" + org + "/agent-instructions"

	initial := alice.Do("GET", path, nil).Expect(http.StatusOK).JSON()
	if initial["object"] != "agent-instructions" || fmt.Sprint(initial["instructions"]) != "map[data:map[] nodes:[] object:document]" ||
		initial["updatedBy"] != alice.ID || initial["urls"].(map[string]any)["location"] != env.URL+path {
		t.Fatalf("initial instructions = %v", initial)
	}

	doc := map[string]any{"object": "document", "data": map[string]any{"schemaVersion": 1}, "nodes": []any{
		map[string]any{"object": "block", "type": "paragraph", "nodes": []any{
			map[string]any{"object": "text", "leaves": []any{map[string]any{"object": "leaf", "text": "Be concise.", "marks": []any{}}}},
		}},
	}}
	env.Clock.Advance(3600e9)
	put := alice.Do("PUT", path, map[string]any{"instructions": doc}).Expect(http.StatusOK).JSON()
	got := alice.Do("GET", path, nil).Expect(http.StatusOK).JSON()
	if fmt.Sprint(got["instructions"]) != fmt.Sprint(doc) || got["updatedAt"] != put["updatedAt"] || got["updatedAt"] == initial["updatedAt"] {
		t.Fatalf("after PUT: %v", got)
	}
	for _, body := range []string{`{}`, `{"instructions":"text"}`, `{"instructions":{"object":"block","nodes":[]}}`,
		`{"instructions":{"object":"document","nodes":{}}}`, `{"instructions":{"object":"document","nodes":[1]}}`} {
		alice.Do("PUT", path, body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	if again := alice.Do("GET", path, nil).Expect(http.StatusOK).JSON(); fmt.Sprint(again) != fmt.Sprint(got) {
		t.Fatalf("rejected PUTs changed the instructions")
	}
}

func TestOrganizationListPagination(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	want := map[string]bool{}
	for i := range 7 {
		want[alice.NewOrg(fmt.Sprintf("Org %d", i))] = true
		env.Clock.Advance(1e9)
	}
	seen := map[string]bool{}
	page, pages := "", 0
	for {
		res := alice.Do("GET", "/v1/orgs?limit=3"+page, nil).Expect(http.StatusOK).JSON()
		pages++
		items := res["items"].([]any)
		if int(res["count"].(float64)) != len(items) {
			t.Fatalf("count %v on a page of %d items, want the page's (the specification, 1.2)", res["count"], len(items))
		}
		for _, it := range items {
			id := it.(map[string]any)["id"].(string)
			if seen[id] {
				t.Fatalf("%s listed twice", id)
			}
			seen[id] = true
		}
		next, ok := res["next"].(map[string]any)
		if !ok {
			break
		}
		page = "&page=" + next["page"].(string)
	}
	if pages != 3 || len(seen) != len(want) {
		t.Fatalf("%d pages, %d of %d organizations", pages, len(seen), len(want))
	}
	for _, q := range []string{"limit=1001", "limit=-1", "limit=abc", "page=garbage"} {
		alice.Do("GET", "/v1/orgs?"+q, nil).Expect(http.StatusBadRequest).ErrorMessage()
	}
}

func TestUnknownEndpointsAndBodies(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")

	alice.Do("GET", "/v1/does/not/exist", nil).Expect(http.StatusNotFound).ErrorMessage()
	res := alice.Do("DELETE", "/v1/orgs", nil).Expect(http.StatusMethodNotAllowed)
	res.ErrorMessage()
	if !strings.Contains(res.Header.Get("Allow"), "GET") {
		t.Errorf("Allow = %q", res.Header.Get("Allow"))
	}
	alice.Do("PATCH", "/v1/orgs/"+org, `{"title": "x",}`).Expect(http.StatusBadRequest).ErrorMessage()
	alice.Do("PATCH", "/v1/orgs/"+org, `{"title":"ok"} {"title":"again"}`).Expect(http.StatusBadRequest)
	big := `{"title":"` + strings.Repeat("a", 2<<20) + `"}`
	alice.Do("PATCH", "/v1/orgs/"+org, big).Expect(http.StatusRequestEntityTooLarge).ErrorMessage()
}
