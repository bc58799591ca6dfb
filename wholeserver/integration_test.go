package wholeserver_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// A 1×1 PNG.
var tinyPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

const theSecret = "sk_live_very-secret-value-4242"

// publishBody is a valid publication under org.
func publishBody(org string, extra map[string]any) map[string]any {
	b := map[string]any{"title": "Slack", "description": "Post updates to Slack", "script": "export default {}",
		"scopes": []string{"space:content:read"}, "organization": org}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func TestIntegrationPublishing(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice, bob, carol := env.NewUser("Alice"), env.NewUser("Bob"), env.NewUser("Carol")
	org := alice.NewOrg("Acme")
	alice.Do("PATCH", "/v1/orgs/"+org, `{"hostname":"acme"}`).Expect(http.StatusOK)
	bob.Join(org, store.RoleEdit)
	carolOrg := carol.NewOrg("Carol Co")

	// Publishing by hostname; every read hides the secrets.
	first := alice.Do("POST", "/v1/integrations/slack", publishBody("acme", map[string]any{
		"icon": base64.StdEncoding.EncodeToString(tinyPNG), "previewImages": []string{base64.StdEncoding.EncodeToString(tinyPNG)},
		"secrets": map[string]string{"API_KEY": theSecret}, "categories": []string{"collaboration"}, "target": "all",
		"blocks":                []any{map[string]any{"id": "msg", "title": "Message", "urlUnfurl": []string{"https://app.slack.com/x"}}},
		"externalLinks":         []any{map[string]any{"url": "https://slack.com", "label": "Website"}},
		"configurations":        map[string]any{"account": map[string]any{"properties": map[string]any{"channel": map[string]any{"type": "string"}}}},
		"contentSecurityPolicy": map[string]any{"script-src": "'self'"},
	})).Expect(http.StatusOK)
	in := first.JSON()
	owner := in["owner"].(map[string]any)
	urls := in["urls"].(map[string]any)
	if in["object"] != "integration" || in["name"] != "slack" || in["version"] != 1.0 || owner["id"] != org ||
		in["permissions"].(map[string]any)["admin"] != true || in["contentSecurityPolicy"].(map[string]any)["script-src"] != "'self'" ||
		len(in["blocks"].([]any)) != 1 || in["visibility"] != "public" || in["verified"] != false {
		t.Fatalf("published: %s", first.Body)
	}
	// The icon and preview image are served from the blob store.
	for _, u := range []string{urls["icon"].(string), in["previewImages"].([]any)[0].(string)} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Equal(got, tinyPNG) || resp.Header.Get("Content-Type") != "image/png" {
			t.Errorf("GET %s: %d %q", u, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	if resp, err := http.Get(env.URL + "/integration-assets/slack/" + strings.Repeat("0", 64)); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("a digest that is not the integration's: %v %v", resp.StatusCode, err)
	}

	// Each publish increments the version; bob (not an admin) may not.
	second := alice.Do("POST", "/v1/integrations/slack", publishBody(org, map[string]any{"secrets": map[string]string{"API_KEY": theSecret}})).Expect(http.StatusOK)
	if v := second.JSON()["version"]; v != 2.0 {
		t.Errorf("version after a second publish: %v", v)
	}
	bob.Do("POST", "/v1/integrations/slack", publishBody(org, nil)).Expect(http.StatusForbidden).ErrorMessage()
	// Another organization cannot take the name.
	carol.Do("POST", "/v1/integrations/slack", publishBody(carolOrg, nil)).Expect(http.StatusForbidden).ErrorMessage()

	// Secrets: sealed in the database, never in any response.
	var sealed []byte
	if err := env.DB.NewRaw("SELECT secrets FROM integrations WHERE name = 'slack'").Scan(context.Background(), &sealed); err != nil {
		t.Fatal(err)
	}
	if len(sealed) == 0 || bytes.Contains(sealed, []byte(theSecret)) || bytes.Contains(sealed, []byte("API_KEY")) {
		t.Errorf("secrets at rest: %q", sealed)
	}
	reads := [][]byte{first.Body, second.Body,
		alice.Do("GET", "/v1/integrations/slack", nil).Expect(http.StatusOK).Body,
		alice.Do("GET", "/v1/integrations", nil).Expect(http.StatusOK).Body,
		alice.Do("GET", "/v1/integrations?owner="+org, nil).Expect(http.StatusOK).Body,
		carol.Do("GET", "/v1/integrations/slack", nil).Expect(http.StatusOK).Body,
		alice.Do("POST", "/graphql", map[string]any{"query": `{ integration(name: "slack") { name title scopes contentSecurityPolicy urls { icon } } }`}).Expect(http.StatusOK).Body,
	}
	for i, body := range reads {
		if bytes.Contains(body, []byte(theSecret)) || bytes.Contains(body, []byte("API_KEY")) || bytes.Contains(body, []byte(`"secrets"`)) {
			t.Errorf("read %d shows the secrets: %s", i, body)
		}
	}

	// Bad input changes nothing.
	for name, body := range map[string]any{
		"bad name":      nil,
		"short title":   publishBody(org, map[string]any{"title": "S"}),
		"bad scope":     publishBody(org, map[string]any{"scopes": []string{"everything"}}),
		"bad category":  publishBody(org, map[string]any{"categories": []string{"games"}}),
		"bad image":     publishBody(org, map[string]any{"icon": "not base64!"}),
		"not an image":  publishBody(org, map[string]any{"icon": base64.StdEncoding.EncodeToString([]byte("hello"))}),
		"four previews": publishBody(org, map[string]any{"previewImages": []string{"a", "b", "c", "d"}}),
		"bad block":     publishBody(org, map[string]any{"blocks": []any{map[string]any{"title": "No id"}}}),
		"bad link":      publishBody(org, map[string]any{"externalLinks": []any{map[string]any{"url": "javascript:x", "label": "x"}}}),
		"bad runtime":   publishBody(org, map[string]any{"runtime": "v9"}),
		"bad csp":       publishBody(org, map[string]any{"contentSecurityPolicy": 5}),
		"secret number": publishBody(org, map[string]any{"secrets": map[string]any{"K": 1}}),
		"no script":     map[string]any{"title": "Slack", "description": "x", "scopes": []string{}, "organization": org},
	} {
		path := "/v1/integrations/slack"
		if name == "bad name" {
			path, body = "/v1/integrations/bad%20name", publishBody(org, nil)
		}
		if msg := alice.Do("POST", path, body).Expect(http.StatusBadRequest).ErrorMessage(); msg == "" {
			t.Errorf("%s: no message", name)
		}
	}
	if v := alice.Do("GET", "/v1/integrations/slack", nil).Expect(http.StatusOK).JSON()["version"]; v != 2.0 {
		t.Errorf("version after refused publishes: %v", v)
	}
	alice.Do("POST", "/v1/integrations/other", publishBody("no-such-org", nil)).Expect(http.StatusNotFound).ErrorMessage()
	alice.Do("GET", "/v1/integrations/nope", nil).Expect(http.StatusNotFound).ErrorMessage()

	// Private integrations are their organization's; list filters.
	carol.Do("POST", "/v1/integrations/carol-private", publishBody(carolOrg, map[string]any{"visibility": "private", "title": "Private tool",
		"target": "space", "scopes": []string{"space:content:write"}, "categories": []string{"content"},
		"contentSources": []any{map[string]any{"id": "src", "title": "Source", "configuration": map[string]any{"componentId": "cfg"}}}})).Expect(http.StatusOK)
	alice.Do("GET", "/v1/integrations/carol-private", nil).Expect(http.StatusNotFound)
	// A publish replaces the whole definition: the second had no block and
	// no category; this one has them again.
	alice.Do("POST", "/v1/integrations/slack", publishBody(org, map[string]any{"categories": []string{"collaboration"},
		"blocks": []any{map[string]any{"id": "msg", "title": "Message", "urlUnfurl": []string{"https://app.slack.com/archives/x"}}}})).Expect(http.StatusOK)
	names := func(u *servertest.User, query string) string {
		t.Helper()
		var list struct{ Items []struct{ Name string } }
		u.Do("GET", "/v1/integrations"+query, nil).Expect(http.StatusOK).Decode(&list)
		var out []string
		for _, it := range list.Items {
			out = append(out, it.Name)
		}
		if !strings.Contains(query, "limit") {
			slices.Sort(out) // created at the same (test clock) instant: in id order
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		u           *servertest.User
		query, want string
	}{
		{alice, "", "slack"},
		{carol, "", "carol-private,slack"},
		{carol, "?search=SLA", "slack"},
		{carol, "?category=collaboration", "slack"},
		{carol, "?category=content", "carol-private"},
		{carol, "?blocks=true", "slack"},
		{carol, "?blocks=false", "carol-private"},
		{carol, "?blockDomain=app.slack.com", "slack"},
		{carol, "?blockDomain=example.com", ""},
		{carol, "?contentSources=true", "carol-private"},
		{carol, "?owner=" + carolOrg, "carol-private"},
		{carol, "?scope=space:content:read", "slack"},
		{carol, "?target=space", "carol-private"},
		{carol, "?search=tool", "carol-private"},
	} {
		if got := names(c.u, c.query); got != c.want {
			t.Errorf("list%s: %q, want %q", c.query, got, c.want)
		}
	}
	// Unlisted: found by name, not listed (but to its organization).
	carol.Do("POST", "/v1/integrations/carol-unlisted", publishBody(carolOrg, map[string]any{"visibility": "unlisted", "title": "Hidden"})).Expect(http.StatusOK)
	alice.Do("GET", "/v1/integrations/carol-unlisted", nil).Expect(http.StatusOK)
	if got := names(alice, "?search=hidden"); got != "" {
		t.Errorf("an unlisted integration is listed: %q", got)
	}
	if got := names(carol, "?search=hidden"); got != "carol-unlisted" {
		t.Errorf("its organization's list: %q", got)
	}
	carol.Do("DELETE", "/v1/integrations/carol-unlisted", nil).Expect(http.StatusResetContent)
	// Pages: one at a time, each integration once.
	var seen []string
	for page := ""; ; {
		res := carol.Do("GET", "/v1/integrations?limit=1"+page, nil).Expect(http.StatusOK).JSON()
		for _, it := range res["items"].([]any) {
			seen = append(seen, it.(map[string]any)["name"].(string))
		}
		next, ok := res["next"].(map[string]any)
		if !ok {
			break
		}
		page = "&page=" + next["page"].(string)
	}
	if slices.Sort(seen); strings.Join(seen, ",") != "carol-private,slack" {
		t.Errorf("pages: %v", seen)
	}
	for _, q := range []string{"?category=games", "?blocks=maybe", "?blockDomain=a%20b", "?limit=5000", "?target=moon"} {
		alice.Do("GET", "/v1/integrations"+q, nil).Expect(http.StatusBadRequest).ErrorMessage()
	}

	// Unpublish: its organization's admins; 204 when there is none.
	bob.Do("DELETE", "/v1/integrations/slack", nil).Expect(http.StatusForbidden)
	alice.Do("DELETE", "/v1/integrations/slack", nil).Expect(http.StatusResetContent)
	alice.Do("GET", "/v1/integrations/slack", nil).Expect(http.StatusNotFound)
	alice.Do("DELETE", "/v1/integrations/slack", nil).Expect(http.StatusNoContent)
}

// installFixture is an integration published by a vendor and installed by
// a customer with a space and a site.
type installFixture struct {
	env                    *servertest.Env
	vendor, admin, reader  *servertest.User
	org, space, site, inst string
	base                   string // /v1/integrations/{name}
	vendorOrg              string
}

func newInstallFixture(t *testing.T) *installFixture {
	t.Helper()
	env := servertest.New(t)
	f := &installFixture{env: env, vendor: env.NewUser("Vendor"), admin: env.NewUser("Admin"), reader: env.NewUser("Reader")}
	f.vendorOrg = f.vendor.NewOrg("Vendor Inc")
	f.vendor.Do("POST", "/v1/integrations/notifier", publishBody(f.vendorOrg, map[string]any{"secrets": map[string]string{"K": theSecret}})).Expect(http.StatusOK)
	f.base = "/v1/integrations/notifier"
	f.org = f.admin.NewOrg("Customer")
	f.reader.Join(f.org, store.RoleRead)
	f.space = f.admin.Do("POST", "/v1/orgs/"+f.org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	f.site = f.admin.Do("POST", "/v1/orgs/"+f.org+"/sites", `{"title":"Help"}`).Expect(http.StatusCreated).String("id")
	f.inst = f.admin.Do("POST", f.base+"/installations", map[string]any{"organization": f.org}).Expect(http.StatusCreated).String("id")
	return f
}

// events lists the integration's events as u: type → payloads, newest first.
func (f *installFixture) events(t *testing.T, u *servertest.User) map[string][]map[string]any {
	t.Helper()
	var list struct {
		Items []struct {
			ID, IntegrationID, InstallationID, Status string
			Payload                                   map[string]any
		}
	}
	u.Do("GET", f.base+"/events?limit=1000", nil).Expect(http.StatusOK).Decode(&list)
	out := map[string][]map[string]any{}
	for _, e := range list.Items {
		e.Payload["_id"] = e.ID
		out[e.Payload["type"].(string)] = append(out[e.Payload["type"].(string)], e.Payload)
	}
	return out
}

func TestIntegrationInstallations(t *testing.T) {
	t.Parallel()
	f := newInstallFixture(t)
	inst := f.admin.Do("GET", f.base+"/installations/"+f.inst, nil).Expect(http.StatusOK).JSON()
	if inst["status"] != "active" || inst["target"].(map[string]any)["organization"] != f.org || inst["spaces"] != 0.0 ||
		!strings.HasSuffix(inst["urls"].(map[string]any)["location"].(string), f.base+"/installations/"+f.inst) {
		t.Fatalf("installation: %v", inst)
	}
	// Installing again answers the same installation.
	if again := f.admin.Do("POST", f.base+"/installations", map[string]any{"organization": f.org}).Expect(http.StatusCreated).String("id"); again != f.inst {
		t.Errorf("second install: %s, want %s", again, f.inst)
	}
	f.reader.Do("POST", f.base+"/installations", map[string]any{"organization": f.org}).Expect(http.StatusForbidden)
	f.admin.Do("POST", "/v1/integrations/nope/installations", map[string]any{"organization": f.org}).Expect(http.StatusNotFound)
	f.admin.Do("POST", f.base+"/installations", `{}`).Expect(http.StatusBadRequest)
	f.admin.Do("POST", f.base+"/installations", map[string]any{"organization": "nowhere"}).Expect(http.StatusNotFound)

	// Update the configuration and external ids; filter on them.
	f.admin.Do("PATCH", f.base+"/installations/"+f.inst, `{"configuration":{"channel":"#docs"},"externalIds":["team-1"],"space_selection":"selected"}`).Expect(http.StatusOK)
	f.admin.Do("PATCH", f.base+"/installations/"+f.inst, `{"externalIds":["1","2","3","4","5","6"]}`).Expect(http.StatusBadRequest)
	f.admin.Do("PATCH", f.base+"/installations/"+f.inst, `{"space_selection":"some"}`).Expect(http.StatusBadRequest)
	for q, want := range map[string]float64{"": 1, "?externalId=team-1": 1, "?externalId=team-2": 0} {
		if n := f.admin.Do("GET", f.base+"/installations"+q, nil).Expect(http.StatusOK).JSON()["count"]; n != want {
			t.Errorf("installations%s: %v, want %v", q, n, want)
		}
	}
	// The vendor (who published it) does not see its customers' installations.
	if n := f.vendor.Do("GET", f.base+"/installations", nil).Expect(http.StatusOK).JSON()["count"]; n != 0.0 {
		t.Errorf("the vendor lists %v installations of another organization", n)
	}
	f.vendor.Do("GET", f.base+"/installations/"+f.inst, nil).Expect(http.StatusNotFound)

	// Space and site installations.
	sp := f.admin.Do("POST", f.base+"/installations/"+f.inst+"/spaces", map[string]any{"space": f.space}).Expect(http.StatusCreated).JSON()
	if sp["space"] != f.space || sp["integration"] != "notifier" || sp["installation"] != f.inst || sp["status"] != "active" {
		t.Fatalf("space installation: %v", sp)
	}
	f.admin.Do("POST", f.base+"/installations/"+f.inst+"/sites", map[string]any{"site": f.site}).Expect(http.StatusCreated)
	f.admin.Do("PATCH", f.base+"/installations/"+f.inst+"/spaces/"+f.space, `{"configuration":{"page":"home"},"externalIds":["sp-1"]}`).Expect(http.StatusOK)
	f.admin.Do("PATCH", f.base+"/installations/"+f.inst+"/sites/"+f.site, `{"configuration":{"theme":"dark"}}`).Expect(http.StatusOK)
	got := f.admin.Do("GET", f.base+"/installations/"+f.inst+"/spaces/"+f.space, nil).Expect(http.StatusOK).JSON()
	if got["configuration"].(map[string]any)["page"] != "home" || got["externalIds"].([]any)[0] != "sp-1" {
		t.Errorf("space installation after update: %v", got)
	}
	ext := f.admin.Do("GET", f.base+"/installations/"+f.inst+"/spaces/"+f.space+"?extended=true", nil).Expect(http.StatusOK).JSON()
	if s, ok := ext["space"].(map[string]any); !ok || s["id"] != f.space || s["object"] != "space" {
		t.Errorf("extended space installation: %v", ext)
	}
	if n := f.admin.Do("GET", f.base+"/installations/"+f.inst, nil).Expect(http.StatusOK).JSON()["spaces"]; n != 1.0 {
		t.Errorf("spaces of the installation: %v", n)
	}
	list := f.admin.Do("GET", f.base+"/spaces", nil).Expect(http.StatusOK).JSON()
	if list["count"] != 1.0 || list["items"].([]any)[0].(map[string]any)["space"] != f.space {
		t.Errorf("INT/spaces: %v", list)
	}
	list = f.admin.Do("GET", f.base+"/spaces?extended=true&externalId=sp-1", nil).Expect(http.StatusOK).JSON()
	if list["count"] != 1.0 || list["items"].([]any)[0].(map[string]any)["space"].(map[string]any)["title"] != "Docs" {
		t.Errorf("INT/spaces extended: %v", list)
	}
	f.admin.Do("GET", f.base+"/spaces?extended=maybe", nil).Expect(http.StatusBadRequest).ErrorMessage()
	if n := f.admin.Do("GET", f.base+"/spaces?externalId=other", nil).Expect(http.StatusOK).JSON()["count"]; n != 0.0 {
		t.Errorf("INT/spaces by another external id: %v", n)
	}
	sites := f.admin.Do("GET", f.base+"/sites?extended=true", nil).Expect(http.StatusOK).JSON()
	if sites["count"] != 1.0 || sites["items"].([]any)[0].(map[string]any)["site"].(map[string]any)["id"] != f.site {
		t.Errorf("INT/sites extended: %v", sites)
	}
	if n := f.admin.Do("GET", f.base+"/installations/"+f.inst+"/sites", nil).Expect(http.StatusOK).JSON()["count"]; n != 1.0 {
		t.Errorf("the installation's sites: %v", n)
	}
	// The vendor sees none of them.
	for _, p := range []string{"/spaces", "/sites", "/events"} {
		if n := f.vendor.Do("GET", f.base+p, nil).Expect(http.StatusOK).JSON()["count"]; n != 0.0 {
			t.Errorf("the vendor's %s: %v", p, n)
		}
	}
	// Another customer of the same (public) integration sees only its own
	// installation, and cannot reach the first customer's.
	eve := f.env.NewUser("Eve")
	eveOrg := eve.NewOrg("Eve Corp")
	eveInst := eve.Do("POST", f.base+"/installations", map[string]any{"organization": eveOrg}).Expect(http.StatusCreated).String("id")
	var eveList struct{ Items []struct{ ID string } }
	eve.Do("GET", f.base+"/installations", nil).Expect(http.StatusOK).Decode(&eveList)
	if len(eveList.Items) != 1 || eveList.Items[0].ID != eveInst {
		t.Errorf("another customer's installations: %+v", eveList)
	}
	eve.Do("POST", f.base+"/installations", map[string]any{"organization": f.org}).Expect(http.StatusNotFound)
	eve.Do("GET", f.base+"/installations/"+f.inst, nil).Expect(http.StatusNotFound)
	eve.Do("PATCH", f.base+"/installations/"+f.inst, `{"configuration":{}}`).Expect(http.StatusNotFound)
	eve.Do("DELETE", f.base+"/installations/"+f.inst, nil).Expect(http.StatusNotFound)
	eve.Do("GET", f.base+"/installations/"+f.inst+"/spaces/"+f.space, nil).Expect(http.StatusNotFound)
	eve.Do("POST", f.base+"/installations/"+eveInst+"/spaces", map[string]any{"space": f.space}).Expect(http.StatusNotFound)
	eve.Do("POST", f.base+"/installations/"+eveInst+"/sites", map[string]any{"site": f.site}).Expect(http.StatusNotFound)
	for _, p := range []string{"/spaces", "/sites", "/events"} {
		if body := eve.Do("GET", f.base+p, nil).Expect(http.StatusOK).Body; bytes.Contains(body, []byte(f.space)) || bytes.Contains(body, []byte(f.inst)) {
			t.Errorf("another customer's %s: %s", p, body)
		}
	}
	// Another organization's space cannot be installed on.
	otherSpace := f.vendor.Do("POST", "/v1/orgs/"+f.vendorOrg+"/spaces", `{"title":"Theirs"}`).Expect(http.StatusCreated).String("id")
	f.admin.Do("POST", f.base+"/installations/"+f.inst+"/spaces", map[string]any{"space": otherSpace}).Expect(http.StatusNotFound)
	f.admin.Do("POST", f.base+"/installations/"+f.inst+"/spaces", map[string]any{"space": []string{f.space}}).Expect(http.StatusBadRequest)
	f.admin.Do("GET", f.base+"/installations/"+f.inst+"/spaces/"+otherSpace, nil).Expect(http.StatusNotFound)
	f.admin.Do("GET", f.base+"/installations/nope", nil).Expect(http.StatusNotFound)
	f.admin.Do("GET", f.base+"/installations/"+f.inst+"/sites/nope", nil).Expect(http.StatusNotFound)
	f.admin.Do("PATCH", f.base+"/installations/"+f.inst+"/spaces/nope", `{"configuration":{}}`).Expect(http.StatusNotFound)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/spaces", `{}`},
		{"POST", "/sites", `{"site":null}`},
		{"PATCH", "/spaces/" + f.space, `{"configuration":"on"}`},
		{"PATCH", "/spaces/" + f.space, `{"externalIds":["1","2","3","4","5","6"]}`},
		{"PATCH", "/sites/" + f.site, `{"externalIds":"x"}`},
		{"PATCH", "", `{"status":"paused"}`},
	} {
		f.admin.Do(c.method, f.base+"/installations/"+f.inst+c.path, c.body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	// An integration for sites only cannot be installed on a space.
	f.vendor.Do("POST", "/v1/integrations/site-widget", publishBody(f.vendorOrg, map[string]any{"target": "site"})).Expect(http.StatusOK)
	widget := f.admin.Do("POST", "/v1/integrations/site-widget/installations", map[string]any{"organization": f.org}).Expect(http.StatusCreated).String("id")
	f.admin.Do("POST", "/v1/integrations/site-widget/installations/"+widget+"/spaces", map[string]any{"space": f.space}).Expect(http.StatusBadRequest).ErrorMessage()
	f.admin.Do("POST", "/v1/integrations/site-widget/installations/"+widget+"/sites", map[string]any{"site": f.site}).Expect(http.StatusCreated)
	// An installation is reached through its own integration only.
	f.admin.Do("GET", "/v1/integrations/site-widget/installations/"+f.inst, nil).Expect(http.StatusNotFound)

	// Events: one per change, with the reference's payloads.
	ev := f.events(t, f.admin)
	setups := ev["installation_setup"]
	if len(setups) != 2 {
		t.Fatalf("installation_setup events: %v", ev)
	}
	update, install := setups[0], setups[1]
	if install["installationId"] != f.inst || install["status"] != "active" || install["previous"].(map[string]any)["status"] != "pending" {
		t.Errorf("install event: %v", install)
	}
	prev := update["previous"].(map[string]any)
	if update["status"] != "active" || prev["status"] != "active" || len(prev["configuration"].(map[string]any)) != 0 || update["eventId"] == nil {
		t.Errorf("update event: %v", update)
	}
	spaceSetups := ev["space_installation_setup"]
	if len(spaceSetups) != 2 || spaceSetups[0]["spaceId"] != f.space || spaceSetups[0]["previous"].(map[string]any)["configuration"] == nil {
		t.Errorf("space_installation_setup events: %v", spaceSetups)
	}
	if len(ev["site_installation_setup"]) != 2 {
		t.Errorf("site_installation_setup events: %v", ev["site_installation_setup"])
	}
	// An event with its trace: recorded, not delivered (no delivery target).
	detail := f.admin.Do("GET", f.base+"/events/"+install["_id"].(string), nil).Expect(http.StatusOK).JSON()
	logs := detail["trace"].(map[string]any)["logs"].([]any)
	if event := detail["event"].(map[string]any); event["deliveryStatus"] != "pending" || event["status"] != "success" || len(logs) != 1 ||
		!strings.Contains(logs[0].(map[string]any)["message"].(string), "no delivery target") {
		t.Errorf("event detail: %v", detail)
	}
	// No read of the integration shows its secrets.
	for _, p := range []string{"", "/installations", "/installations/" + f.inst, "/installations/" + f.inst + "/spaces?extended=true",
		"/installations/" + f.inst + "/sites?extended=true", "/installations/" + f.inst + "/spaces/" + f.space + "?extended=true",
		"/installations/" + f.inst + "/sites/" + f.site, "/spaces?extended=true", "/sites?extended=true", "/events",
		"/events/" + install["_id"].(string)} {
		for _, u := range []*servertest.User{f.admin, f.vendor} {
			if res := u.Do("GET", f.base+p, nil); bytes.Contains(res.Body, []byte(theSecret)) || bytes.Contains(res.Body, []byte(`"secrets"`)) {
				t.Errorf("GET %s shows the secrets: %s", p, res.Body)
			}
		}
	}
	f.vendor.Do("GET", f.base+"/events/"+install["_id"].(string), nil).Expect(http.StatusNotFound)
	f.admin.Do("GET", f.base+"/events/nope", nil).Expect(http.StatusNotFound)

	// Uninstall from the space and the site, then from the organization.
	f.admin.Do("DELETE", f.base+"/installations/"+f.inst+"/spaces/"+f.space, nil).Expect(http.StatusResetContent)
	f.admin.Do("DELETE", f.base+"/installations/"+f.inst+"/spaces/"+f.space, nil).Expect(http.StatusNoContent)
	f.admin.Do("GET", f.base+"/installations/"+f.inst+"/spaces/"+f.space, nil).Expect(http.StatusNotFound)
	f.admin.Do("DELETE", f.base+"/installations/"+f.inst+"/sites/"+f.site, nil).Expect(http.StatusResetContent)
	f.reader.Do("DELETE", f.base+"/installations/"+f.inst, nil).Expect(http.StatusForbidden)
	f.admin.Do("DELETE", f.base+"/installations/"+f.inst, nil).Expect(http.StatusResetContent)
	f.admin.Do("DELETE", f.base+"/installations/"+f.inst, nil).Expect(http.StatusNoContent)
	f.admin.Do("GET", f.base+"/installations/"+f.inst, nil).Expect(http.StatusNotFound)
	ev = f.events(t, f.admin)
	if d := ev["space_installation_deleted"]; len(d) != 1 || d[0]["previous"].(map[string]any)["configuration"].(map[string]any)["page"] != "home" {
		t.Errorf("space_installation_deleted: %v", d)
	}
	if d := ev["installation_deleted"]; len(d) != 1 || d[0]["installationId"] != f.inst ||
		d[0]["previous"].(map[string]any)["configuration"].(map[string]any)["channel"] != "#docs" {
		t.Errorf("installation_deleted: %v", d)
	}
	if len(ev["site_installation_deleted"]) != 1 {
		t.Errorf("site_installation_deleted: %v", ev["site_installation_deleted"])
	}
	if bytes.Contains(f.admin.Do("GET", f.base+"/events", nil).Body, []byte(theSecret)) {
		t.Error("an event shows the integration's secrets")
	}
}

// Unpublishing an integration removes its installations, on spaces too.
func TestUnpublishRemovesInstallations(t *testing.T) {
	t.Parallel()
	f := newInstallFixture(t)
	f.admin.Do("POST", f.base+"/installations/"+f.inst+"/spaces", map[string]any{"space": f.space}).Expect(http.StatusCreated)
	f.vendor.Do("DELETE", f.base, nil).Expect(http.StatusResetContent)
	for _, table := range []string{"integration_installations", "integration_space_installations", "integration_events"} {
		n, err := f.env.DB.NewSelect().Table(table).Count(context.Background())
		if err != nil || n != 0 {
			t.Errorf("%s after unpublishing: %d rows (%v)", table, n, err)
		}
	}
	// Published again, it starts with no installation.
	f.vendor.Do("POST", f.base, publishBody(f.vendorOrg, nil)).Expect(http.StatusOK)
	if n := f.admin.Do("GET", f.base+"/installations", nil).Expect(http.StatusOK).JSON()["count"]; n != 0.0 {
		t.Errorf("installations after republishing: %v", n)
	}
	f.admin.Do("GET", f.base+"/installations/"+f.inst, nil).Expect(http.StatusNotFound)
}

// A merge into a space records space_content_updated for the integrations
// installed on it, and not for others.
func TestSpaceContentUpdatedEvent(t *testing.T) {
	t.Parallel()
	f := newInstallFixture(t)
	f.admin.Do("POST", f.base+"/installations/"+f.inst+"/spaces", map[string]any{"space": f.space}).Expect(http.StatusCreated)
	other := f.admin.Do("POST", "/v1/orgs/"+f.org+"/spaces", `{"title":"Other"}`).Expect(http.StatusCreated).String("id")

	page, _, _ := createPage(t, f.admin, f.space, "Intro", "# Hello")
	cr := openChangeRequest(t, f.admin, f.space, "Edit", page)
	merged := f.admin.Do("POST", "/v1/spaces/"+f.space+"/change-requests/"+cr+"/merge", nil).Expect(http.StatusOK).String("revision")
	otherPage, _, _ := createPage(t, f.admin, other, "Elsewhere", "# Hi")
	otherCR := openChangeRequest(t, f.admin, other, "Edit", otherPage)
	f.admin.Do("POST", "/v1/spaces/"+other+"/change-requests/"+otherCR+"/merge", nil).Expect(http.StatusOK)

	updates := f.events(t, f.admin)["space_content_updated"]
	if len(updates) != 1 || updates[0]["spaceId"] != f.space || updates[0]["revisionId"] != merged || updates[0]["installationId"] != f.inst {
		t.Fatalf("space_content_updated: %v", updates)
	}
	// The event says who made the change.
	var actors []string
	if err := f.env.DB.NewRaw("SELECT DISTINCT actor_id FROM events WHERE type = 'space_content_updated'").Scan(context.Background(), &actors); err != nil ||
		len(actors) != 1 || actors[0] != f.admin.ID {
		t.Errorf("actors of the merges: %v %v", actors, err)
	}
	// With every space selected, the other space's merges reach it too.
	f.admin.Do("PATCH", f.base+"/installations/"+f.inst, `{"space_selection":"all"}`).Expect(http.StatusOK)
	otherCR = openChangeRequest(t, f.admin, other, "Again", otherPage)
	f.admin.Do("POST", "/v1/spaces/"+other+"/change-requests/"+otherCR+"/merge", nil).Expect(http.StatusOK)
	if updates = f.events(t, f.admin)["space_content_updated"]; len(updates) != 2 || updates[0]["spaceId"] != other {
		t.Errorf("space_content_updated with all spaces: %v", updates)
	}
	// A git import into the space is a content update too.
	repo := bareRepo(t)
	pushFiles(t, repo, map[string]string{"README.md": "# Imported\n", "SUMMARY.md": "* [Imported](README.md)\n"})
	f.admin.Do("POST", "/v1/spaces/"+f.space+"/git/import", map[string]any{"url": repo, "ref": "refs/heads/main"}).Expect(http.StatusNoContent)
	imported := f.admin.Do("GET", "/v1/spaces/"+f.space+"/content", nil).Expect(http.StatusOK).String("id")
	if updates = f.events(t, f.admin)["space_content_updated"]; len(updates) != 3 || updates[0]["spaceId"] != f.space || updates[0]["revisionId"] != imported {
		t.Errorf("space_content_updated after an import: %v", updates)
	}
	// A deleted space leaves the lists (and comes back with the space).
	f.admin.Do("DELETE", "/v1/spaces/"+f.space, nil).Expect(http.StatusNoContent)
	if n := f.admin.Do("GET", f.base+"/spaces?extended=true", nil).Expect(http.StatusOK).JSON()["count"]; n != 0.0 {
		t.Errorf("space installations with the space deleted: %v", n)
	}
	f.admin.Do("GET", f.base+"/installations/"+f.inst+"/spaces/"+f.space, nil).Expect(http.StatusNotFound)
	f.admin.Do("POST", "/v1/spaces/"+f.space+"/restore", nil).Expect(http.StatusOK)
	if n := f.admin.Do("GET", f.base+"/spaces?extended=true", nil).Expect(http.StatusOK).JSON()["count"]; n != 1.0 {
		t.Errorf("space installations with the space restored: %v", n)
	}
	// A space transferred to another organization leaves them too.
	dest := f.admin.NewOrg("Elsewhere")
	f.admin.Do("POST", "/v1/spaces/"+f.space+"/transfer", map[string]any{"organization": dest}).Expect(http.StatusOK)
	if n := f.admin.Do("GET", f.base+"/spaces?extended=true", nil).Expect(http.StatusOK).JSON()["count"]; n != 0.0 {
		t.Errorf("space installations with the space transferred: %v", n)
	}
	// The integration's vendor does not see the customer's events.
	if n := f.vendor.Do("GET", f.base+"/events", nil).Expect(http.StatusOK).JSON()["count"]; n != 0.0 {
		t.Errorf("the vendor sees %v events", n)
	}
}

// The same operations over GraphQL.
func TestIntegrationGraphQL(t *testing.T) {
	t.Parallel()
	f := newInstallFixture(t)
	out := f.admin.GraphQL(`query($n: String!) { integration(name: $n) { name version permissions { admin }
		installations { count items { id spaceInstallations { count } } } events { count items { payload status } } } }`,
		map[string]any{"n": "notifier"})
	if len(out.Errors) > 0 || !strings.Contains(string(out.Data), f.inst) || !strings.Contains(string(out.Data), `"installation_setup"`) {
		t.Fatalf("GraphQL: %s %+v", out.Data, out.Errors)
	}
	out = f.admin.GraphQL(`mutation($n: String!, $i: ID!, $s: ID!) { installIntegrationOnSpace(name: $n, installationId: $i, input: {space: $s}) { spaceId space { title } } }`,
		map[string]any{"n": "notifier", "i": f.inst, "s": f.space})
	if len(out.Errors) > 0 || !strings.Contains(string(out.Data), `"Docs"`) {
		t.Fatalf("installIntegrationOnSpace: %s %+v", out.Data, out.Errors)
	}
}

// Changing a space's visibility records space_visibility_updated for the
// integrations installed on it; in-collection needs a collection, and then
// means "whoever can read the collection".
func TestSpaceVisibilityUpdatedEvent(t *testing.T) {
	t.Parallel()
	f := newInstallFixture(t)
	f.admin.Do("POST", f.base+"/installations/"+f.inst+"/spaces", map[string]any{"space": f.space}).Expect(http.StatusCreated)
	base := "/v1/spaces/" + f.space

	f.admin.Do("PATCH", base, `{"visibility":"in-collection"}`).Expect(http.StatusBadRequest)
	f.admin.Do("PATCH", base, `{"visibility":"everyone"}`).Expect(http.StatusBadRequest)
	f.reader.Do("PATCH", base, `{"visibility":"public"}`).Expect(http.StatusForbidden)
	if got := f.events(t, f.admin)["space_visibility_updated"]; len(got) != 0 {
		t.Fatalf("refused changes recorded events: %v", got)
	}

	before := f.admin.Do("GET", base, nil).Expect(http.StatusOK).String("visibility")
	if got := f.admin.Do("PATCH", base, `{"visibility":"unlisted"}`).Expect(http.StatusOK).String("visibility"); got != "unlisted" {
		t.Fatalf("visibility after the change: %q", got)
	}
	f.admin.Do("PATCH", base, `{"visibility":"unlisted"}`).Expect(http.StatusOK) // no change, no event
	got := f.events(t, f.admin)["space_visibility_updated"]
	if len(got) != 1 || got[0]["spaceId"] != f.space || got[0]["previousVisibility"] != before || got[0]["visibility"] != "unlisted" {
		t.Fatalf("space_visibility_updated: %v", got)
	}

	// In a collection, in-collection is accepted.
	collection := f.admin.Do("POST", "/v1/orgs/"+f.org+"/collections", `{"title":"Handbooks"}`).Expect(http.StatusCreated).String("id")
	f.admin.Do("POST", base+"/move", map[string]any{"parent": collection}).Expect(http.StatusOK)
	f.admin.Do("PATCH", base, `{"visibility":"in-collection"}`).Expect(http.StatusOK)
	if got := f.events(t, f.admin)["space_visibility_updated"]; len(got) != 2 || got[0]["visibility"] != "in-collection" {
		t.Errorf("space_visibility_updated into the collection: %v", got)
	}
	f.reader.Do("GET", base, nil).Expect(http.StatusOK)
}
