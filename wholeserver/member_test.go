package wholeserver_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// memberIDs lists the ids of a member list page.
func memberIDs(t *testing.T, res *servertest.Response) []string {
	t.Helper()
	var page struct {
		Items []struct{ ID string }
	}
	res.Decode(&page)
	var ids []string
	for _, m := range page.Items {
		ids = append(ids, m.ID)
	}
	return ids
}

func TestMembersListFiltersAndSorts(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice Admin")
	org := alice.NewOrg("Acme")
	env.Clock.Advance(time.Hour)
	bob := env.NewUser("Bob Reader")
	bob.Join(org, store.RoleRead)
	env.Clock.Advance(time.Hour)
	gus := env.NewUser("Gus Guest")
	gus.Join(org, "")
	env.Clock.Advance(time.Hour)
	erin := env.NewUser("Erin 50% Editor")
	erin.Join(org, store.RoleEdit)
	base := "/v1/orgs/" + org + "/members"

	cases := []struct {
		name, query string
		want        []string
	}{
		{"newest first by default", "", []string{erin.ID, gus.ID, bob.ID, alice.ID}},
		{"oldest first", "?order=asc", []string{alice.ID, bob.ID, gus.ID, erin.ID}},
		{"by role", "?role=read", []string{bob.ID}},
		{"guests", "?role=guest", []string{gus.ID}},
		{"search in names, any case", "?search=bob", []string{bob.ID}},
		{"search in emails", "?search=" + url.QueryEscape(strings.Split(alice.Email, "@")[0]), []string{alice.ID}},
		{"search is literal", "?search=" + url.QueryEscape("50%"), []string{erin.ID}},
		{"nobody seen yet", "?sort=lastSeenAt", nil},
	}
	for _, c := range cases {
		if got := memberIDs(t, alice.Do("GET", base+c.query, nil).Expect(http.StatusOK)); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}

	// Pinging records activity: sorting by it lists only members seen.
	bob.Do("POST", "/v1/orgs/"+org+"/ping", nil).Expect(http.StatusOK)
	env.Clock.Advance(time.Minute)
	gus.Do("POST", "/v1/orgs/"+org+"/ping", nil).Expect(http.StatusOK)
	if got := memberIDs(t, alice.Do("GET", base+"?sort=lastSeenAt", nil).Expect(http.StatusOK)); fmt.Sprint(got) != fmt.Sprint([]string{gus.ID, bob.ID}) {
		t.Errorf("by last activity: %v", got)
	}
	seen := bob.Do("GET", base+"/"+bob.ID, nil).Expect(http.StatusOK).JSON()
	if seen["lastSeenAt"] == nil {
		t.Errorf("ping did not record lastSeenAt: %v", seen)
	}

	// A walk through pages of one.
	var walked []string
	next := base + "?limit=1&order=asc"
	for next != "" {
		res := alice.Do("GET", next, nil).Expect(http.StatusOK)
		walked = append(walked, memberIDs(t, res)...)
		next = ""
		if n, ok := res.JSON()["next"].(map[string]any); ok {
			next = base + "?limit=1&order=asc&page=" + url.QueryEscape(n["page"].(string))
		}
	}
	if fmt.Sprint(walked) != fmt.Sprint([]string{alice.ID, bob.ID, gus.ID, erin.ID}) {
		t.Errorf("pages: %v", walked)
	}

	for _, bad := range []string{"?role=owner", "?sort=name", "?order=up", "?limit=1001", "?search=" + strings.Repeat("x", 513), "?page=nonsense"} {
		alice.Do("GET", base+bad, nil).Expect(http.StatusBadRequest).ErrorMessage()
	}
	// Guests do not list the members; strangers do not see the organization.
	gus.Do("GET", base, nil).Expect(http.StatusForbidden).ErrorMessage()
	env.NewUser("Stranger").Do("GET", base, nil).Expect(http.StatusNotFound).ErrorMessage()
}

func TestMemberShapeAndSpaces(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	bob := env.NewUser("Bob")
	bob.Join(org, store.RoleEdit)
	gus := env.NewUser("Gus")
	gus.Join(org, "")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	alice.Do("PUT", "/v1/orgs/"+org+"/teams", map[string]any{"title": "Writers", "members": []string{bob.ID}}).Expect(http.StatusCreated)

	m := alice.Do("GET", "/v1/orgs/"+org+"/members/"+bob.ID, nil).Expect(http.StatusOK).JSON()
	user, _ := m["user"].(map[string]any)
	if m["object"] != "member" || m["id"] != bob.ID || m["role"] != "edit" || user["id"] != bob.ID ||
		m["disabled"] != false || m["sso"] != false || m["spaces"] != 1.0 || m["teams"] != 1.0 || m["joinedAt"] == nil {
		t.Errorf("member: %v", m)
	}
	// A guest's role is null, and kept in the body.
	if body := string(alice.Do("GET", "/v1/orgs/"+org+"/members/"+gus.ID, nil).Expect(http.StatusOK).Body); !strings.Contains(body, `"role":null`) {
		t.Errorf("guest: %s", body)
	}
	alice.Do("GET", "/v1/orgs/"+org+"/members/nobody", nil).Expect(http.StatusNotFound).ErrorMessage()

	var spaces struct {
		Items []struct {
			Permission string
			Space      struct{ ID string }
		}
	}
	alice.Do("GET", "/v1/orgs/"+org+"/members/"+bob.ID+"/spaces", nil).Expect(http.StatusOK).Decode(&spaces)
	if len(spaces.Items) != 1 || spaces.Items[0].Permission != "edit" || spaces.Items[0].Space.ID != space {
		t.Errorf("bob's spaces: %+v", spaces)
	}
	alice.Do("GET", "/v1/orgs/"+org+"/members/"+gus.ID+"/spaces", nil).Expect(http.StatusOK).Decode(&spaces)
	if len(spaces.Items) != 0 {
		t.Errorf("a guest's spaces: %+v", spaces)
	}

	// SSO, by admins.
	bob.Do("POST", "/v1/orgs/"+org+"/members/"+bob.ID+"/sso", nil).Expect(http.StatusForbidden).ErrorMessage()
	if alice.Do("POST", "/v1/orgs/"+org+"/members/"+bob.ID+"/sso", nil).Expect(http.StatusOK).JSON()["sso"] != true {
		t.Error("sso not set")
	}
}

func TestMemberRolesAndRemoval(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	bob := env.NewUser("Bob")
	bob.Join(org, store.RoleRead)
	members := "/v1/orgs/" + org + "/members/"

	// Bad input changes nothing.
	for _, body := range []string{`{"role":"owner"}`, `{"role":7}`, `{"role":`, `[]`} {
		alice.Do("PATCH", members+bob.ID, body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	// Only admins change roles.
	bob.Do("PATCH", members+bob.ID, `{"role":"admin"}`).Expect(http.StatusForbidden).ErrorMessage()
	if role := alice.Do("GET", members+bob.ID, nil).Expect(http.StatusOK).JSON()["role"]; role != "read" {
		t.Fatalf("role after rejected changes: %v", role)
	}
	// The last admin can be neither demoted nor removed.
	msg := alice.Do("PATCH", members+alice.ID, `{"role":"edit"}`).Expect(http.StatusConflict).ErrorMessage()
	if !strings.Contains(msg, "last admin") {
		t.Errorf("message: %q", msg)
	}
	alice.Do("DELETE", members+alice.ID, nil).Expect(http.StatusConflict).ErrorMessage()
	// With a second admin, the first may step down.
	alice.Do("PATCH", members+bob.ID, `{"role":"admin"}`).Expect(http.StatusOK)
	if role := alice.Do("PATCH", members+alice.ID, `{"role":null}`).Expect(http.StatusOK).JSON()["role"]; role != nil {
		t.Errorf("role null makes a guest, got %v", role)
	}
	alice.Do("PATCH", members+bob.ID, `{"role":"read"}`).Expect(http.StatusForbidden).ErrorMessage()

	// Removal: by an admin, 204 also when there is nobody to remove.
	bob.Do("DELETE", members+alice.ID, nil).Expect(http.StatusNoContent)
	bob.Do("DELETE", members+alice.ID, nil).Expect(http.StatusNoContent)
	alice.Do("GET", "/v1/orgs/"+org, nil).Expect(http.StatusNotFound)
	bob.Do("GET", members+alice.ID, nil).Expect(http.StatusNotFound)
	// Anyone may leave, but not the last admin.
	carol := env.NewUser("Carol")
	carol.Join(org, store.RoleComment)
	carol.Do("DELETE", members+carol.ID, nil).Expect(http.StatusNoContent)
	carol.Do("GET", "/v1/orgs/"+org, nil).Expect(http.StatusNotFound)
	bob.Do("DELETE", members+bob.ID, nil).Expect(http.StatusConflict)
}

// Two admins demoting each other at once: the organization keeps one.
func TestLastAdminUnderConcurrency(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	bob := env.NewUser("Bob")
	bob.Join(org, store.RoleAdmin)
	var wg sync.WaitGroup
	statuses := make([]int, 2)
	for i, pair := range [][2]*servertest.User{{alice, bob}, {bob, alice}} {
		wg.Go(func() {
			statuses[i] = pair[0].Do("PATCH", "/v1/orgs/"+org+"/members/"+pair[1].ID, `{"role":"read"}`).Status
		})
	}
	wg.Wait()
	var admins struct{ Items []any }
	for _, u := range []*servertest.User{alice, bob} {
		if res := u.Do("GET", "/v1/orgs/"+org+"/members?role=admin", nil); res.Status == http.StatusOK {
			res.Decode(&admins)
			break
		}
	}
	if len(admins.Items) != 1 {
		t.Errorf("statuses %v left %d admins", statuses, len(admins.Items))
	}
}

func TestTeams(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	bob, carol := env.NewUser("Bob"), env.NewUser("Carol")
	bob.Join(org, store.RoleAdmin)
	carol.Join(org, store.RoleEdit)
	teams := "/v1/orgs/" + org + "/teams"

	// Bad input: nothing is created.
	for _, body := range []string{`{}`, `{"title":""}`, `{"title":"` + strings.Repeat("t", 65) + `"}`, `{"title":1}`,
		`{"title":"X","members":["nobody"]}`, `{"title":"X","members":"` + carol.ID + `"}`} {
		alice.Do("PUT", teams, body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	carol.Do("PUT", teams, `{"title":"Mine"}`).Expect(http.StatusForbidden).ErrorMessage()
	if n := alice.Do("GET", teams, nil).Expect(http.StatusOK).JSON()["count"]; n != 0.0 {
		t.Fatalf("teams after rejected creations: %v", n)
	}

	// Bob creates a team with Carol: he owns it.
	team := bob.Do("PUT", teams, map[string]any{"title": "Writers", "members": []string{carol.ID}}).Expect(http.StatusCreated).JSON()
	id := team["id"].(string)
	if team["object"] != "team" || team["title"] != "Writers" || team["members"] != 2.0 || team["spaces"] != 0.0 {
		t.Errorf("team: %v", team)
	}
	env.Clock.Advance(time.Minute)
	alice.Do("PUT", teams, `{"title":"Readers"}`).Expect(http.StatusCreated)

	var memberTeams struct {
		Items []struct {
			Team   struct{ ID, Title string }
			Member struct{ Role string }
		}
	}
	alice.Do("GET", "/v1/orgs/"+org+"/members/"+bob.ID+"/teams", nil).Expect(http.StatusOK).Decode(&memberTeams)
	if len(memberTeams.Items) != 1 || memberTeams.Items[0].Member.Role != "owner" {
		t.Errorf("bob's teams: %+v", memberTeams)
	}
	alice.Do("GET", "/v1/orgs/"+org+"/members/"+carol.ID+"/teams?title=WRIT", nil).Expect(http.StatusOK).Decode(&memberTeams)
	if len(memberTeams.Items) != 1 || memberTeams.Items[0].Member.Role != "member" {
		t.Errorf("carol's teams: %+v", memberTeams)
	}
	alice.Do("GET", "/v1/orgs/"+org+"/members/"+carol.ID+"/teams?title=nothing", nil).Expect(http.StatusOK).Decode(&memberTeams)
	if len(memberTeams.Items) != 0 {
		t.Errorf("title filter: %+v", memberTeams)
	}

	titles := func(query string) string {
		var page struct{ Items []struct{ Title string } }
		alice.Do("GET", teams+query, nil).Expect(http.StatusOK).Decode(&page)
		var out []string
		for _, t := range page.Items {
			out = append(out, t.Title)
		}
		return strings.Join(out, ",")
	}
	for query, want := range map[string]string{
		"":                   "Writers,Readers",
		"?title=read":        "Readers",
		"?owner=" + carol.ID: "",
		"?owner=" + alice.ID: "Writers,Readers", // an admin manages every team
	} {
		if got := titles(query); got != want {
			t.Errorf("teams%s: %q, want %q", query, got, want)
		}
	}
	alice.Do("GET", teams+"?owner=nobody", nil).Expect(http.StatusBadRequest).ErrorMessage()

	// Bob is no admin any more, but still owns his team: he renames it;
	// Carol, a plain member of it, cannot.
	alice.Do("PATCH", "/v1/orgs/"+org+"/members/"+bob.ID, `{"role":"edit"}`).Expect(http.StatusOK)
	if got := bob.Do("GET", teams+"/"+id, nil).Expect(http.StatusOK).JSON()["permissions"].(map[string]any); got["admin"] != true {
		t.Errorf("owner's permissions: %v", got)
	}
	bob.Do("PATCH", teams+"/"+id, `{"title":"Authors"}`).Expect(http.StatusOK)
	carol.Do("PATCH", teams+"/"+id, `{"title":"Mine"}`).Expect(http.StatusForbidden).ErrorMessage()
	carol.Do("DELETE", teams+"/"+id, nil).Expect(http.StatusForbidden).ErrorMessage()
	bob.Do("PATCH", teams+"/"+id, `{"title":""}`).Expect(http.StatusBadRequest).ErrorMessage()
	if got := carol.Do("GET", teams+"/"+id, nil).Expect(http.StatusOK).JSON(); got["title"] != "Authors" {
		t.Errorf("after renames: %v", got)
	}

	// Leaving the organization leaves its teams.
	carol.Do("DELETE", "/v1/orgs/"+org+"/members/"+carol.ID, nil).Expect(http.StatusNoContent)
	if n := alice.Do("GET", teams+"/"+id, nil).Expect(http.StatusOK).JSON()["members"]; n != 1.0 {
		t.Errorf("members after Carol left: %v", n)
	}

	// Delete: 205, then 204 when there is nothing left to delete.
	bob.Do("DELETE", teams+"/"+id, nil).Expect(http.StatusResetContent)
	bob.Do("DELETE", teams+"/"+id, nil).Expect(http.StatusNoContent)
	alice.Do("GET", teams+"/"+id, nil).Expect(http.StatusNotFound).ErrorMessage()
	if got := titles(""); got != "Readers" {
		t.Errorf("after delete: %q", got)
	}
}

// Team member counts and member space counts stay true under parallel
// additions, removals, creations and deletions.
func TestCountsUnderConcurrency(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	const n = 12
	users := newReaders(env, org, n)
	team := alice.Do("PUT", "/v1/orgs/"+org+"/teams", `{"title":"Crowd"}`).Expect(http.StatusCreated).String("id")
	teamPath := "/v1/orgs/" + org + "/teams/" + team
	spaces := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			alice.Do("PUT", teamPath+"/members/"+users[i].ID, `{}`).Expect(http.StatusNoContent)
			spaces[i] = alice.Do("POST", "/v1/orgs/"+org+"/spaces", fmt.Sprintf(`{"title":"S%d"}`, i)).Expect(http.StatusCreated).String("id")
		})
	}
	wg.Wait()
	for i := range n / 3 {
		wg.Go(func() {
			alice.Do("DELETE", teamPath+"/members/"+users[i].ID, nil).Expect(http.StatusResetContent)
			alice.Do("DELETE", "/v1/spaces/"+spaces[i], nil).Expect(http.StatusNoContent)
		})
	}
	wg.Wait()

	// The creator (an owner) and the members left.
	wantMembers := 1 + n - n/3
	if got := alice.Do("GET", teamPath, nil).Expect(http.StatusOK).JSON()["members"]; got != float64(wantMembers) {
		t.Errorf("team members: %v, want %d", got, wantMembers)
	}
	if got := alice.Do("GET", teamPath+"/members?limit=100", nil).Expect(http.StatusOK).JSON()["count"]; got != float64(wantMembers) {
		t.Errorf("listed team members: %v, want %d", got, wantMembers)
	}
	member := alice.Do("GET", "/v1/orgs/"+org+"/members/"+users[n-1].ID, nil).Expect(http.StatusOK).JSON()
	if member["spaces"] != float64(n-n/3) || member["teams"] != 1.0 {
		t.Errorf("member counts: spaces %v (want %d), teams %v", member["spaces"], n-n/3, member["teams"])
	}
	if got := alice.Do("GET", "/v1/orgs/"+org+"/members/"+users[0].ID, nil).Expect(http.StatusOK).JSON()["teams"]; got != 0.0 {
		t.Errorf("a removed member still counts %v teams", got)
	}
}

func TestTeamMembersBulkUpdate(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	bob, carol := env.NewUser("Bob"), env.NewUser("Carol")
	bob.Join(org, store.RoleEdit)
	carol.Join(org, store.RoleEdit)
	outsider := env.NewUser("Outsider")
	teamPath := "/v1/orgs/" + org + "/teams/" + alice.Do("PUT", "/v1/orgs/"+org+"/teams", `{"title":"Crew"}`).Expect(http.StatusCreated).String("id")
	roles := func() map[string]string {
		var page struct {
			Items []struct {
				Organization struct{ ID string }
				Team         struct{ Role string }
			}
		}
		alice.Do("GET", teamPath+"/members", nil).Expect(http.StatusOK).Decode(&page)
		out := map[string]string{}
		for _, it := range page.Items {
			out[it.Organization.ID] = it.Team.Role
		}
		return out
	}

	// Bad input changes nothing.
	for _, body := range []string{`{"add":["` + outsider.ID + `"]}`, `{"add":["nobody@example.com"]}`,
		`{"memberships":{"` + bob.ID + `":{"role":"boss"}}}`, `{"memberships":{"` + bob.ID + `":"owner"}}`, `{"add":"` + bob.ID + `"}`} {
		alice.Do("PUT", teamPath+"/members", body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	if got := roles(); len(got) != 1 {
		t.Fatalf("after rejected updates: %v", got)
	}
	// Add by email and by id, and set a role, in one change.
	alice.Do("PUT", teamPath+"/members", `{"add":["`+strings.ToUpper(bob.Email)+`"],"memberships":{"`+carol.ID+`":{"role":"owner"}}}`).Expect(http.StatusNoContent)
	if got := roles(); got[bob.ID] != "member" || got[carol.ID] != "owner" {
		t.Errorf("after adding: %v", got)
	}
	// Carol, now an owner, manages the team: she removes Bob.
	carol.Do("PUT", teamPath+"/members", `{"remove":["`+bob.ID+`"]}`).Expect(http.StatusNoContent)
	if got := roles(); len(got) != 2 || got[bob.ID] != "" {
		t.Errorf("after removing: %v", got)
	}
	bob.Do("PUT", teamPath+"/members/"+bob.ID, `{"role":"owner"}`).Expect(http.StatusForbidden).ErrorMessage()
	alice.Do("PUT", teamPath+"/members/"+outsider.ID, `{}`).Expect(http.StatusNotFound).ErrorMessage()
}
