package published_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

// readerFixture is an organization with a space of pages published in a
// site, and a browser for its visitors.
type readerFixture struct {
	t     *testing.T
	env   *servertest.Env
	admin *servertest.User
	org   string
	space string
	site  string
}

const createPageDocument = `mutation($s: ID!, $in: CreatePageInput!) { createPage(spaceId: $s, input: $in) { id path } }`

func newReaderFixture(t *testing.T, visibility string, opts ...servertest.Options) *readerFixture {
	t.Helper()
	env := servertest.New(t, opts...)
	f := &readerFixture{t: t, env: env, admin: env.NewUser("Alice")}
	f.org = f.admin.NewOrg("Acme")
	f.space = f.newSpace("Guides")
	f.site = f.admin.Do("POST", "/v1/orgs/"+f.org+"/sites", map[string]any{"title": "Acme Docs", "visibility": visibility,
		"spaces": []string{f.space}}).Expect(http.StatusCreated).String("id")
	return f
}

// newSpace creates a space with a few pages: a front page, a page with a
// child, and a hidden page.
func (f *readerFixture) newSpace(title string) string {
	f.t.Helper()
	space := f.admin.Do("POST", "/v1/orgs/"+f.org+"/spaces", map[string]any{"title": title}).Expect(http.StatusCreated).String("id")
	intro := f.page(space, map[string]any{"title": "Introduction", "markdown": "Welcome to **" + title + "**.\n\n" +
		"Read [the setup](setup.md) next.\n\n## First steps\n\nSome text.\n\n{% hint style=\"info\" %}\nA hint.\n{% endhint %}\n"})
	_ = intro
	setup := f.page(space, map[string]any{"title": "Setup", "description": "How to set things up", "markdown": "## Install\n\nRun it.\n"})
	f.page(space, map[string]any{"title": "Advanced", "parent": setup, "markdown": "Deep [back](../introduction.md).\n"})
	f.page(space, map[string]any{"title": "Secret notes", "hidden": true, "markdown": "Hidden but reachable.\n"})
	return space
}

// page creates a page in space and returns its id.
func (f *readerFixture) page(space string, in map[string]any) string {
	f.t.Helper()
	out := f.admin.GraphQL(createPageDocument, map[string]any{"s": space, "in": in})
	if len(out.Errors) > 0 {
		f.t.Fatalf("createPage: %+v", out.Errors)
	}
	var data struct{ CreatePage struct{ ID string } }
	if err := json.Unmarshal(out.Data, &data); err != nil {
		f.t.Fatal(err)
	}
	return data.CreatePage.ID
}

func (f *readerFixture) sitePath(rest ...string) string {
	return "/v1/orgs/" + f.org + "/sites/" + f.site + strings.Join(rest, "")
}

// publish publishes the site and returns its published address.
func (f *readerFixture) publish() string {
	f.t.Helper()
	f.admin.Do("POST", f.sitePath("/publish"), nil).Expect(http.StatusOK)
	out := f.admin.GraphQL(`query($o: ID!, $s: ID!, $k: String) { site(organizationId: $o, id: $s, shareKey: $k) { urls { published } } }`,
		map[string]any{"o": f.org, "s": f.site, "k": f.shareKey()})
	var data struct {
		Site struct{ URLs struct{ Published string } }
	}
	if err := json.Unmarshal(out.Data, &data); err != nil || data.Site.URLs.Published == "" {
		f.t.Fatalf("urls.published: %s %v", out.Data, out.Errors)
	}
	return data.Site.URLs.Published
}

func (f *readerFixture) shareKey() string {
	out := f.admin.GraphQL(`query($o: ID!, $s: ID!) { site(organizationId: $o, id: $s) { shareKey } }`, map[string]any{"o": f.org, "s": f.site})
	var data struct{ Site struct{ ShareKey string } }
	if err := json.Unmarshal(out.Data, &data); err != nil {
		f.t.Fatal(err)
	}
	return data.Site.ShareKey
}

// visitor is a browser: it keeps cookies and does not follow redirects.
type visitor struct {
	t      *testing.T
	client *http.Client
}

func newVisitor(t *testing.T) *visitor {
	jar, _ := cookiejar.New(nil)
	return &visitor{t: t, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (v *visitor) get(u string, header ...string) page {
	v.t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		v.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	res, err := v.client.Do(req)
	if err != nil {
		v.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return page{status: res.StatusCode, header: res.Header, body: string(b)}
}

func (p page) expect(t *testing.T, status int, contains ...string) page {
	t.Helper()
	if p.status != status {
		t.Fatalf("status %d, want %d: %.600s", p.status, status, p.body)
	}
	for _, s := range contains {
		if !strings.Contains(p.body, s) {
			t.Errorf("the page lacks %q: %.3000s", s, p.body)
		}
	}
	return p
}

func (p page) lacks(t *testing.T, absent ...string) page {
	t.Helper()
	for _, s := range absent {
		if strings.Contains(p.body, s) {
			t.Errorf("the page shows %q", s)
		}
	}
	return p
}

func TestPublicSiteServesItsPages(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	base := f.publish()
	if want := f.env.URL + "/published/" + f.org + "/" + f.site; base != want {
		t.Fatalf("urls.published = %q, want %q", base, want)
	}
	v := newVisitor(t)
	front := v.get(base).expect(t, http.StatusOK,
		"<title>Introduction | Acme Docs</title>", "Welcome to <strong>Guides</strong>", `href="`+"/published/"+f.org+"/"+f.site+`/setup"`,
		">Setup</a>", "On this page", `href="#first-steps"`, `<link rel="canonical" href="`+base+`/">`)
	// The pages under Setup are shown where Setup is open.
	front.lacks(t, "Secret notes", "{%", ">Advanced</a>")
	if csp := front.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
	if front.header.Get("X-Robots-Tag") != "" {
		t.Errorf("a public site is indexed: X-Robots-Tag %q", front.header.Get("X-Robots-Tag"))
	}
	// A nested page, with its breadcrumbs, its description, and a relative
	// link resolved to its published address.
	v.get(base+"/setup/advanced").expect(t, http.StatusOK, "<h1>Advanced</h1>", `aria-label="Breadcrumbs"`,
		`href="/published/`+f.org+`/`+f.site+`/introduction"`, `rel="prev"`)
	v.get(base+"/setup").expect(t, http.StatusOK, "How to set things up", `rel="next"`, ">Advanced</a>")
	// A hidden page is left out of the navigation, and its address works.
	v.get(base+"/secret-notes").expect(t, http.StatusOK, "Hidden but reachable.")
	// A page that is not there: the site's own not-found page.
	v.get(base+"/nowhere").expect(t, http.StatusNotFound, "Page not found", ">Setup</a>")
	// The stylesheet and script the page names are served, for good.
	style := between(front.body, `<link rel="stylesheet" href="`, `"`)
	css := v.get(f.env.URL+style).expect(t, http.StatusOK, "--primary")
	if !strings.Contains(css.header.Get("Cache-Control"), "immutable") {
		t.Errorf("stylesheet Cache-Control %q", css.header.Get("Cache-Control"))
	}
}

// Every address that leads to no site a visitor may read answers the same
// page: it does not tell a site that is not published from one that never
// existed, nor one of another organization.
func TestAddressesOfNoSiteAnswerAlike(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	v := newVisitor(t)
	unpublished := v.get(f.env.URL+"/published/"+f.org+"/"+f.site).expect(t, http.StatusNotFound)
	for _, u := range []string{
		"/published/" + f.org + "/no-such-site",
		"/published/no-such-org/" + f.site,
		"/published/" + f.org,
		"/published/",
	} {
		got := v.get(f.env.URL + u)
		if got.status != http.StatusNotFound || got.body != unpublished.body {
			t.Errorf("%s: %d %.200s, want the same 404 as an unpublished site", u, got.status, got.body)
		}
	}
	base := f.publish()
	v.get(base).expect(t, http.StatusOK)
	f.admin.Do("POST", f.sitePath("/unpublish"), nil).Expect(http.StatusOK)
	if got := v.get(base); got.status != http.StatusNotFound || got.body != unpublished.body {
		t.Errorf("unpublished: %d %.200s", got.status, got.body)
	}
	// Another organization's site is never reached through this one's
	// address.
	other := f.env.NewUser("Mallory")
	otherOrg := other.NewOrg("Other")
	if got := v.get(f.env.URL + "/published/" + otherOrg + "/" + f.site); got.status != http.StatusNotFound || got.body != unpublished.body {
		t.Errorf("another organization's address: %d", got.status)
	}
}

func TestUnlistedSiteIsNotIndexed(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "unlisted")
	p := newVisitor(t).get(f.publish()).expect(t, http.StatusOK, `<meta name="robots" content="noindex">`)
	if p.header.Get("X-Robots-Tag") != "noindex" {
		t.Errorf("X-Robots-Tag = %q", p.header.Get("X-Robots-Tag"))
	}
}

func TestShareLinkSiteOpensToItsKey(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "share-link")
	withKey := f.publish()
	u, err := url.Parse(withKey)
	if err != nil || u.Query().Get("share") != f.shareKey() {
		t.Fatalf("urls.published = %q: no share key", withKey)
	}
	base := f.env.URL + u.Path
	anonymous := newVisitor(t)
	notFound := anonymous.get(base).expect(t, http.StatusNotFound)
	if got := anonymous.get(base + "?share=wrong"); got.status != http.StatusNotFound || got.body != notFound.body {
		t.Errorf("a wrong key: %d", got.status)
	}
	// A member's API token is no visitor's proof.
	if got := anonymous.get(base, "Authorization", "Bearer "+f.admin.Token); got.status != http.StatusNotFound {
		t.Errorf("a member's token opened a share-link site: %d", got.status)
	}
	holder := newVisitor(t)
	holder.get(withKey).expect(t, http.StatusOK, "Welcome to")
	// The key is kept for the site: its other pages open without it.
	holder.get(base+"/setup").expect(t, http.StatusOK, "Install")
	if p := holder.get(base + "/setup"); p.header.Get("X-Robots-Tag") != "noindex" || !strings.Contains(p.header.Get("Cache-Control"), "private") {
		t.Errorf("a share-link page: X-Robots-Tag %q, Cache-Control %q", p.header.Get("X-Robots-Tag"), p.header.Get("Cache-Control"))
	}
}

func TestVisitorAuthSiteNeedsAToken(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "visitor-auth")
	f.admin.Do("POST", f.sitePath("/publish"), nil).Expect(http.StatusOK)
	newVisitor(t).get(f.env.URL+"/published/"+f.org+"/"+f.site).expect(t, http.StatusUnauthorized, "Sign-in required").
		lacks(t, "Welcome to", "Introduction")
}

func between(s, start, end string) string {
	_, after, ok := strings.Cut(s, start)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(after, end)
	return v
}

func TestSiteOnItsOwnHostname(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	f.admin.Do("PATCH", f.sitePath(), map[string]any{"hostname": "docs.acme.example"}).Expect(http.StatusOK)
	if got := f.publish(); got != "https://docs.acme.example" {
		t.Fatalf("urls.published = %q", got)
	}
	v := newVisitor(t)
	home := v.get(f.env.URL+"/", "Host", "docs.acme.example").expect(t, http.StatusOK, "Welcome to", `href="/setup"`)
	style := between(home.body, `<link rel="stylesheet" href="`, `"`)
	v.get(f.env.URL+style, "Host", "docs.acme.example").expect(t, http.StatusOK)
	// The site's host serves the site alone: not the API.
	v.get(f.env.URL+"/v1/orgs", "Host", "docs.acme.example", "Authorization", "Bearer "+f.admin.Token).expect(t, http.StatusNotFound, "Page not found")
	// Another host is not this site.
	if p := v.get(f.env.URL+"/", "Host", "other.acme.example"); strings.Contains(p.body, "Welcome to") {
		t.Errorf("another host served the site: %d", p.status)
	}
}

// Every urls.app address the API hands out opens a page about its object.
func TestAppAddressesOpenAPage(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	v := newVisitor(t)
	for _, loc := range []string{"/v1/orgs/" + f.org, "/v1/spaces/" + f.space, f.sitePath()} {
		app := f.admin.Do("GET", loc, nil).Expect(http.StatusOK).JSON()["urls"].(map[string]any)["app"].(string)
		v.get(app).expect(t, http.StatusOK, "over REST", f.env.URL+loc)
	}
	v.get(f.env.URL+"/app/nothing/here").expect(t, http.StatusNotFound, "names nothing")
}

// Every published address the API hands out is served: the site's, its
// sections' and site spaces' (urls.published), and a space's own, which
// leads to the site that shows it; a deleted site's answers as one that
// never existed.
func TestEveryPublishedAddressIsServed(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	other := f.newSpace("Reference")
	section := f.admin.Do("POST", f.sitePath("/sections"), map[string]any{"spaceId": other, "title": "Reference"}).Expect(http.StatusCreated).String("id")
	f.admin.Do("PATCH", f.sitePath("/sections/"+section), map[string]any{"path": "reference"}).Expect(http.StatusOK)
	base := f.publish()
	v := newVisitor(t)
	for _, s := range f.admin.Do("GET", f.sitePath("/sections"), nil).Expect(http.StatusOK).JSON()["items"].([]any) {
		u := s.(map[string]any)["urls"].(map[string]any)["published"].(string)
		v.get(u).expect(t, http.StatusOK, "Welcome to")
	}
	for _, ss := range f.admin.Do("GET", f.sitePath("/site-spaces"), nil).Expect(http.StatusOK).JSON()["items"].([]any) {
		m := ss.(map[string]any)
		u := m["urls"].(map[string]any)["published"].(string)
		title := m["space"].(map[string]any)["title"].(string)
		v.get(u).expect(t, http.StatusOK, "Welcome to <strong>"+title+"</strong>")
	}
	// A space's own published address (it has one when it is not private).
	spaceURL := f.admin.Do("PATCH", "/v1/spaces/"+other, map[string]any{"visibility": "public"}).Expect(http.StatusOK).
		JSON()["urls"].(map[string]any)["published"].(string)
	p := v.get(spaceURL)
	if p.status != http.StatusFound || !strings.HasSuffix(p.header.Get("Location"), strings.TrimPrefix(base, f.env.URL)+"/reference/") {
		t.Errorf("a space's published address: %d → %q", p.status, p.header.Get("Location"))
	}
	draft := f.admin.Do("POST", "/v1/orgs/"+f.org+"/spaces", map[string]any{"title": "Draft"}).Expect(http.StatusCreated).String("id")
	draftURL := f.admin.Do("PATCH", "/v1/spaces/"+draft, map[string]any{"visibility": "unlisted"}).Expect(http.StatusOK).
		JSON()["urls"].(map[string]any)["published"].(string)
	v.get(draftURL).expect(t, http.StatusNotFound, "not published in a site")
	unknown := v.get(f.env.URL + "/published/" + f.org + "/no-such-site")
	f.admin.Do("DELETE", f.sitePath(), nil).Expect(http.StatusNoContent)
	if p := v.get(base); p.status != http.StatusNotFound || p.body != unknown.body {
		t.Errorf("a deleted site: %d %.200s", p.status, p.body)
	}
}

// Sections in groups are tabs under their group's tab, which opens a list
// of them without script; the customization's title is the site's.
func TestSectionGroupsAreTabs(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	var sections []string
	for _, title := range []string{"REST API", "GraphQL API"} {
		space := f.newSpace(title)
		id := f.admin.Do("POST", f.sitePath("/sections"), map[string]any{"spaceId": space, "title": title}).Expect(http.StatusCreated).String("id")
		sections = append(sections, id)
	}
	f.admin.Do("POST", f.sitePath("/section-groups"), map[string]any{"title": "APIs", "sections": sections}).Expect(http.StatusCreated)
	ss := f.admin.Do("GET", f.sitePath("/site-spaces"), nil).Expect(http.StatusOK).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)
	f.admin.Do("PATCH", f.sitePath("/site-spaces/"+ss+"/customization"), map[string]any{"title": "Acme Developer Hub"}).Expect(http.StatusOK)
	base := f.publish()
	newVisitor(t).get(base).expect(t, http.StatusOK, `<summary>APIs</summary>`, ">REST API</a>", ">GraphQL API</a>",
		"<title>Introduction | Acme Developer Hub</title>")
	for _, s := range f.admin.Do("GET", f.sitePath("/sections"), nil).Expect(http.StatusOK).JSON()["items"].([]any) {
		u := s.(map[string]any)["urls"].(map[string]any)["published"].(string)
		newVisitor(t).get(u).expect(t, http.StatusOK, `<summary>APIs</summary>`)
	}
}
