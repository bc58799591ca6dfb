package wholeserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// siteCustomizationBody is a site's whole settings, as a GitBook client
// sends them to updateSiteCustomizationById: every group the reference
// requires, most of them changed from the defaults.
const siteCustomizationBody = `{
	"title": "Acme docs",
	"styling": {"theme": "bold", "primaryColor": {"light": "#0A66C2", "dark": "#70B5F9"},
		"tint": {"color": {"light": "#EEF3F8", "dark": "#1D2226"}},
		"infoColor": {"light": "#787878", "dark": "#787878"}, "successColor": {"light": "#00C950", "dark": "#00C950"},
		"warningColor": {"light": "#FE9A00", "dark": "#FE9A00"}, "dangerColor": {"light": "#FB2C36", "dark": "#FB2C36"},
		"corners": "straight", "depth": "flat", "links": "accent", "font": "Lato", "monospaceFont": "FiraCode",
		"background": "match", "icons": "duotone", "sidebar": {"background": "filled", "list": "pill"}, "search": "prominent"},
	"internationalization": {"locale": "fr"},
	"favicon": {"emoji": "📘"},
	"header": {"preset": "custom",
		"logo": {"light": "https://cdn.example.com/logo.png", "dark": "https://cdn.example.com/logo-dark.png"},
		"links": [{"title": "Blog", "to": {"kind": "url", "url": "https://example.com/blog"}, "links": [], "style": "link"},
			{"title": "Products", "to": null, "links": [{"title": "API", "to": {"kind": "openapi", "spec": "api"}}],
				"condition": "visitor.claims.beta === true"}]},
	"footer": {"groups": [{"title": "Company", "links": [{"title": "About", "to": {"kind": "url", "url": "https://example.com/about"}}]}],
		"copyright": "© Acme"},
	"announcement": {"enabled": true, "message": "Version 2 is out", "style": "success",
		"link": {"title": "Read more", "to": {"kind": "url", "url": "https://example.com/v2"}}},
	"themes": {"default": "dark", "toggeable": false},
	"pdf": {"enabled": true}, "feedback": {"enabled": true}, "ai": {"mode": "search"}, "advancedCustomization": {"enabled": false},
	"git": {"showEditLink": true}, "pageActions": {"externalAI": false, "markdown": true, "mcp": false},
	"externalLinks": {"target": "blank"}, "pagination": {"enabled": false}, "trademark": {"enabled": false},
	"privacyPolicy": {"url": "https://example.com/privacy"}, "socialPreview": {}, "insights": {"trackingCookie": false}
}`

// siteSpaceOverrideBody overrides some of a site space's settings, as
// overrideSiteSpaceCustomizationById takes them.
const siteSpaceOverrideBody = `{"title": "Acme API", "styling": {"primaryColor": {"light": "#111111", "dark": "#EEEEEE"}},
	"internationalization": {"locale": "de"}}`

// customizationFixture is a site publishing two spaces, one of them
// private, with an admin, a member who manages sites (create), a reader
// and a stranger.
type customizationFixture struct {
	*siteFixture
	creator, reader, stranger *servertest.User
	siteID                    string
	// siteSpaces: of the space every member reads, of the private one.
	public, private string
}

func newCustomizationFixture(t *testing.T, opts ...servertest.Options) *customizationFixture {
	t.Helper()
	f := &customizationFixture{siteFixture: newSiteFixture(t, 2, opts...)}
	f.creator, f.reader, f.stranger = f.env.NewUser("Creator"), f.env.NewUser("Reader"), f.env.NewUser("Stranger")
	f.creator.Join(f.org, store.RoleCreate)
	f.reader.Join(f.org, store.RoleRead)
	f.stranger.NewOrg("Elsewhere")
	f.admin.Do("PATCH", "/v1/spaces/"+f.spaces[1], `{"defaultLevel":null}`).Expect(http.StatusOK)
	f.siteID = f.site(map[string]any{"title": "Docs", "spaces": f.spaces})
	f.admin.Do("POST", f.path(f.siteID, "/publish"), nil).Expect(http.StatusOK)
	var list struct {
		Items []struct {
			ID    string
			Space struct{ ID string }
		}
	}
	f.admin.Do("GET", f.path(f.siteID, "/site-spaces"), nil).Expect(http.StatusOK).Decode(&list)
	for _, ss := range list.Items {
		if ss.Space.ID == f.spaces[0] {
			f.public = ss.ID
		} else {
			f.private = ss.ID
		}
	}
	return f
}

func (f *customizationFixture) siteSettings() string { return f.path(f.siteID, "/customization") }
func (f *customizationFixture) siteSpaceSettings(siteSpace string) string {
	return f.path(f.siteID, "/site-spaces/", siteSpace, "/customization")
}

// settingsOf decodes an answer's settings.
func settingsOf(t *testing.T, res *servertest.Response) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(res.Body, &m); err != nil {
		t.Fatalf("%s: %v", res.Body, err)
	}
	return m
}

// member is the value at path (dotted) in settings.
func member(settings map[string]any, path string) any {
	var v any = settings
	for _, name := range strings.Split(path, ".") {
		m, _ := v.(map[string]any)
		v = m[name]
	}
	return v
}

// sameJSON tells whether a and b are the same JSON.
func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	return mustJSON(t, a) == mustJSON(t, b)
}

func TestSiteCustomization(t *testing.T) {
	t.Parallel()
	f := newCustomizationFixture(t)
	admin := f.admin

	// A site never customized has the defaults: GitBook's look, the
	// features the server lacks off.
	defaults := settingsOf(t, admin.Do("GET", f.siteSettings(), nil).Expect(http.StatusOK))
	for path, want := range map[string]any{"styling.theme": "clean", "styling.font": "Inter", "internationalization.locale": "en",
		"themes.default": "light", "externalLinks.target": "self", "pdf.enabled": false, "insights.trackingCookie": true} {
		if got := member(defaults, path); got != want {
			t.Errorf("default %s = %v, want %v", path, got, want)
		}
	}

	// The settings set are answered, and read back, as sent.
	var sent map[string]any
	if err := json.Unmarshal([]byte(siteCustomizationBody), &sent); err != nil {
		t.Fatal(err)
	}
	if got := settingsOf(t, admin.Do("PUT", f.siteSettings(), siteCustomizationBody).Expect(http.StatusOK)); !sameJSON(t, got, sent) {
		t.Errorf("PUT answered %s", mustJSON(t, got))
	}
	if got := settingsOf(t, admin.Do("GET", f.siteSettings(), nil).Expect(http.StatusOK)); !sameJSON(t, got, sent) {
		t.Errorf("GET after PUT answered %s", mustJSON(t, got))
	}

	// A site space has its site's settings, until it overrides some.
	if got := settingsOf(t, admin.Do("GET", f.siteSpaceSettings(f.public), nil).Expect(http.StatusOK)); !sameJSON(t, got, sent) {
		t.Errorf("a site space without overrides: %s", mustJSON(t, got))
	}
	overridden := settingsOf(t, admin.Do("PATCH", f.siteSpaceSettings(f.public), siteSpaceOverrideBody).Expect(http.StatusOK))
	for path, want := range map[string]any{"title": "Acme API", "styling.primaryColor.light": "#111111",
		"internationalization.locale": "de", "styling.theme": "bold", "styling.font": "Lato", "footer.copyright": "© Acme"} {
		if got := member(overridden, path); got != want {
			t.Errorf("overridden %s = %v, want %v", path, got, want)
		}
	}
	// Null removes one override; the others stay; the site is unchanged.
	after := settingsOf(t, admin.Do("PATCH", f.siteSpaceSettings(f.public), `{"internationalization": {"locale": null}}`).Expect(http.StatusOK))
	if member(after, "internationalization.locale") != "fr" || member(after, "styling.primaryColor.light") != "#111111" {
		t.Errorf("after removing the locale's override: %s", mustJSON(t, after))
	}
	if got := settingsOf(t, admin.Do("GET", f.siteSettings(), nil).Expect(http.StatusOK)); !sameJSON(t, got, sent) {
		t.Errorf("an override changed the site's settings: %s", mustJSON(t, got))
	}
	f.admin.Do("PATCH", f.siteSpaceSettings(f.private), `{"footer": {"copyright": "© Acme private"}}`).Expect(http.StatusOK)

	// The published site answers the settings in effect: the site's, and
	// each overriding site space's merged, for the site spaces the caller
	// may see.
	published := func(u *servertest.User) (site map[string]any, siteSpaces map[string]any) {
		t.Helper()
		var p struct {
			Customizations struct{ Site, SiteSpaces map[string]any }
		}
		u.Do("GET", f.path(f.siteID, "/published"), nil).Expect(http.StatusOK).Decode(&p)
		return p.Customizations.Site, p.Customizations.SiteSpaces
	}
	site, siteSpaces := published(admin)
	if !sameJSON(t, site, sent) || len(siteSpaces) != 2 || !sameJSON(t, siteSpaces[f.public], after) ||
		member(siteSpaces[f.private].(map[string]any), "footer.copyright") != "© Acme private" {
		t.Errorf("the admin's published customizations: site %s, site spaces %s", mustJSON(t, site), mustJSON(t, siteSpaces))
	}
	site, siteSpaces = published(f.reader)
	if !sameJSON(t, site, sent) || len(siteSpaces) != 1 || siteSpaces[f.public] == nil {
		t.Errorf("the reader's published customizations (the private site space is not the reader's): site %s, site spaces %s",
			mustJSON(t, site), mustJSON(t, siteSpaces))
	}

	// A change of the site's settings shows through where a site space
	// does not override it.
	changed := strings.Replace(siteCustomizationBody, `"corners": "straight"`, `"corners": "circular"`, 1)
	admin.Do("PUT", f.siteSettings(), changed).Expect(http.StatusOK)
	if got := settingsOf(t, admin.Do("GET", f.siteSpaceSettings(f.public), nil).Expect(http.StatusOK)); member(got, "styling.corners") != "circular" ||
		member(got, "styling.primaryColor.light") != "#111111" {
		t.Errorf("the site space after its site changed: %s", mustJSON(t, got))
	}

	// Deleting the overrides answers 205, then 204 as there are none; the
	// site space has its site's settings again.
	admin.Do("DELETE", f.siteSpaceSettings(f.public), nil).Expect(http.StatusResetContent)
	admin.Do("DELETE", f.siteSpaceSettings(f.public), nil).Expect(http.StatusNoContent)
	site = settingsOf(t, admin.Do("GET", f.siteSettings(), nil).Expect(http.StatusOK))
	if got := settingsOf(t, admin.Do("GET", f.siteSpaceSettings(f.public), nil).Expect(http.StatusOK)); !sameJSON(t, got, site) {
		t.Errorf("a site space whose overrides were deleted: %s", mustJSON(t, got))
	}
	// Removing every override one by one leaves none either.
	admin.Do("PATCH", f.siteSpaceSettings(f.public), `{"pdf": {"enabled": false}}`).Expect(http.StatusOK)
	admin.Do("PATCH", f.siteSpaceSettings(f.public), `{"pdf": {"enabled": null}}`).Expect(http.StatusOK)
	admin.Do("DELETE", f.siteSpaceSettings(f.public), nil).Expect(http.StatusNoContent)

	// A site space that is not the site's is not found; deleting its
	// overrides deletes nothing.
	other := f.site(map[string]any{"title": "Other", "spaces": []string{f.spaces[0]}})
	for _, path := range []string{f.siteSpaceSettings("nope"), f.path(other, "/site-spaces/", f.private, "/customization")} {
		admin.Do("GET", path, nil).Expect(http.StatusNotFound)
		admin.Do("PATCH", path, `{"title": "Lost"}`).Expect(http.StatusNotFound)
		admin.Do("DELETE", path, nil).Expect(http.StatusNoContent)
	}
	for _, path := range []string{f.path("nope", "/customization"), f.path("nope", "/site-spaces/", f.public, "/customization")} {
		admin.Do("GET", path, nil).Expect(http.StatusNotFound)
	}
	admin.Do("PUT", f.path("nope", "/customization"), siteCustomizationBody).Expect(http.StatusNotFound)

	// Removing the site space takes its overrides with it.
	admin.Do("DELETE", f.path(f.siteID, "/site-spaces/", f.private), nil).Expect(http.StatusNoContent)
	if _, siteSpaces := published(admin); len(siteSpaces) != 0 {
		t.Errorf("the overrides of a removed site space are still published: %s", mustJSON(t, siteSpaces))
	}
}

// Bad settings are a 400 naming the member, in the reference's error shape,
// and change nothing.
func TestSiteCustomizationRefusesBadSettings(t *testing.T) {
	t.Parallel()
	f := newCustomizationFixture(t)
	admin := f.admin
	admin.Do("PUT", f.siteSettings(), siteCustomizationBody).Expect(http.StatusOK)
	admin.Do("PATCH", f.siteSpaceSettings(f.public), siteSpaceOverrideBody).Expect(http.StatusOK)
	siteBefore := admin.Do("GET", f.siteSettings(), nil).Expect(http.StatusOK).Body
	siteSpaceBefore := admin.Do("GET", f.siteSpaceSettings(f.public), nil).Expect(http.StatusOK).Body

	replace := func(old, new string) string {
		if !strings.Contains(siteCustomizationBody, old) {
			t.Fatalf("the body has no %s", old)
		}
		return strings.Replace(siteCustomizationBody, old, new, 1)
	}
	cases := []struct {
		name, method, path, body string
		// member is the member the message names.
		member string
	}{
		{"a named color", "PUT", f.siteSettings(), replace(`"light": "#0A66C2"`, `"light": "blue"`), "styling.primaryColor.light"},
		{"a color of 4 digits", "PUT", f.siteSettings(), replace(`"dark": "#70B5F9"`, `"dark": "#70B5"`), "styling.primaryColor.dark"},
		{"an unknown locale", "PUT", f.siteSettings(), replace(`"locale": "fr"`, `"locale": "fr-FR"`), "internationalization.locale"},
		{"an unknown theme", "PUT", f.siteSettings(), replace(`"theme": "bold"`, `"theme": "neon"`), "styling.theme"},
		{"an unknown font", "PUT", f.siteSettings(), replace(`"font": "Lato"`, `"font": "Comic Sans"`), "styling.font"},
		{"no styling", "PUT", f.siteSettings(), `{"internationalization": {"locale": "en"}}`, "styling"},
		{"a number for a switch", "PUT", f.siteSettings(), replace(`"pdf": {"enabled": true}`, `"pdf": {"enabled": 1}`), "pdf.enabled"},
		{"a script link", "PUT", f.siteSettings(), replace(`"url": "https://example.com/blog"`, `"url": "javascript:alert(1)"`), "header.links[0].to.url"},
		{"a relative logo", "PUT", f.siteSettings(), replace(`"light": "https://cdn.example.com/logo.png"`, `"light": "/logo.png"`), "header.logo.light"},
		{"a condition that assigns", "PUT", f.siteSettings(), replace(`visitor.claims.beta === true`, `visitor.claims.beta = true`), "header.links[1].condition"},
		{"an unknown member", "PUT", f.siteSettings(), replace(`"title": "Acme docs",`, `"title": "Acme docs", "colour": "red",`), "colour"},
		{"an array", "PUT", f.siteSettings(), `[]`, ""},
		{"an override of a font", "PATCH", f.siteSpaceSettings(f.public), `{"styling": {"font": "Inter"}}`, "styling.font"},
		{"an override of a bad color", "PATCH", f.siteSpaceSettings(f.public), `{"styling": {"infoColor": {"light": "#12", "dark": "#000"}}}`, "styling.infoColor.light"},
		{"a locale override without a locale", "PATCH", f.siteSpaceSettings(f.public), `{"internationalization": {}}`, "internationalization.locale"},
		{"an override of a one-letter title", "PATCH", f.siteSpaceSettings(f.public), `{"title": "A"}`, "title"},
		{"a null group", "PATCH", f.siteSpaceSettings(f.public), `{"styling": null}`, "styling"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := admin.Do(c.method, c.path, c.body).Expect(http.StatusBadRequest).ErrorMessage()
			if !strings.HasPrefix(msg, c.member+": ") && c.member != "" {
				t.Errorf("message %q does not name %s", msg, c.member)
			}
		})
	}
	if got := admin.Do("GET", f.siteSettings(), nil).Expect(http.StatusOK).Body; string(got) != string(siteBefore) {
		t.Errorf("a refused request changed the site's settings: %s", got)
	}
	if got := admin.Do("GET", f.siteSpaceSettings(f.public), nil).Expect(http.StatusOK).Body; string(got) != string(siteSpaceBefore) {
		t.Errorf("a refused request changed the site space's settings: %s", got)
	}
}

// A site's customization is its organization's admins': other members are
// refused (403), strangers find nothing (404), in REST and GraphQL, and
// nothing changes.
func TestSiteCustomizationIsForAdmins(t *testing.T) {
	t.Parallel()
	f := newCustomizationFixture(t)
	f.admin.Do("PUT", f.siteSettings(), siteCustomizationBody).Expect(http.StatusOK)
	f.admin.Do("PATCH", f.siteSpaceSettings(f.public), siteSpaceOverrideBody).Expect(http.StatusOK)
	siteBefore := f.admin.Do("GET", f.siteSettings(), nil).Expect(http.StatusOK).Body
	siteSpaceBefore := f.admin.Do("GET", f.siteSpaceSettings(f.public), nil).Expect(http.StatusOK).Body

	requests := []struct{ method, path, body string }{
		{"GET", f.siteSettings(), ""},
		{"PUT", f.siteSettings(), siteCustomizationBody},
		{"GET", f.siteSpaceSettings(f.public), ""},
		{"PATCH", f.siteSpaceSettings(f.public), `{"title": "Taken over"}`},
		{"DELETE", f.siteSpaceSettings(f.public), ""},
	}
	for _, who := range []struct {
		name   string
		user   *servertest.User
		status int
	}{{"creator", f.creator, http.StatusForbidden}, {"reader", f.reader, http.StatusForbidden}, {"stranger", f.stranger, http.StatusNotFound}} {
		for _, r := range requests {
			var body any
			if r.body != "" {
				body = r.body
			}
			who.user.Do(r.method, r.path, body).Expect(who.status).ErrorMessage()
		}
		out := who.user.GraphQL(`query($o: ID!, $s: ID!, $ss: ID!) { site(organizationId: $o, id: $s) {
			customization siteSpace(id: $ss) { id customization customizationOverrides } } }`,
			map[string]any{"o": f.org, "s": f.siteID, "ss": f.public})
		if strings.Contains(string(out.Data), "Acme") || len(out.Errors) == 0 {
			t.Errorf("%s reads the customization in GraphQL: %s %+v", who.name, out.Data, out.Errors)
		}
		for _, e := range out.Errors {
			if code := e.Extensions["code"]; code != map[int]string{http.StatusForbidden: "FORBIDDEN", http.StatusNotFound: "NOT_FOUND"}[who.status] {
				t.Errorf("%s: GraphQL error %s at %v, want %d", who.name, code, e.Path, who.status)
			}
		}
	}
	if got := f.admin.Do("GET", f.siteSettings(), nil).Expect(http.StatusOK).Body; string(got) != string(siteBefore) {
		t.Errorf("the site's settings changed: %s", got)
	}
	if got := f.admin.Do("GET", f.siteSpaceSettings(f.public), nil).Expect(http.StatusOK).Body; string(got) != string(siteSpaceBefore) {
		t.Errorf("the site space's settings changed: %s", got)
	}
}

// GraphQL reads a site's settings and its site spaces' overrides beside the
// rest, and lists of sites read the settings of all their sites at once.
func TestSiteCustomizationInGraphQL(t *testing.T) {
	t.Parallel()
	f := newCustomizationFixture(t, servertest.Options{Debug: true})
	var settings map[string]any
	if err := json.Unmarshal([]byte(siteCustomizationBody), &settings); err != nil {
		t.Fatal(err)
	}
	var updated struct {
		UpdateSiteCustomization struct {
			Title         string
			Customization map[string]any
		}
	}
	gql(t, f.admin, `mutation($o: ID!, $s: ID!, $in: SiteCustomizationSettings!) {
		updateSiteCustomization(organizationId: $o, siteId: $s, input: $in) { title customization } }`,
		map[string]any{"o": f.org, "s": f.siteID, "in": settings}, &updated)
	if updated.UpdateSiteCustomization.Title != "Docs" || !sameJSON(t, updated.UpdateSiteCustomization.Customization, settings) {
		t.Errorf("updateSiteCustomization: %+v", updated)
	}
	var overridden struct {
		OverrideSiteSpaceCustomization struct {
			ID                     string
			CustomizationOverrides map[string]any
			Customization          map[string]any
		}
	}
	gql(t, f.admin, `mutation($o: ID!, $s: ID!, $ss: ID!) {
		overrideSiteSpaceCustomization(organizationId: $o, siteId: $s, siteSpaceId: $ss, input: {themes: {default: "light"}}) {
			id customizationOverrides customization } }`,
		map[string]any{"o": f.org, "s": f.siteID, "ss": f.public}, &overridden)
	o := overridden.OverrideSiteSpaceCustomization
	if o.ID != f.public || mustJSON(t, o.CustomizationOverrides) != `{"themes":{"default":"light"}}` ||
		member(o.Customization, "themes.default") != "light" || member(o.Customization, "themes.toggeable") != false {
		t.Errorf("overrideSiteSpaceCustomization: %+v", o)
	}
	out := f.admin.GraphQL(`mutation($o: ID!, $s: ID!, $in: SiteCustomizationSettings!) {
		updateSiteCustomization(organizationId: $o, siteId: $s, input: $in) { id } }`,
		map[string]any{"o": f.org, "s": f.siteID, "in": map[string]any{"styling": "bold"}})
	if len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "BAD_REQUEST" || out.Errors[0].Extensions["field"] != "styling" {
		t.Errorf("bad settings in GraphQL: %+v", out.Errors)
	}

	// A list of sites selecting their settings reads them in one query,
	// whatever its length.
	for range 3 {
		f.site(map[string]any{"title": "More"})
	}
	without, _ := f.sitesWith(t, "id")
	with, items := f.sitesWith(t, "id customization")
	if len(items) != 4 || with > without+1 {
		t.Errorf("a list of %d sites with their settings costs %d queries, %d without them (want one more)", len(items), with, without)
	}
	for _, s := range items {
		want := "clean"
		if s["id"] == f.siteID {
			want = "bold"
		}
		if got := member(s["customization"].(map[string]any), "styling.theme"); got != want {
			t.Errorf("site %s in a list: theme %v, want %s", s["id"], got, want)
		}
	}
}
