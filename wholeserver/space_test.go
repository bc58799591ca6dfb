package wholeserver_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/graph/jobs"
	"github.com/docsapi/docsapi/store"
)

func TestCreateGetAndListSpaces(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")

	res := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Handbook","emoji":"📘","language":"pt-br","editMode":"locked"}`).
		Expect(http.StatusCreated)
	space := res.JSON()
	id := space["id"].(string)
	if res.Header.Get("Location") != env.URL+"/v1/spaces/"+id {
		t.Errorf("Location = %q", res.Header.Get("Location"))
	}
	for key, want := range map[string]any{
		"object": "space", "title": "Handbook", "emoji": "📘", "language": "pt-br", "editMode": "locked",
		"visibility": "private", "organization": org, "defaultLevel": "inherit", "comments": 0.0,
		"changeRequests": 0.0, "changeRequestsOpen": 0.0, "changeRequestsDraft": 0.0,
	} {
		if space[key] != want {
			t.Errorf("%s = %v, want %v", key, space[key], want)
		}
	}
	if space["revision"] == "" || space["createdAt"] == nil || fmt.Sprint(space["mergeRules"]) != "map[type:inherit]" {
		t.Errorf("space = %v", space)
	}
	urls := space["urls"].(map[string]any)
	if urls["location"] != env.URL+"/v1/spaces/"+id || urls["app"] == nil || urls["published"] != nil {
		t.Errorf("urls = %v", urls)
	}
	for _, absent := range []string{"deletedAt", "parent"} {
		if _, ok := space[absent]; ok {
			t.Errorf("%s present: %v", absent, space[absent])
		}
	}
	if p := space["permissions"].(map[string]any); p["admin"] != true || p["edit"] != true {
		t.Errorf("creator's permissions = %v", p)
	}

	got := alice.Do("GET", "/v1/spaces/"+id, nil).Expect(http.StatusOK).JSON()
	if fmt.Sprint(got) != fmt.Sprint(space) {
		t.Errorf("GET differs from POST:\n%v\n%v", got, space)
	}
	env.Clock.Advance(time.Second)
	alice.Do("POST", "/v1/orgs/"+org+"/spaces", nil).Expect(http.StatusCreated)
	list := alice.Do("GET", "/v1/orgs/"+org+"/spaces", nil).Expect(http.StatusOK).JSON()
	if list["count"] != 2.0 || list["items"].([]any)[0].(map[string]any)["id"] != id {
		t.Errorf("list = %v", list)
	}

	for _, body := range []string{
		`{"title":"` + strings.Repeat("x", 51) + `"}`, `{"emoji":"` + strings.Repeat("x", 51) + `"}`,
		`{"language":"xx"}`, `{"editMode":"frozen"}`, `{"parent":"nope"}`, `{"title":null}`, `{"template":{"id":"x"}}`, `{"title":1}`,
	} {
		alice.Do("POST", "/v1/orgs/"+org+"/spaces", body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	if list := alice.Do("GET", "/v1/orgs/"+org+"/spaces", nil).JSON(); list["count"] != 2.0 {
		t.Errorf("rejected creates created spaces: %v", list["count"])
	}
	alice.Do("GET", "/v1/spaces/nope", nil).Expect(http.StatusNotFound).ErrorMessage()
	alice.Do("POST", "/v1/orgs/nope/spaces", `{}`).Expect(http.StatusNotFound)
}

func TestUpdateSpace(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	id := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Handbook"}`).Expect(http.StatusCreated).String("id")
	path := "/v1/spaces/" + id

	before := alice.Do("GET", path, nil).Body
	for _, tc := range []struct{ body, field string }{
		{`{"title":"` + strings.Repeat("é", 51) + `"}`, "title"},
		{`{"title":null}`, "title"},
		{`{"emoji":"` + strings.Repeat("x", 51) + `"}`, "emoji"},
		{`{"editMode":"open"}`, "editMode"},
		{`{"editMode":null}`, "editMode"},
		{`{"defaultLevel":"owner"}`, "defaultLevel"},
		{`{"language":"klingon"}`, "language"},
		{`{"mergeRules":{"type":"rules","rules":[{"rule":"allow_bypass"}]}}`, "mergeRules"},
		{`{"mergeRules":null}`, "mergeRules"},
		{`{"icon":"nope"}`, "icon"},
		{`{"visibility":"in-collection"}`, "visibility"}, // not in a collection
		{`{"visibility":null}`, "visibility"},
		{`{"visibility":"everyone"}`, "visibility"},
		{`{"title":["a"]}`, "title"},
	} {
		msg := alice.Do("PATCH", path, tc.body).Expect(http.StatusBadRequest).ErrorMessage()
		if !strings.Contains(msg, tc.field) {
			t.Errorf("%s: message %q does not name %s", tc.body, msg, tc.field)
		}
	}
	if after := alice.Do("GET", path, nil).Body; string(after) != string(before) {
		t.Fatalf("rejected updates changed the space")
	}

	env.Clock.Advance(time.Minute)
	alice.Do("PATCH", path, `{"title":"Guide","emoji":"🚀","editMode":"locked","defaultLevel":"comment","language":"fr",
		"mergeRules":{"type":"rules","rules":[{"rule":"require_at_least_one_review"}]}}`).Expect(http.StatusOK)
	// An emoji or an icon, one at a time (the reference's body).
	updated := alice.Do("PATCH", path, `{"icon":"https://acme.com/i.png"}`).Expect(http.StatusOK).JSON()
	got := alice.Do("GET", path, nil).Expect(http.StatusOK).JSON()
	for _, s := range []map[string]any{updated, got} {
		for key, want := range map[string]string{"title": "Guide", "emoji": "🚀", "editMode": "locked", "defaultLevel": "comment",
			"language": "fr", "mergeRules": "map[rules:[map[rule:require_at_least_one_review]] type:rules]"} {
			if fmt.Sprint(s[key]) != want {
				t.Errorf("%s = %v, want %v", key, s[key], want)
			}
		}
		if s["urls"].(map[string]any)["icon"] != "https://acme.com/i.png" || s["updatedAt"] == s["createdAt"] {
			t.Errorf("space = %v", s)
		}
	}
	cleared := alice.Do("PATCH", path, `{"emoji":null,"icon":null,"defaultLevel":null}`).Expect(http.StatusOK).JSON()
	if cleared["emoji"] != "" || cleared["urls"].(map[string]any)["icon"] != nil {
		t.Errorf("cleared = %v", cleared)
	}
	if v, ok := cleared["defaultLevel"]; !ok || v != nil {
		t.Errorf("defaultLevel = %v, want null (guest)", v)
	}
	alice.Do("PATCH", "/v1/spaces/nope", `{"title":"x"}`).Expect(http.StatusNotFound)
}

func TestSpaceRolesAndTenants(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice, reader, guest, eve := env.NewUser("Alice"), env.NewUser("Reader"), env.NewUser("Guest"), env.NewUser("Eve")
	org := alice.NewOrg("Acme")
	reader.Join(org, store.RoleRead)
	guest.Join(org, "")
	eve.NewOrg("Evil")
	id := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Secret"}`).Expect(http.StatusCreated).String("id")
	path := "/v1/spaces/" + id
	before := alice.Do("GET", path, nil).Body

	seen := reader.Do("GET", path, nil).Expect(http.StatusOK).JSON()
	if p := seen["permissions"].(map[string]any); p["view"] != true || p["admin"] != false || p["edit"] != false || p["comment"] != false {
		t.Errorf("reader's permissions = %v", p)
	}
	reader.Do("PATCH", path, `{"title":"Mine"}`).Expect(http.StatusForbidden).ErrorMessage()
	reader.Do("DELETE", path, nil).Expect(http.StatusForbidden)
	reader.Do("POST", path+"/duplicate", nil).Expect(http.StatusForbidden)
	reader.Do("POST", "/v1/orgs/"+org+"/spaces", `{}`).Expect(http.StatusForbidden)

	for _, u := range []*servertest.User{guest, eve} {
		u.Do("GET", path, nil).Expect(http.StatusNotFound)
		u.Do("PATCH", path, `{"title":"Pwned"}`).Expect(http.StatusNotFound)
		// As a deletion of no space answers, so that it tells nothing;
		// the space is still there below.
		u.Do("DELETE", path, nil).Expect(http.StatusNoContent)
		u.Do("POST", path+"/duplicate", nil).Expect(http.StatusNotFound)
		u.Do("POST", path+"/restore", nil).Expect(http.StatusNotFound)
	}
	eve.Do("GET", "/v1/orgs/"+org+"/spaces", nil).Expect(http.StatusNotFound)
	// A guest sees the organization but none of its spaces (none is shared with them).
	if list := guest.Do("GET", "/v1/orgs/"+org+"/spaces", nil).Expect(http.StatusOK).JSON(); list["count"] != 0.0 {
		t.Errorf("a guest lists %v spaces", list["count"])
	}
	if after := alice.Do("GET", path, nil).Expect(http.StatusOK).Body; string(after) != string(before) {
		t.Fatal("forbidden requests changed the space")
	}
}

func TestDeleteRestoreAndPurgeSpace(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Jobs: true})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	newSpace := func(title string) string {
		return alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": title}).Expect(http.StatusCreated).String("id")
	}
	kept, gone := newSpace("Kept"), newSpace("Gone")

	alice.Do("DELETE", "/v1/spaces/"+kept, nil).Expect(http.StatusNoContent)
	alice.Do("GET", "/v1/spaces/"+kept, nil).Expect(http.StatusNotFound)
	alice.Do("PATCH", "/v1/spaces/"+kept, `{"title":"x"}`).Expect(http.StatusNotFound)
	if list := alice.Do("GET", "/v1/orgs/"+org+"/spaces", nil).JSON(); list["count"] != 1.0 {
		t.Fatalf("a deleted space is listed: %v", list)
	}
	alice.Do("DELETE", "/v1/spaces/"+kept, nil).Expect(http.StatusNoContent) // already deleted
	alice.Do("DELETE", "/v1/spaces/never-existed", nil).Expect(http.StatusNoContent)

	env.Clock.Advance(6 * 24 * time.Hour)
	restored := alice.Do("POST", "/v1/spaces/"+kept+"/restore", nil).Expect(http.StatusOK).JSON()
	if restored["title"] != "Kept" || restored["deletedAt"] != nil {
		t.Fatalf("restored = %v", restored)
	}
	alice.Do("GET", "/v1/spaces/"+kept, nil).Expect(http.StatusOK)
	alice.Do("POST", "/v1/spaces/"+kept+"/restore", nil).Expect(http.StatusOK) // not deleted: nothing to do

	alice.Do("DELETE", "/v1/spaces/"+gone, nil).Expect(http.StatusNoContent)
	env.Clock.Advance(7*24*time.Hour + time.Minute)
	alice.Do("POST", "/v1/spaces/"+gone+"/restore", nil).Expect(http.StatusNotFound)

	// The purge job, run by River, removes it for good (and nothing else).
	runPurge(t, env)
	if _, err := store.GetSpace(context.Background(), env.DB, gone); err != store.ErrNotFound {
		t.Fatalf("space deleted 7 days ago still stored: %v", err)
	}
	if _, err := store.GetSpace(context.Background(), env.DB, kept); err != nil {
		t.Fatalf("restored space purged: %v", err)
	}
	alice.Do("DELETE", "/v1/spaces/"+gone, nil).Expect(http.StatusNoContent)
}

// runPurge enqueues the purge job and waits for River to complete it.
func runPurge(t *testing.T, env *servertest.Env) { runJob(t, env, jobs.PurgeDeletedSpaces{}) }

// runJob enqueues a job and waits for River to complete it.
func runJob(t *testing.T, env *servertest.Env, args river.JobArgs) {
	t.Helper()
	events, cancel := env.Jobs.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer cancel()
	ctx := context.Background()
	job, err := env.Jobs.Insert(ctx, args, nil)
	if err != nil {
		t.Fatal(err)
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Job.ID != job.Job.ID {
				continue
			}
			if ev.Kind != river.EventKindJobCompleted {
				t.Fatalf("%s job: %v %v", args.Kind(), ev.Kind, ev.Job.Errors)
			}
			return
		case <-timeout:
			t.Fatalf("%s job did not complete", args.Kind())
		}
	}
}

func TestDuplicateSpace(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	src := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Original","emoji":"📗","language":"de"}`).Expect(http.StatusCreated).JSON()
	id := src["id"].(string)
	alice.Do("PATCH", "/v1/spaces/"+id, `{"defaultLevel":"read","mergeRules":{"type":"none"},"editMode":"locked"}`).Expect(http.StatusOK)

	env.Clock.Advance(time.Hour)
	res := alice.Do("POST", "/v1/spaces/"+id+"/duplicate", nil).Expect(http.StatusCreated)
	dup := res.JSON()
	if dup["id"] == id || dup["revision"] == src["revision"] || dup["createdAt"] == src["createdAt"] {
		t.Fatalf("duplicate is not a new space: %v", dup)
	}
	for _, key := range []string{"title", "emoji", "language", "visibility", "organization"} {
		if dup[key] != src[key] {
			t.Errorf("%s = %v, want %v", key, dup[key], src[key])
		}
	}
	if dup["defaultLevel"] != "read" || dup["editMode"] != "locked" || fmt.Sprint(dup["mergeRules"]) != "map[type:none]" {
		t.Errorf("settings not copied: %v", dup)
	}
	if res.Header.Get("Location") != env.URL+"/v1/spaces/"+dup["id"].(string) {
		t.Errorf("Location = %q", res.Header.Get("Location"))
	}
	if list := alice.Do("GET", "/v1/orgs/"+org+"/spaces", nil).JSON(); list["count"] != 2.0 {
		t.Errorf("list after duplicate = %v", list["count"])
	}
	alice.Do("POST", "/v1/spaces/nope/duplicate", nil).Expect(http.StatusNotFound)
}
