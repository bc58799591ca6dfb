package wholeserver_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// siteSecret is a share link's key and a site's private key: 256 random
// bits, base64url unpadded (store.NewSecret).
var siteSecret = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// shareLinkFixture is a published share-link site, with its organization's
// admin, a member who manages sites (create), an editor, a reader and a
// stranger.
type shareLinkFixture struct {
	*siteFixture
	creator, editor, reader, stranger *servertest.User
	siteID                            string
	// base is the site's published address; seedKey its own share key.
	base, seedKey string
}

func newShareLinkFixture(t *testing.T, opts ...servertest.Options) *shareLinkFixture {
	t.Helper()
	f := &shareLinkFixture{siteFixture: newSiteFixture(t, 1, opts...)}
	f.creator, f.editor, f.reader, f.stranger = f.env.NewUser("Creator"), f.env.NewUser("Editor"), f.env.NewUser("Reader"), f.env.NewUser("Stranger")
	f.creator.Join(f.org, store.RoleCreate)
	f.editor.Join(f.org, store.RoleEdit)
	f.reader.Join(f.org, store.RoleRead)
	f.stranger.NewOrg("Elsewhere")
	f.siteID = f.site(map[string]any{"title": "Docs", "spaces": f.spaces})
	published := f.admin.Do("POST", f.path(f.siteID, "/publish"), nil).Expect(http.StatusOK).JSON()
	f.base = published["urls"].(map[string]any)["published"].(string)
	f.admin.Do("PATCH", f.path(f.siteID), `{"visibility":"share-link"}`).Expect(http.StatusOK)
	var key struct{ Site struct{ ShareKey string } }
	gql(t, f.admin, `query($o: ID!, $s: ID!) { site(organizationId: $o, id: $s) { shareKey } }`,
		map[string]any{"o": f.org, "s": f.siteID}, &key)
	f.seedKey = key.Site.ShareKey
	return f
}

func (f *shareLinkFixture) links() string { return f.path(f.siteID, "/share-links") }
func (f *shareLinkFixture) link(id string) string {
	return f.path(f.siteID, "/share-links/", id)
}
func (f *shareLinkFixture) auth() string { return f.path(f.siteID, "/publishing/auth") }

// shareLink is a share link as REST answers it.
type shareLink struct {
	Object, ID, Name, CreatedAt string
	Active                      bool
	URLs                        struct{ Location, Published string } `json:"urls"`
}

func decodeShareLink(t *testing.T, res *servertest.Response) shareLink {
	t.Helper()
	var l shareLink
	res.Decode(&l)
	return l
}

// keyOf is the key a share link's published address carries.
func (f *shareLinkFixture) keyOf(t *testing.T, l shareLink) string {
	t.Helper()
	key, ok := strings.CutPrefix(l.URLs.Published, f.base+"?share=")
	if !ok || !siteSecret.MatchString(key) {
		t.Fatalf("share link %s's published address %q is not %s?share=<key>", l.ID, l.URLs.Published, f.base)
	}
	return key
}

// publishingAuth is a site's visitor authentication settings as REST
// answers them.
type publishingAuth struct {
	Object, Backend, PrivateKey string
	FallbackURL                 *string `json:"fallbackURL"`
}

func decodeAuth(t *testing.T, res *servertest.Response) publishingAuth {
	t.Helper()
	var a publishingAuth
	res.Decode(&a)
	if a.Object != "publishing-auth" || a.Backend != "custom" || !siteSecret.MatchString(a.PrivateKey) {
		t.Fatalf("publishing auth: %s", res.Body)
	}
	return a
}

func TestSiteShareLinks(t *testing.T) {
	t.Parallel()
	f := newShareLinkFixture(t)
	f.admin.Do("GET", f.links(), nil).Expect(http.StatusOK).JSON()

	// A link is made with a fresh key of its own, its address the site's
	// with that key; a member who manages sites makes them as admins do.
	res := f.creator.Do("POST", f.links(), `{"name":"Partners"}`).Expect(http.StatusCreated)
	first := decodeShareLink(t, res)
	if first.Object != "share-link" || first.Name != "Partners" || !first.Active || first.CreatedAt == "" || first.ID == "" {
		t.Errorf("created: %s", res.Body)
	}
	if loc := res.Header.Get("Location"); loc != f.env.URL+f.link(first.ID) || first.URLs.Location != loc {
		t.Errorf("Location %q, urls.location %q", loc, first.URLs.Location)
	}
	firstKey := f.keyOf(t, first)
	if firstKey == first.ID || firstKey == f.seedKey {
		t.Errorf("the link's key %q is its id or the site's own key", firstKey)
	}
	f.env.Clock.Advance(time.Second)
	second := decodeShareLink(t, f.admin.Do("POST", f.links(), `{"name":""}`).Expect(http.StatusCreated))
	f.env.Clock.Advance(time.Second)
	third := decodeShareLink(t, f.admin.Do("POST", f.links(), map[string]any{"name": strings.Repeat("é", 50)}).Expect(http.StatusCreated))
	keys := map[string]bool{firstKey: true, f.keyOf(t, second): true, f.keyOf(t, third): true}
	if len(keys) != 3 {
		t.Errorf("three links, %d keys", len(keys))
	}

	// Listed oldest first, page by page.
	var page struct {
		Items []shareLink
		Count int
		Next  *struct{ Page string }
	}
	f.admin.Do("GET", f.links()+"?limit=2", nil).Expect(http.StatusOK).Decode(&page)
	if len(page.Items) != 2 || page.Count != 2 || page.Items[0].ID != first.ID || page.Items[1].ID != second.ID || page.Next == nil {
		t.Fatalf("first page: %+v", page)
	}
	next := page.Next.Page
	page.Next = nil
	f.admin.Do("GET", f.links()+"?limit=2&page="+next, nil).Expect(http.StatusOK).Decode(&page)
	if len(page.Items) != 1 || page.Items[0].ID != third.ID || page.Next != nil || f.keyOf(t, page.Items[0]) != f.keyOf(t, third) {
		t.Errorf("second page: %+v", page)
	}

	// A rename keeps the rest; turning a link off keeps its name and key.
	renamed := decodeShareLink(t, f.creator.Do("PATCH", f.link(first.ID), `{"name":"Agency"}`).Expect(http.StatusOK))
	if renamed.Name != "Agency" || !renamed.Active || renamed.URLs.Published != first.URLs.Published || renamed.CreatedAt != first.CreatedAt {
		t.Errorf("renamed: %+v", renamed)
	}
	off := decodeShareLink(t, f.admin.Do("PATCH", f.link(first.ID), `{"active":false}`).Expect(http.StatusOK))
	if off.Name != "Agency" || off.Active || off.URLs.Published != first.URLs.Published {
		t.Errorf("turned off: %+v", off)
	}
	both := decodeShareLink(t, f.admin.Do("PATCH", f.link(first.ID), `{"active":true,"name":"Back"}`).Expect(http.StatusOK))
	if both.Name != "Back" || !both.Active {
		t.Errorf("turned on and renamed: %+v", both)
	}

	// Links of another site, or of none, are not found.
	other := f.site(map[string]any{"title": "Other"})
	for _, path := range []string{f.link("nope"), f.path(other, "/share-links/", first.ID), f.path("nope", "/share-links/", first.ID)} {
		f.admin.Do("PATCH", path, `{"name":"Lost"}`).Expect(http.StatusNotFound).ErrorMessage()
		f.admin.Do("DELETE", path, nil).Expect(http.StatusNoContent)
	}
	f.admin.Do("GET", f.path("nope", "/share-links"), nil).Expect(http.StatusNotFound)
	f.admin.Do("POST", f.path("nope", "/share-links"), `{"name":"Lost"}`).Expect(http.StatusNotFound)
	var otherLinks struct{ Items []shareLink }
	f.admin.Do("GET", f.path(other, "/share-links"), nil).Expect(http.StatusOK).Decode(&otherLinks)
	if len(otherLinks.Items) != 0 {
		t.Errorf("another site lists %d links", len(otherLinks.Items))
	}

	// Deleting answers 205, then 204 as there is none.
	f.creator.Do("DELETE", f.link(second.ID), nil).Expect(http.StatusResetContent)
	f.creator.Do("DELETE", f.link(second.ID), nil).Expect(http.StatusNoContent)
	page.Items = nil
	f.admin.Do("GET", f.links(), nil).Expect(http.StatusOK).Decode(&page)
	if len(page.Items) != 2 || page.Items[0].ID != first.ID || page.Items[1].ID != third.ID {
		t.Errorf("after the deletion: %+v", page)
	}

	// The site's own share key makes its address as before, on the same
	// base.
	with := f.admin.Do("GET", f.path(f.siteID, "/published?shareKey="+f.seedKey), nil).Expect(http.StatusOK).JSON()
	if u := with["site"].(map[string]any)["urls"].(map[string]any)["published"]; u != f.base+"?share="+f.seedKey {
		t.Errorf("the site's address with its own key: %v", u)
	}

	// An unpublished site's links have no published address.
	f.admin.Do("POST", f.path(f.siteID, "/unpublish"), nil).Expect(http.StatusOK)
	var unpublished struct {
		Items []struct{ URLs map[string]any }
	}
	f.admin.Do("GET", f.links(), nil).Expect(http.StatusOK).Decode(&unpublished)
	for _, l := range unpublished.Items {
		if _, ok := l.URLs["published"]; ok || l.URLs["location"] == nil {
			t.Errorf("a link of an unpublished site: %v", l.URLs)
		}
	}

	// Deleting the site takes its links along.
	f.admin.Do("DELETE", f.path(f.siteID), nil).Expect(http.StatusNoContent)
	f.admin.Do("GET", f.links(), nil).Expect(http.StatusNotFound)
}

func TestSitePublishingAuth(t *testing.T) {
	t.Parallel()
	f := newShareLinkFixture(t)

	// Every site has its settings from its creation, with a key of its own.
	initial := decodeAuth(t, f.admin.Do("GET", f.auth(), nil).Expect(http.StatusOK))
	if initial.FallbackURL != nil {
		t.Errorf("a new site's fallback URL: %v", *initial.FallbackURL)
	}
	other := f.site(map[string]any{"title": "Other"})
	if a := decodeAuth(t, f.admin.Do("GET", f.path(other, "/publishing/auth"), nil).Expect(http.StatusOK)); a.PrivateKey == initial.PrivateKey {
		t.Error("two sites have the same private key")
	}

	// A fallback URL is set, kept when absent, unset by null; the key
	// stays.
	set := decodeAuth(t, f.creator.Do("PATCH", f.auth(), `{"backend":"custom","fallbackURL":"https://login.example.com/docs?from=gitbook"}`).
		Expect(http.StatusOK))
	if set.FallbackURL == nil || *set.FallbackURL != "https://login.example.com/docs?from=gitbook" || set.PrivateKey != initial.PrivateKey {
		t.Errorf("set: %+v", set)
	}
	kept := decodeAuth(t, f.admin.Do("PATCH", f.auth(), `{"backend":"custom"}`).Expect(http.StatusOK))
	if kept.FallbackURL == nil || *kept.FallbackURL != *set.FallbackURL {
		t.Errorf("kept: %+v", kept)
	}
	if got := decodeAuth(t, f.admin.Do("GET", f.auth(), nil).Expect(http.StatusOK)); got.PrivateKey != kept.PrivateKey ||
		got.FallbackURL == nil || *got.FallbackURL != *kept.FallbackURL {
		t.Errorf("read back: %+v, want %+v", got, kept)
	}

	// Regenerating gives a new key, the old one gone; the rest stays.
	regenerated := decodeAuth(t, f.creator.Do("POST", f.auth()+"/regenerate", nil).Expect(http.StatusOK))
	if regenerated.PrivateKey == initial.PrivateKey || regenerated.FallbackURL == nil || *regenerated.FallbackURL != *set.FallbackURL {
		t.Errorf("regenerated: %+v", regenerated)
	}
	read := f.admin.Do("GET", f.auth(), nil).Expect(http.StatusOK)
	if got := decodeAuth(t, read); got.PrivateKey != regenerated.PrivateKey || strings.Contains(string(read.Body), initial.PrivateKey) {
		t.Errorf("after regenerating: %s", read.Body)
	}
	again := decodeAuth(t, f.admin.Do("POST", f.auth()+"/regenerate", nil).Expect(http.StatusOK))
	if again.PrivateKey == regenerated.PrivateKey {
		t.Error("regenerating twice gave the same key")
	}

	unset := f.admin.Do("PATCH", f.auth(), `{"backend":"custom","fallbackURL":null}`).Expect(http.StatusOK)
	if a := decodeAuth(t, unset); a.FallbackURL != nil || a.PrivateKey != again.PrivateKey {
		t.Errorf("unset: %s", unset.Body)
	}

	// Sites that are not found.
	for _, path := range []string{f.path("nope", "/publishing/auth")} {
		f.admin.Do("GET", path, nil).Expect(http.StatusNotFound)
		f.admin.Do("PATCH", path, `{"backend":"custom"}`).Expect(http.StatusNotFound)
		f.admin.Do("POST", path+"/regenerate", nil).Expect(http.StatusNotFound)
	}
}

// Bad bodies are a 400 naming the member, and change nothing.
func TestSiteShareLinksAndPublishingAuthRefuseBadBodies(t *testing.T) {
	t.Parallel()
	f := newShareLinkFixture(t)
	l := decodeShareLink(t, f.admin.Do("POST", f.links(), `{"name":"Partners"}`).Expect(http.StatusCreated))
	f.admin.Do("PATCH", f.auth(), `{"backend":"custom","fallbackURL":"https://login.example.com"}`).Expect(http.StatusOK)
	snapshot := func() string {
		return string(f.admin.Do("GET", f.links(), nil).Expect(http.StatusOK).Body) + string(f.admin.Do("GET", f.auth(), nil).Expect(http.StatusOK).Body)
	}
	before := snapshot()

	long := strings.Repeat("x", 51)
	cases := []struct {
		name, method, path, body string
		// member is the member the message names ("" for the body).
		member string
	}{
		{"a link without a name", "POST", f.links(), `{}`, "name"},
		{"a null name", "POST", f.links(), `{"name":null}`, "name"},
		{"a name of 51 characters", "POST", f.links(), `{"name":"` + long + `"}`, "name"},
		{"a number for a name", "POST", f.links(), `{"name":5}`, "name"},
		{"an unknown member", "POST", f.links(), `{"name":"x","key":"mine"}`, "key"},
		{"a change of nothing", "PATCH", f.link(l.ID), `{}`, ""},
		{"a rename of 51 characters", "PATCH", f.link(l.ID), `{"name":"` + long + `"}`, "name"},
		{"a null name change", "PATCH", f.link(l.ID), `{"name":null}`, "name"},
		{"a string for active", "PATCH", f.link(l.ID), `{"active":"yes"}`, "active"},
		{"a null active", "PATCH", f.link(l.ID), `{"active":null}`, "active"},
		{"a change of the key", "PATCH", f.link(l.ID), `{"name":"x","key":"mine"}`, "key"},
		{"no backend", "PATCH", f.auth(), `{"fallbackURL":"https://example.com"}`, "backend"},
		{"an integration backend", "PATCH", f.auth(), `{"backend":"integration"}`, "backend"},
		{"an unknown backend", "PATCH", f.auth(), `{"backend":"saml"}`, "backend"},
		{"a relative fallback URL", "PATCH", f.auth(), `{"backend":"custom","fallbackURL":"/login"}`, "fallbackURL"},
		{"a script fallback URL", "PATCH", f.auth(), `{"backend":"custom","fallbackURL":"javascript:alert(1)"}`, "fallbackURL"},
		{"an ftp fallback URL", "PATCH", f.auth(), `{"backend":"custom","fallbackURL":"ftp://files.example.com/"}`, "fallbackURL"},
		{"a fallback URL of 2049 characters", "PATCH", f.auth(),
			`{"backend":"custom","fallbackURL":"https://example.com/` + strings.Repeat("a", 2049-len("https://example.com/")) + `"}`, "fallbackURL"},
		{"a private key", "PATCH", f.auth(), `{"backend":"custom","privateKey":"mine"}`, "privateKey"},
		{"an array", "PATCH", f.auth(), `[]`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := f.admin.Do(c.method, c.path, c.body).Expect(http.StatusBadRequest).ErrorMessage()
			if c.member != "" && !strings.Contains(msg, c.member) {
				t.Errorf("message %q does not name %s", msg, c.member)
			}
		})
	}
	if after := snapshot(); after != before {
		t.Errorf("a refused request changed something:\n%s\nwas\n%s", after, before)
	}
}

// Share links and visitor authentication are for those who manage the
// site, as its share key is: other members who read it are refused (403,
// and null and FORBIDDEN in GraphQL, where they read shareKey as null),
// strangers find nothing (404); nothing changes.
func TestSiteShareLinksAreForSiteManagers(t *testing.T) {
	t.Parallel()
	f := newShareLinkFixture(t)
	l := decodeShareLink(t, f.admin.Do("POST", f.links(), `{"name":"Partners"}`).Expect(http.StatusCreated))
	key := f.keyOf(t, l)
	auth := decodeAuth(t, f.admin.Do("GET", f.auth(), nil).Expect(http.StatusOK))
	snapshot := func() string {
		return string(f.admin.Do("GET", f.links(), nil).Expect(http.StatusOK).Body) + string(f.admin.Do("GET", f.auth(), nil).Expect(http.StatusOK).Body)
	}
	before := snapshot()

	requests := []struct{ method, path, body string }{
		{"GET", f.links(), ""},
		{"POST", f.links(), `{"name":"Mine"}`},
		{"PATCH", f.link(l.ID), `{"active":false}`},
		{"DELETE", f.link(l.ID), ""},
		{"GET", f.auth(), ""},
		{"PATCH", f.auth(), `{"backend":"custom","fallbackURL":"https://evil.example"}`},
		{"POST", f.auth() + "/regenerate", ""},
	}
	const query = `query($o: ID!, $s: ID!) { site(organizationId: $o, id: $s) { id shareKey
		shareLinks { items { id key urls { published } } } publishingAuth { privateKey fallbackURL } } }`
	for _, who := range []struct {
		name   string
		user   *servertest.User
		status int
	}{{"editor", f.editor, http.StatusForbidden}, {"reader", f.reader, http.StatusForbidden}, {"stranger", f.stranger, http.StatusNotFound}} {
		for _, r := range requests {
			var body any
			if r.body != "" {
				body = r.body
			}
			who.user.Do(r.method, r.path, body).Expect(who.status).ErrorMessage()
		}
		out := who.user.GraphQL(query, map[string]any{"o": f.org, "s": f.siteID})
		for _, secret := range []string{key, auth.PrivateKey, f.seedKey} {
			if strings.Contains(string(out.Data), secret) || strings.Contains(mustJSON(t, out.Errors), secret) {
				t.Errorf("%s reads a secret in GraphQL: %s %+v", who.name, out.Data, out.Errors)
			}
		}
		want := map[int]string{http.StatusForbidden: "FORBIDDEN", http.StatusNotFound: "NOT_FOUND"}[who.status]
		var fields []string
		for _, e := range out.Errors {
			if code := e.Extensions["code"]; code != want {
				t.Errorf("%s: GraphQL error %s at %v, want %s", who.name, code, e.Path, want)
			}
			fields = append(fields, mustJSON(t, e.Path))
		}
		switch who.status {
		case http.StatusForbidden:
			// The site reads, its shareKey null without an error, the
			// two fields null with one.
			var data struct {
				Site *struct {
					ID             string
					ShareKey       *string
					ShareLinks     *json.RawMessage
					PublishingAuth *json.RawMessage
				}
			}
			if err := json.Unmarshal(out.Data, &data); err != nil || data.Site == nil || data.Site.ID != f.siteID ||
				data.Site.ShareKey != nil || data.Site.ShareLinks != nil || data.Site.PublishingAuth != nil || len(fields) != 2 {
				t.Errorf("%s's GraphQL answer: %s, errors at %v (%v)", who.name, out.Data, fields, err)
			}
		default:
			if len(fields) != 1 || fields[0] != `["site"]` {
				t.Errorf("%s's GraphQL errors at %v", who.name, fields)
			}
		}
		for _, m := range []string{
			`mutation($o: ID!, $s: ID!) { createSiteShareLink(organizationId: $o, siteId: $s, input: {name: "Mine"}) { id } }`,
			`mutation($o: ID!, $s: ID!, $l: ID!) { updateSiteShareLink(organizationId: $o, siteId: $s, shareLinkId: $l, input: {active: false}) { id } }`,
			`mutation($o: ID!, $s: ID!, $l: ID!) { deleteSiteShareLink(organizationId: $o, siteId: $s, shareLinkId: $l) }`,
			`mutation($o: ID!, $s: ID!) { updateSitePublishingAuth(organizationId: $o, siteId: $s, input: {backend: custom, fallbackURL: null}) { privateKey } }`,
			`mutation($o: ID!, $s: ID!) { regenerateSitePublishingAuth(organizationId: $o, siteId: $s) { privateKey } }`,
		} {
			vars := map[string]any{"o": f.org, "s": f.siteID}
			if strings.Contains(m, "$l") {
				vars["l"] = l.ID
			}
			out := who.user.GraphQL(m, vars)
			if len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != want {
				t.Errorf("%s: %s answered %s %+v, want %s", who.name, strings.Fields(m)[2], out.Data, out.Errors, want)
			}
		}
	}
	if after := snapshot(); after != before {
		t.Errorf("refused requests changed something:\n%s\nwas\n%s", after, before)
	}

	// Those who manage the site read both, as they read its share key.
	for _, u := range []*servertest.User{f.admin, f.creator} {
		var data struct {
			Site struct {
				ShareKey   string
				ShareLinks struct {
					Items []struct {
						ID, Key string
						URLs    struct{ Published string } `json:"urls"`
					}
				}
				PublishingAuth struct{ PrivateKey string }
			}
		}
		gql(t, u, query, map[string]any{"o": f.org, "s": f.siteID}, &data)
		s := data.Site
		if s.ShareKey != f.seedKey || len(s.ShareLinks.Items) != 1 || s.ShareLinks.Items[0].Key != key ||
			s.ShareLinks.Items[0].URLs.Published != l.URLs.Published || s.PublishingAuth.PrivateKey != auth.PrivateKey {
			t.Errorf("%s's GraphQL answer: %+v", u.Email, s)
		}
	}
}

// GraphQL makes and changes them as REST does, refuses the integration
// backend naming it, and a list of sites reads its sites' settings in one
// query, whatever its length.
func TestSiteShareLinksInGraphQL(t *testing.T) {
	t.Parallel()
	f := newShareLinkFixture(t, servertest.Options{Debug: true})
	vars := map[string]any{"o": f.org, "s": f.siteID}
	var created struct {
		CreateSiteShareLink struct {
			ID, Key, Name string
			Active        bool
			URLs          struct{ Location, Published string } `json:"urls"`
		}
	}
	gql(t, f.creator, `mutation($o: ID!, $s: ID!) { createSiteShareLink(organizationId: $o, siteId: $s, input: {name: "Press"}) {
		id key name active urls { location published } } }`, vars, &created)
	c := created.CreateSiteShareLink
	if c.Name != "Press" || !c.Active || !siteSecret.MatchString(c.Key) || c.Key == c.ID || c.URLs.Published != f.base+"?share="+c.Key ||
		c.URLs.Location != f.env.URL+f.link(c.ID) {
		t.Errorf("createSiteShareLink: %+v", c)
	}
	vars["l"] = c.ID
	var updated struct {
		UpdateSiteShareLink struct {
			Name   string
			Active bool
		}
	}
	gql(t, f.creator, `mutation($o: ID!, $s: ID!, $l: ID!) { updateSiteShareLink(organizationId: $o, siteId: $s, shareLinkId: $l,
		input: {active: false}) { name active } }`, vars, &updated)
	if updated.UpdateSiteShareLink.Name != "Press" || updated.UpdateSiteShareLink.Active {
		t.Errorf("updateSiteShareLink: %+v", updated)
	}
	out := f.creator.GraphQL(`mutation($o: ID!, $s: ID!, $l: ID!) { updateSiteShareLink(organizationId: $o, siteId: $s, shareLinkId: $l,
		input: {}) { name } }`, vars)
	if len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "BAD_REQUEST" {
		t.Errorf("a change of nothing: %+v", out.Errors)
	}
	var deleted struct{ DeleteSiteShareLink bool }
	for _, want := range []bool{true, false} {
		gql(t, f.creator, `mutation($o: ID!, $s: ID!, $l: ID!) { deleteSiteShareLink(organizationId: $o, siteId: $s, shareLinkId: $l) }`,
			vars, &deleted)
		if deleted.DeleteSiteShareLink != want {
			t.Errorf("deleteSiteShareLink: %v, want %v", deleted.DeleteSiteShareLink, want)
		}
	}
	delete(vars, "l")

	var auth struct {
		UpdateSitePublishingAuth struct {
			Backend, PrivateKey string
			FallbackURL         *string
		}
	}
	gql(t, f.creator, `mutation($o: ID!, $s: ID!) { updateSitePublishingAuth(organizationId: $o, siteId: $s,
		input: {backend: custom, fallbackURL: "https://login.example.com"}) { backend privateKey fallbackURL } }`, vars, &auth)
	a := auth.UpdateSitePublishingAuth
	if a.Backend != "custom" || !siteSecret.MatchString(a.PrivateKey) || a.FallbackURL == nil || *a.FallbackURL != "https://login.example.com" {
		t.Errorf("updateSitePublishingAuth: %+v", a)
	}
	var regenerated struct {
		RegenerateSitePublishingAuth struct {
			PrivateKey  string
			FallbackURL *string
		}
	}
	gql(t, f.creator, `mutation($o: ID!, $s: ID!) { regenerateSitePublishingAuth(organizationId: $o, siteId: $s) { privateKey fallbackURL } }`,
		vars, &regenerated)
	if r := regenerated.RegenerateSitePublishingAuth; r.PrivateKey == a.PrivateKey || !siteSecret.MatchString(r.PrivateKey) || r.FallbackURL == nil {
		t.Errorf("regenerateSitePublishingAuth: %+v", r)
	}
	for _, input := range []string{`{backend: integration}`, `{backend: custom, fallbackURL: "mailto:a@example.com"}`} {
		out := f.creator.GraphQL(`mutation($o: ID!, $s: ID!) { updateSitePublishingAuth(organizationId: $o, siteId: $s, input: `+input+`) { backend } }`, vars)
		field := map[bool]string{true: "backend", false: "fallbackURL"}[strings.Contains(input, "integration")]
		if len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "BAD_REQUEST" || out.Errors[0].Extensions["field"] != field {
			t.Errorf("input %s: %+v", input, out.Errors)
		}
	}

	// A list of sites selecting their settings reads them in one query.
	for range 3 {
		f.site(map[string]any{"title": "More"})
	}
	without, _ := f.sitesWith(t, "id")
	with, items := f.sitesWith(t, "id publishingAuth { privateKey }")
	if len(items) != 4 || with > without+1 {
		t.Errorf("a list of %d sites with their settings costs %d queries, %d without them (want one more)", len(items), with, without)
	}
	keys := map[any]bool{}
	for _, s := range items {
		keys[s["publishingAuth"].(map[string]any)["privateKey"]] = true
	}
	if len(keys) != 4 {
		t.Errorf("4 sites, %d private keys", len(keys))
	}
}
