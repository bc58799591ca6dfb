package wholeserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// redirectFixture is a published site of two spaces (the second a section
// of its own), with a page, its organization's admin, a member who manages
// sites (create), an editor, a reader and a stranger.
type redirectFixture struct {
	*siteFixture
	creator, editor, reader, stranger *servertest.User
	siteID                            string
	// base is the site's published address.
	base string
	// section and its site space; guides the first space's site space,
	// page a page of it at pagePath.
	section, sectionSpace, guides, page, pagePath string
}

func newRedirectFixture(t *testing.T, opts ...servertest.Options) *redirectFixture {
	t.Helper()
	f := &redirectFixture{siteFixture: newSiteFixture(t, 2, opts...)}
	f.creator, f.editor, f.reader, f.stranger = f.env.NewUser("Creator"), f.env.NewUser("Editor"), f.env.NewUser("Reader"), f.env.NewUser("Stranger")
	f.creator.Join(f.org, store.RoleCreate)
	f.editor.Join(f.org, store.RoleEdit)
	f.reader.Join(f.org, store.RoleRead)
	f.stranger.NewOrg("Elsewhere")
	f.page, f.pagePath, _ = createPage(t, f.admin, f.spaces[0], "Setup", "Install it.")
	f.siteID = f.site(map[string]any{"title": "Docs", "spaces": f.spaces[:1]})
	sec := f.admin.Do("POST", f.path(f.siteID, "/sections"), map[string]any{"spaceId": f.spaces[1], "title": "Reference"}).Expect(http.StatusCreated)
	f.section = sec.String("id")
	f.sectionSpace = sec.JSON()["siteSpaces"].([]any)[0].(map[string]any)["id"].(string)
	for _, ss := range f.admin.Do("GET", f.path(f.siteID, "/site-spaces"), nil).Expect(http.StatusOK).JSON()["items"].([]any) {
		if m := ss.(map[string]any); m["id"] != f.sectionSpace {
			f.guides = m["id"].(string)
		}
	}
	f.base = f.admin.Do("POST", f.path(f.siteID, "/publish"), nil).Expect(http.StatusOK).JSON()["urls"].(map[string]any)["published"].(string)
	return f
}

func (f *redirectFixture) redirects() string { return f.path(f.siteID, "/redirects") }
func (f *redirectFixture) redirect(id string) string {
	return f.path(f.siteID, "/redirects/", id)
}
func (f *redirectFixture) bySource(source string) string {
	return f.path(f.siteID, "/redirect?source=") + url.QueryEscape(source)
}

// siteRedirect is a redirect as REST answers it.
type siteRedirect struct {
	Object, ID, Source string
	Destination        map[string]string
}

func decodeRedirect(t *testing.T, res *servertest.Response) siteRedirect {
	t.Helper()
	var r siteRedirect
	res.Decode(&r)
	if r.Object != "site-redirect" || r.ID == "" {
		t.Fatalf("not a redirect: %s", res.Body)
	}
	return r
}

// publishedOf is the urls.published of the item of list (a REST path) with
// id.
func (f *redirectFixture) publishedOf(t *testing.T, list, id string) string {
	t.Helper()
	for _, item := range f.admin.Do("GET", list, nil).Expect(http.StatusOK).JSON()["items"].([]any) {
		if m := item.(map[string]any); m["id"] == id {
			return m["urls"].(map[string]any)["published"].(string)
		}
	}
	t.Fatalf("%s lists no %s", list, id)
	return ""
}

// GitBook's five operations: redirects of each kind made (sources kept in
// their canonical form), listed oldest first page by page and searched,
// found by their source with the address they lead to, changed, refused a
// second source, deleted; another site's or none are not found; they go
// with their site.
func TestSiteRedirects(t *testing.T) {
	t.Parallel()
	f := newRedirectFixture(t)
	sectionURL := f.publishedOf(t, f.path(f.siteID, "/sections"), f.section)
	guidesURL := f.publishedOf(t, f.path(f.siteID, "/site-spaces"), f.guides)
	sectionSpaceURL := f.publishedOf(t, f.path(f.siteID, "/site-spaces"), f.sectionSpace)

	cases := []struct {
		name, source string
		destination  map[string]string
		// canonical is the source as kept; target where it leads.
		canonical, target string
	}{
		{"a path of the site", "/old-setup", map[string]string{"kind": "url", "url": "/setup?tab=cli#install"}, "/old-setup",
			f.base + "/setup?tab=cli#install"},
		{"an absolute URL", "/blog/2024", map[string]string{"kind": "url", "url": "https://blog.example.com/2024"}, "/blog/2024",
			"https://blog.example.com/2024"},
		{"a section", "/api", map[string]string{"kind": "site-section", "siteSectionId": f.section}, "/api", sectionURL},
		{"a site space", "/ref", map[string]string{"kind": "site-space", "siteSpaceId": f.sectionSpace}, "/ref", sectionSpaceURL},
		{"a page", "/install", map[string]string{"kind": "site-page", "siteSpaceId": f.guides, "pageId": f.page}, "/install",
			guidesURL + "/" + f.pagePath},
		{"a source encoded needlessly, in lower case", "/caf%c3%a9/%7e%2dx", map[string]string{"kind": "url", "url": "/setup"},
			"/caf%C3%A9/~-x", f.base + "/setup"},
	}
	made := map[string]siteRedirect{}
	var order []string
	for _, c := range cases {
		f.env.Clock.Advance(time.Second)
		res := f.creator.Do("POST", f.redirects(), map[string]any{"source": c.source, "destination": c.destination}).Expect(http.StatusCreated)
		r := decodeRedirect(t, res)
		if r.Source != c.canonical || len(r.Destination) != len(c.destination) {
			t.Errorf("%s: created %s", c.name, res.Body)
		}
		for k, v := range c.destination {
			if r.Destination[k] != v {
				t.Errorf("%s: destination.%s = %q, want %q", c.name, k, r.Destination[k], v)
			}
		}
		made[c.name] = r
		order = append(order, r.ID)

		// Found by its source, as given or canonical, with a trailing
		// slash or not, with where it leads.
		for _, source := range []string{c.source, c.canonical, c.canonical + "/"} {
			var found struct {
				Redirect siteRedirect
				Target   string
			}
			f.admin.Do("GET", f.bySource(source), nil).Expect(http.StatusOK).Decode(&found)
			if found.Redirect.ID != r.ID || found.Target != c.target {
				t.Errorf("%s: by source %s: %+v, want target %s", c.name, source, found, c.target)
			}
		}
	}

	// Listed oldest first, page by page; searched in their source.
	var page struct {
		Items []siteRedirect
		Count int
		Next  *struct{ Page string }
	}
	var listed []string
	next := ""
	for {
		page.Next = nil
		f.admin.Do("GET", f.redirects()+"?limit=4&page="+next, nil).Expect(http.StatusOK).Decode(&page)
		for _, r := range page.Items {
			listed = append(listed, r.ID)
		}
		if page.Next == nil {
			break
		}
		next = page.Next.Page
	}
	if strings.Join(listed, ",") != strings.Join(order, ",") {
		t.Errorf("listed %v, want %v", listed, order)
	}
	page.Items = nil
	f.admin.Do("GET", f.redirects()+"?search=OLD", nil).Expect(http.StatusOK).Decode(&page)
	if len(page.Items) != 1 || page.Items[0].ID != made["a path of the site"].ID {
		t.Errorf("search OLD: %+v", page.Items)
	}
	// LIKE's wildcards are characters like any other.
	for q, want := range map[string]string{"%25": made["a source encoded needlessly, in lower case"].ID, "_": ""} {
		page.Items = nil
		f.admin.Do("GET", f.redirects()+"?search="+q, nil).Expect(http.StatusOK).Decode(&page)
		if want == "" && len(page.Items) != 0 || want != "" && (len(page.Items) != 1 || page.Items[0].ID != want) {
			t.Errorf("search %s: %+v", q, page.Items)
		}
	}

	// Changed: the source, the destination, or both; a second redirect
	// from a source is a conflict, and changes nothing.
	id := made["a path of the site"].ID
	moved := decodeRedirect(t, f.creator.Do("PATCH", f.redirect(id), `{"source":"/older-setup"}`).Expect(http.StatusOK))
	if moved.Source != "/older-setup" || moved.Destination["url"] != "/setup?tab=cli#install" {
		t.Errorf("a new source: %+v", moved)
	}
	retargeted := decodeRedirect(t, f.admin.Do("PATCH", f.redirect(id),
		map[string]any{"destination": map[string]any{"kind": "site-section", "siteSectionId": f.section}}).Expect(http.StatusOK))
	if retargeted.Source != "/older-setup" || retargeted.Destination["kind"] != "site-section" || retargeted.Destination["url"] != "" {
		t.Errorf("a new destination: %+v", retargeted)
	}
	f.admin.Do("GET", f.bySource("/old-setup"), nil).Expect(http.StatusNotFound)
	f.admin.Do("POST", f.redirects(), `{"source":"/api/","destination":{"kind":"url","url":"/setup"}}`).Expect(http.StatusBadRequest)
	msg := f.admin.Do("POST", f.redirects(), `{"source":"/API/../api","destination":{"kind":"url","url":"/setup"}}`).Expect(http.StatusBadRequest).ErrorMessage()
	if !strings.Contains(msg, "source") {
		t.Errorf("a dot segment: %q", msg)
	}
	f.admin.Do("POST", f.redirects(), `{"source":"/ap%69","destination":{"kind":"url","url":"/setup"}}`).Expect(http.StatusConflict).ErrorMessage()
	f.admin.Do("PATCH", f.redirect(id), `{"source":"/api"}`).Expect(http.StatusConflict).ErrorMessage()

	// Redirects of another site, or of none, are not found.
	other := f.site(map[string]any{"title": "Other"})
	for _, path := range []string{f.redirect("nope"), f.path(other, "/redirects/", id), f.path("nope", "/redirects/", id)} {
		f.admin.Do("PATCH", path, `{"source":"/lost"}`).Expect(http.StatusNotFound).ErrorMessage()
		f.admin.Do("DELETE", path, nil).Expect(http.StatusNoContent)
	}
	f.admin.Do("GET", f.path(other, "/redirect?source=/api"), nil).Expect(http.StatusNotFound).ErrorMessage()
	f.admin.Do("GET", f.path("nope", "/redirects"), nil).Expect(http.StatusNotFound)
	f.admin.Do("POST", f.path("nope", "/redirects"), `{"source":"/x","destination":{"kind":"url","url":"/setup"}}`).Expect(http.StatusNotFound)
	f.admin.Do("POST", f.path("nope", "/redirects"), map[string]any{"source": "/x",
		"destination": map[string]any{"kind": "site-section", "siteSectionId": f.section}}).Expect(http.StatusNotFound)
	f.admin.Do("PATCH", f.path("nope", "/redirects/", id), map[string]any{
		"destination": map[string]any{"kind": "site-section", "siteSectionId": f.section}}).Expect(http.StatusNotFound)

	// A destination gone leads nowhere: no target.
	f.admin.Do("DELETE", f.path(f.siteID, "/sections/", f.section), nil).Expect(http.StatusNoContent)
	if found := f.admin.Do("GET", f.bySource("/api"), nil).Expect(http.StatusOK).JSON(); found["target"] != nil || found["redirect"] == nil {
		t.Errorf("a redirect to a section gone: %v", found)
	}
	// An unpublished site's redirects lead to no published address.
	f.admin.Do("POST", f.path(f.siteID, "/unpublish"), nil).Expect(http.StatusOK)
	if found := f.admin.Do("GET", f.bySource("/install"), nil).Expect(http.StatusOK).JSON(); found["target"] != nil {
		t.Errorf("a redirect of an unpublished site: %v", found)
	}

	// Deleting answers 205, then 204 as there is none.
	f.creator.Do("DELETE", f.redirect(id), nil).Expect(http.StatusResetContent)
	f.creator.Do("DELETE", f.redirect(id), nil).Expect(http.StatusNoContent)
	f.admin.Do("GET", f.bySource("/older-setup"), nil).Expect(http.StatusNotFound)

	// Deleting the site takes its redirects along.
	f.admin.Do("DELETE", f.path(f.siteID), nil).Expect(http.StatusNoContent)
	f.admin.Do("GET", f.redirects(), nil).Expect(http.StatusNotFound)
	var left int
	if err := f.env.DB.Pool.QueryRow(context.Background(), `SELECT count(*) FROM site_redirects WHERE site_id = $1`, f.siteID).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d redirects of the deleted site are left (%v)", left, err)
	}
}

// A share-link site's redirects lead to addresses with the share key the
// request came with, as its other addresses do.
func TestSiteRedirectTargetsCarryTheShareKey(t *testing.T) {
	t.Parallel()
	f := newRedirectFixture(t)
	f.admin.Do("PATCH", f.path(f.siteID), `{"visibility":"share-link"}`).Expect(http.StatusOK)
	f.admin.Do("POST", f.redirects(), `{"source":"/old","destination":{"kind":"url","url":"/setup?tab=cli"}}`).Expect(http.StatusCreated)
	var key struct{ Site struct{ ShareKey string } }
	gql(t, f.admin, `query($o: ID!, $s: ID!) { site(organizationId: $o, id: $s) { shareKey } }`, map[string]any{"o": f.org, "s": f.siteID}, &key)
	without := f.admin.Do("GET", f.bySource("/old"), nil).Expect(http.StatusOK).JSON()
	if without["target"] != nil {
		t.Errorf("without the share key: %v", without)
	}
	with := f.admin.Do("GET", f.bySource("/old")+"&shareKey="+key.Site.ShareKey, nil).Expect(http.StatusOK).JSON()
	if want := f.base + "/setup?share=" + key.Site.ShareKey + "&tab=cli"; with["target"] != want {
		t.Errorf("with the share key: %v, want %s", with["target"], want)
	}
}

// Bad bodies and sources are a 400 naming the member (a full site a 422),
// and change nothing.
func TestSiteRedirectsRefuseBadBodies(t *testing.T) {
	t.Parallel()
	f := newRedirectFixture(t)
	r := decodeRedirect(t, f.admin.Do("POST", f.redirects(), `{"source":"/old","destination":{"kind":"url","url":"/setup"}}`).Expect(http.StatusCreated))
	otherSite := f.site(map[string]any{"title": "Other", "spaces": f.spaces[1:]})
	otherSpace := f.admin.Do("GET", f.path(otherSite, "/site-spaces"), nil).Expect(http.StatusOK).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)
	snapshot := func() string { return string(f.admin.Do("GET", f.redirects(), nil).Expect(http.StatusOK).Body) }
	before := snapshot()

	body := func(source string, destination any) string {
		m := map[string]any{"destination": destination}
		if source != "" {
			m["source"] = source
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	to := func(kv ...string) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	site := to("kind", "url", "url", "/setup")
	cases := []struct {
		name, method, path, body string
		// member is the member the message names ("" for the body).
		member string
	}{
		{"no source", "POST", f.redirects(), body("", site), "source"},
		{"no destination", "POST", f.redirects(), `{"source":"/new"}`, "destination"},
		{"a source without its slash", "POST", f.redirects(), body("new", site), "source"},
		{"a source with a trailing slash", "POST", f.redirects(), body("/new/", site), "source"},
		{"the site's root", "POST", f.redirects(), body("/", site), "source"},
		{"a source with a space", "POST", f.redirects(), body("/new page", site), "source"},
		{"a source with a query", "POST", f.redirects(), body("/new?x=1", site), "source"},
		{"a dot-dot segment", "POST", f.redirects(), body("/a/../new", site), "source"},
		{"an encoded dot-dot segment", "POST", f.redirects(), body("/a/%2e%2E/new", site), "source"},
		{"the reader's own files", "POST", f.redirects(), body("/~gitbook/static/x", site), "source"},
		{"a source of 513 characters", "POST", f.redirects(), body("/"+strings.Repeat("a", 512), site), "source"},
		{"a number for a source", "POST", f.redirects(), `{"source":5,"destination":{"kind":"url","url":"/setup"}}`, "source"},
		{"an unknown member", "POST", f.redirects(), `{"source":"/new","destination":{"kind":"url","url":"/setup"},"status":302}`, "status"},
		{"an unknown kind", "POST", f.redirects(), body("/new", to("kind", "space", "space", f.spaces[0])), "destination.kind"},
		{"no kind", "POST", f.redirects(), body("/new", to("url", "/setup")), "destination.kind"},
		{"a section without its id", "POST", f.redirects(), body("/new", to("kind", "site-section")), "destination.siteSectionId"},
		{"a section and a URL", "POST", f.redirects(), body("/new", to("kind", "site-section", "siteSectionId", f.section, "url", "/x")), "destination.url"},
		{"a section of no site", "POST", f.redirects(), body("/new", to("kind", "site-section", "siteSectionId", "nope")), "siteSectionId"},
		{"a site space of another site", "POST", f.redirects(), body("/new", to("kind", "site-space", "siteSpaceId", otherSpace)), "siteSpaceId"},
		{"a page without its site space", "POST", f.redirects(), body("/new", to("kind", "site-page", "pageId", f.page)), "destination.siteSpaceId"},
		{"a page not in the site space", "POST", f.redirects(), body("/new", to("kind", "site-page", "siteSpaceId", f.sectionSpace, "pageId", f.page)), "pageId"},
		{"a script URL", "POST", f.redirects(), body("/new", to("kind", "url", "url", "javascript:alert(1)")), "url"},
		{"a data URL", "POST", f.redirects(), body("/new", to("kind", "url", "url", "data:text/html,<script>alert(1)</script>")), "url"},
		{"an ftp URL", "POST", f.redirects(), body("/new", to("kind", "url", "url", "ftp://files.example.com/")), "url"},
		{"a URL without a host", "POST", f.redirects(), body("/new", to("kind", "url", "url", "https:///path")), "url"},
		{"a path to another host", "POST", f.redirects(), body("/new", to("kind", "url", "url", "//evil.example/")), "url"},
		{"a path to another host, backslashed", "POST", f.redirects(), body("/new", to("kind", "url", "url", `/\evil.example/`)), "url"},
		{"a relative path", "POST", f.redirects(), body("/new", to("kind", "url", "url", "setup")), "url"},
		{"a path with a line break", "POST", f.redirects(), body("/new", to("kind", "url", "url", "/setup\r\nSet-Cookie: x=1")), "url"},
		{"an empty URL", "POST", f.redirects(), body("/new", to("kind", "url", "url", "")), "url"},
		{"a URL of 2049 characters", "POST", f.redirects(), body("/new", to("kind", "url", "url", "https://example.com/"+strings.Repeat("a", 2049-len("https://example.com/")))), "url"},
		{"a path back to its source", "POST", f.redirects(), body("/new", to("kind", "url", "url", "/new/?x=1")), "url"},
		{"a change of nothing", "PATCH", f.redirect(r.ID), `{}`, ""},
		{"a null source", "PATCH", f.redirect(r.ID), `{"source":null}`, "source"},
		{"a null destination", "PATCH", f.redirect(r.ID), `{"destination":null}`, "destination"},
		{"a new source its destination leads back to", "PATCH", f.redirect(r.ID), `{"source":"/setup"}`, "source"},
		{"a new destination back to its source", "PATCH", f.redirect(r.ID), body("", to("kind", "url", "url", "/old")), "url"},
		{"an array", "PATCH", f.redirect(r.ID), `[]`, ""},
		{"a lookup without its slash", "GET", f.bySource("old"), "", "source"},
		{"a lookup of no source", "GET", f.path(f.siteID, "/redirect"), "", "source"},
		{"a lookup of 2049 characters", "GET", f.bySource("/" + strings.Repeat("a", 2048)), "", "source"},
		{"a list search of 513 characters", "GET", f.redirects() + "?search=" + strings.Repeat("a", 513), "", "search"},
		{"a page past the limit", "GET", f.redirects() + "?limit=1001", "", "limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b any
			if c.body != "" {
				b = c.body
			}
			msg := f.admin.Do(c.method, c.path, b).Expect(http.StatusBadRequest).ErrorMessage()
			if c.member != "" && !strings.Contains(msg, c.member) {
				t.Errorf("message %q does not name %s", msg, c.member)
			}
		})
	}
	if after := snapshot(); after != before {
		t.Errorf("a refused request changed something:\n%s\nwas\n%s", after, before)
	}

	// A site of 10,000 redirects takes no more.
	if _, err := f.env.DB.Pool.Exec(context.Background(), `INSERT INTO site_redirects (id, organization_id, site_id, source,
		destination_kind, destination_url, created_at, updated_at)
		SELECT 'filler-' || i, $1, $2, '/filler-' || i, 'url', '/setup', now(), now() FROM generate_series(2, 9999) i`, f.org, f.siteID); err != nil {
		t.Fatal(err)
	}
	f.admin.Do("POST", f.redirects(), body("/ten-thousandth", site)).Expect(http.StatusCreated)
	msg := f.admin.Do("POST", f.redirects(), body("/one-more", site)).Expect(http.StatusUnprocessableEntity).ErrorMessage()
	if !strings.Contains(msg, "10000") {
		t.Errorf("a full site: %q", msg)
	}
	f.admin.Do("GET", f.bySource("/one-more"), nil).Expect(http.StatusNotFound)
}

// Redirects are for those who manage the site, as its share links are:
// other members who read it are refused (403, and null and FORBIDDEN in
// GraphQL), strangers find nothing (404); nothing changes.
func TestSiteRedirectsAreForSiteManagers(t *testing.T) {
	t.Parallel()
	f := newRedirectFixture(t)
	r := decodeRedirect(t, f.admin.Do("POST", f.redirects(), `{"source":"/old","destination":{"kind":"url","url":"/setup"}}`).Expect(http.StatusCreated))
	snapshot := func() string { return string(f.admin.Do("GET", f.redirects(), nil).Expect(http.StatusOK).Body) }
	before := snapshot()

	requests := []struct{ method, path, body string }{
		{"GET", f.redirects(), ""},
		{"GET", f.bySource("/old"), ""},
		{"POST", f.redirects(), `{"source":"/mine","destination":{"kind":"url","url":"https://evil.example"}}`},
		{"PATCH", f.redirect(r.ID), `{"destination":{"kind":"url","url":"https://evil.example"}}`},
		{"DELETE", f.redirect(r.ID), ""},
	}
	const query = `query($o: ID!, $s: ID!) { site(organizationId: $o, id: $s) { id
		redirects { items { id source } } redirect(source: "/old") { redirect { id } target } } }`
	for _, who := range []struct {
		name   string
		user   *servertest.User
		status int
	}{{"editor", f.editor, http.StatusForbidden}, {"reader", f.reader, http.StatusForbidden}, {"stranger", f.stranger, http.StatusNotFound}} {
		for _, req := range requests {
			var body any
			if req.body != "" {
				body = req.body
			}
			who.user.Do(req.method, req.path, body).Expect(who.status).ErrorMessage()
		}
		out := who.user.GraphQL(query, map[string]any{"o": f.org, "s": f.siteID})
		if strings.Contains(string(out.Data), r.ID) || strings.Contains(mustJSON(t, out.Errors), r.ID) {
			t.Errorf("%s reads a redirect in GraphQL: %s %+v", who.name, out.Data, out.Errors)
		}
		want := map[int]string{http.StatusForbidden: "FORBIDDEN", http.StatusNotFound: "NOT_FOUND"}[who.status]
		var fields []string
		for _, e := range out.Errors {
			if code := e.Extensions["code"]; code != want {
				t.Errorf("%s: GraphQL error %s at %v, want %s", who.name, code, e.Path, want)
			}
			fields = append(fields, mustJSON(t, e.Path))
		}
		sort.Strings(fields)
		wantFields := map[int]string{http.StatusForbidden: `["site","redirect"] ["site","redirects"]`, http.StatusNotFound: `["site"]`}[who.status]
		if strings.Join(fields, " ") != wantFields {
			t.Errorf("%s's GraphQL errors at %v, want %s", who.name, fields, wantFields)
		}
		for _, m := range []string{
			`mutation($o: ID!, $s: ID!) { createSiteRedirect(organizationId: $o, siteId: $s, input: {source: "/mine", destination: {kind: "url", url: "/setup"}}) { id } }`,
			`mutation($o: ID!, $s: ID!, $r: ID!) { updateSiteRedirect(organizationId: $o, siteId: $s, siteRedirectId: $r, input: {source: "/mine"}) { id } }`,
			`mutation($o: ID!, $s: ID!, $r: ID!) { deleteSiteRedirect(organizationId: $o, siteId: $s, siteRedirectId: $r) }`,
		} {
			vars := map[string]any{"o": f.org, "s": f.siteID}
			if strings.Contains(m, "$r") {
				vars["r"] = r.ID
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

	// Those who manage the site read them.
	for _, u := range []*servertest.User{f.admin, f.creator} {
		var data struct {
			Site struct {
				Redirects struct{ Items []struct{ ID, Source string } }
				Redirect  struct {
					Redirect struct{ ID string }
					Target   string
				}
			}
		}
		gql(t, u, query, map[string]any{"o": f.org, "s": f.siteID}, &data)
		s := data.Site
		if len(s.Redirects.Items) != 1 || s.Redirects.Items[0].ID != r.ID || s.Redirect.Redirect.ID != r.ID || s.Redirect.Target != f.base+"/setup" {
			t.Errorf("%s's GraphQL answer: %+v", u.Email, s)
		}
	}
}

// GraphQL makes and changes redirects as REST does, naming the field at
// fault; a space's automatic redirects are read by whoever reads the
// space, and lead to the page where it is now.
func TestSiteRedirectsInGraphQL(t *testing.T) {
	t.Parallel()
	f := newRedirectFixture(t)
	vars := map[string]any{"o": f.org, "s": f.siteID}
	var created struct {
		CreateSiteRedirect struct {
			ID, Source  string
			Destination map[string]*string
		}
	}
	gql(t, f.creator, `mutation($o: ID!, $s: ID!) { createSiteRedirect(organizationId: $o, siteId: $s,
		input: {source: "/install", destination: {kind: "site-page", siteSpaceId: "`+f.guides+`", pageId: "`+f.page+`"}}) {
		id source destination { kind siteSectionId siteSpaceId pageId url } } }`, vars, &created)
	c := created.CreateSiteRedirect
	if c.Source != "/install" || *c.Destination["kind"] != "site-page" || *c.Destination["pageId"] != f.page || c.Destination["url"] != nil ||
		c.Destination["siteSectionId"] != nil {
		t.Errorf("createSiteRedirect: %+v", c)
	}
	vars["r"] = c.ID
	var updated struct {
		UpdateSiteRedirect struct {
			Source      string
			Destination struct{ Kind, URL string }
		}
	}
	gql(t, f.creator, `mutation($o: ID!, $s: ID!, $r: ID!) { updateSiteRedirect(organizationId: $o, siteId: $s, siteRedirectId: $r,
		input: {source: "/installation", destination: {kind: "url", url: "https://example.com/install"}}) { source destination { kind url } } }`, vars, &updated)
	if u := updated.UpdateSiteRedirect; u.Source != "/installation" || u.Destination.Kind != "url" || u.Destination.URL != "https://example.com/install" {
		t.Errorf("updateSiteRedirect: %+v", u)
	}
	for input, field := range map[string]string{
		`{source: "/x", destination: {kind: "url", url: "javascript:alert(1)"}}`: "destination.url",
		`{source: "x", destination: {kind: "url", url: "/setup"}}`:               "source",
		`{source: "/x", destination: {kind: "site-space"}}`:                      "destination.siteSpaceId",
	} {
		out := f.creator.GraphQL(`mutation($o: ID!, $s: ID!) { createSiteRedirect(organizationId: $o, siteId: $s, input: `+input+`) { id } }`, vars)
		if len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "BAD_REQUEST" || out.Errors[0].Extensions["field"] != field {
			t.Errorf("input %s: %+v, want BAD_REQUEST naming %s", input, out.Errors, field)
		}
	}
	out := f.creator.GraphQL(`mutation($o: ID!, $s: ID!) { createSiteRedirect(organizationId: $o, siteId: $s,
		input: {source: "/x", destination: {kind: "redirect", url: "/setup"}}) { id } }`, vars)
	if len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "BAD_REQUEST" {
		t.Errorf("an unknown kind: %+v", out.Errors)
	}
	var deleted struct{ DeleteSiteRedirect bool }
	for _, want := range []bool{true, false} {
		gql(t, f.creator, `mutation($o: ID!, $s: ID!, $r: ID!) { deleteSiteRedirect(organizationId: $o, siteId: $s, siteRedirectId: $r) }`,
			vars, &deleted)
		if deleted.DeleteSiteRedirect != want {
			t.Errorf("deleteSiteRedirect: %v, want %v", deleted.DeleteSiteRedirect, want)
		}
	}

	// A page given a new slug: its old path leads to it, for the space's
	// readers; its current path is no redirect; strangers find nothing.
	gql(t, f.admin, `mutation($s: ID!, $p: ID!) { updatePage(spaceId: $s, pageId: $p, input: {slug: "installation"}) { id } }`,
		map[string]any{"s": f.spaces[0], "p": f.page}, nil)
	const redirectQuery = `query($s: ID!, $path: String!) { space(id: $s) { pageRedirect(path: $path) { path page { id path } } } }`
	var moved struct {
		Space struct {
			PageRedirect struct {
				Path string
				Page struct{ ID, Path string }
			}
		}
	}
	gql(t, f.reader, redirectQuery, map[string]any{"s": f.spaces[0], "path": "/" + f.pagePath + "/"}, &moved)
	if r := moved.Space.PageRedirect; r.Path != f.pagePath || r.Page.ID != f.page || r.Page.Path != "installation" {
		t.Errorf("the old path: %+v", r)
	}
	for _, path := range []string{"installation", "nowhere", ""} {
		out := f.reader.GraphQL(redirectQuery, map[string]any{"s": f.spaces[0], "path": path})
		if len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "NOT_FOUND" {
			t.Errorf("path %q: %s %+v", path, out.Data, out.Errors)
		}
	}
	out = f.stranger.GraphQL(redirectQuery, map[string]any{"s": f.spaces[0], "path": f.pagePath})
	if strings.Contains(string(out.Data), f.page) || len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "NOT_FOUND" {
		t.Errorf("a stranger: %s %+v", out.Data, out.Errors)
	}
}
