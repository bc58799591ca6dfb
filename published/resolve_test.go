package published_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/graph"
)

// URL resolution for custom front ends (POST /v1/urls/published, GitBook's
// resolvePublishedContentByUrl): what a published address shows one
// visitor, decided as the reader decides it, with a visitor API token to
// read that content as that visitor.

// resolved is a resolution's answer: GitBook's PublishedSiteContent, or a
// redirect.
type resolved struct {
	Organization, Site, SiteSection, SiteSpace, Space, Revision string
	ChangeRequest                                               *string
	Pathname, BasePath, SiteBasePath, CanonicalURL              string
	Complete                                                    bool
	ShareKey, ContextID                                         string
	APIToken                                                    string
	Target, Redirect                                            string
}

// resolve asks what address u shows the visitor of body (merged into the
// request: visitor, redirectOnError), as caller.
func resolve(t *testing.T, caller *servertest.User, u string, body map[string]any) (*servertest.Response, resolved) {
	t.Helper()
	in := map[string]any{"url": u}
	for k, v := range body {
		in[k] = v
	}
	res := caller.Do("POST", "/v1/urls/published", in)
	var out resolved
	if res.Status == http.StatusOK {
		res.Decode(&out)
	}
	return res, out
}

// sectionedSite is a public site of two sections: the default one, Guides,
// with two variants (the default, and v2 at "v2"), and Reference at
// "reference"; Guides holds a group page.
type sectionedSite struct {
	*readerFixture
	base                              string
	guides, reference                 string // sections
	main, v2, ref                     string // site spaces
	v2Space, refSpace, otherPublished string
}

func newSectionedSite(t *testing.T) *sectionedSite {
	t.Helper()
	f := &sectionedSite{readerFixture: newReaderFixture(t, "public")}
	f.page(f.space, map[string]any{"title": "Topics", "type": "group"})
	topics := f.pageID(f.space, "topics")
	f.page(f.space, map[string]any{"title": "First topic", "parent": topics, "markdown": "The first."})
	f.refSpace = f.newSpace("Reference")
	f.reference = f.admin.Do("POST", f.sitePath("/sections"), map[string]any{"spaceId": f.refSpace, "title": "Reference"}).
		Expect(http.StatusCreated).String("id")
	f.admin.Do("PATCH", f.sitePath("/sections/"+f.reference), map[string]any{"path": "reference"}).Expect(http.StatusOK)
	for _, s := range f.admin.Do("GET", f.sitePath("/sections"), nil).Expect(http.StatusOK).JSON()["items"].([]any) {
		if m := s.(map[string]any); m["id"] != f.reference {
			f.guides = m["id"].(string)
			f.main = m["siteSpaces"].([]any)[0].(map[string]any)["id"].(string)
		}
	}
	f.v2Space = f.newSpace("Guides v2")
	f.v2 = f.admin.Do("POST", f.sitePath("/site-spaces"), map[string]any{"spaceId": f.v2Space, "sectionId": f.guides}).
		Expect(http.StatusCreated).String("id")
	f.admin.Do("PATCH", f.sitePath("/site-spaces/"+f.v2), map[string]any{"path": "v2"}).Expect(http.StatusOK)
	for _, ss := range f.admin.Do("GET", f.sitePath("/site-spaces"), nil).Expect(http.StatusOK).JSON()["items"].([]any) {
		if m := ss.(map[string]any); m["space"].(map[string]any)["id"] == f.refSpace {
			f.ref = m["id"].(string)
		}
	}
	f.base = f.publish()
	// Another published site of the organization, which the visitor of
	// this one does not read.
	f.otherPublished = f.newSpace("Elsewhere")
	other := f.admin.Do("POST", "/v1/orgs/"+f.org+"/sites", map[string]any{"title": "Other", "visibility": "public",
		"spaces": []string{f.otherPublished}}).Expect(http.StatusCreated).String("id")
	f.admin.Do("POST", "/v1/orgs/"+f.org+"/sites/"+other+"/publish", nil).Expect(http.StatusOK)
	return f
}

// revision is space's live revision.
func (f *readerFixture) revision(space string) string {
	f.t.Helper()
	return f.admin.Do("GET", "/v1/spaces/"+space+"/content", nil).Expect(http.StatusOK).String("id")
}

// Every form of published address resolves to what the reader serves
// there: the site's root, a page, a section, a variant, the default
// section named, a hidden page; a group leads to its first page; what the
// reader answers 404 for is not found; and the site is named by its id or
// its basename alike, its canonical address by its basename.
func TestResolvingEveryFormOfAddress(t *testing.T) {
	t.Parallel()
	f := newSectionedSite(t)
	f.admin.Do("PATCH", f.sitePath(), map[string]any{"basename": "acme"}).Expect(http.StatusOK)
	prefix := "/published/" + f.org + "/" + f.site
	canonical := f.env.URL + "/published/" + f.org + "/acme"
	guides, v2, ref := f.revision(f.space), f.revision(f.v2Space), f.revision(f.refSpace)
	for _, c := range []struct {
		name                     string
		path                     string
		section, siteSpace, rev  string
		pathname, base, location string
	}{
		{"the site's root", "", f.guides, f.main, guides, "", "/", ""},
		{"the site's root, with a slash", "/", f.guides, f.main, guides, "", "/", ""},
		{"a page", "/setup", f.guides, f.main, guides, "setup", "/", "setup"},
		{"a nested page", "/setup/advanced", f.guides, f.main, guides, "setup/advanced", "/", "setup/advanced"},
		{"a hidden page", "/secret-notes", f.guides, f.main, guides, "secret-notes", "/", "secret-notes"},
		{"a variant", "/v2", f.guides, f.v2, v2, "", "/v2/", ""},
		{"a variant's page", "/v2/setup", f.guides, f.v2, v2, "setup", "/v2/", "v2/setup"},
		{"a section", "/reference", f.reference, f.ref, ref, "", "/reference/", "reference/"},
		{"a section's page", "/reference/setup/advanced", f.reference, f.ref, ref, "setup/advanced", "/reference/", "reference/setup/advanced"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, got := resolve(t, f.admin, f.base+c.path, nil)
			if res.Status != http.StatusOK {
				t.Fatalf("%d %s", res.Status, res.Body)
			}
			want := resolved{Organization: f.org, Site: f.site, SiteSection: c.section, SiteSpace: c.siteSpace, Space: got.Space,
				Revision: c.rev, Pathname: c.pathname, BasePath: prefix + c.base, SiteBasePath: prefix + "/",
				CanonicalURL: canonical + strings.TrimSuffix(c.base, "/") + "/" + c.pathname, Complete: true, APIToken: got.APIToken}
			if got != want {
				t.Errorf("resolved\n %+v\nwant\n %+v", got, want)
			}
			if !graph.IsVisitorToken(got.APIToken) {
				t.Errorf("apiToken %.40s… is no visitor API token", got.APIToken)
			}
			// The reader serves the address, and the page resolved.
			if p := newVisitor(t).get(f.base + c.path); p.status != http.StatusOK {
				t.Errorf("the reader: %d", p.status)
			}
			// By the site's basename alike.
			_, byName := resolve(t, f.admin, strings.Replace(f.base, f.site, "acme", 1)+c.path, nil)
			if byName.SiteSpace != c.siteSpace || byName.Pathname != c.pathname || byName.BasePath != "/published/"+f.org+"/acme"+c.base {
				t.Errorf("by the basename: %+v", byName)
			}
		})
	}

	// A group leads to its first page, in the address's own form.
	res, got := resolve(t, f.admin, f.base+"/topics?share=x", nil)
	res.Expect(http.StatusOK)
	if got.Target != "content" || got.Redirect != f.base+"/topics/first-topic?share=x" {
		t.Errorf("a group: %+v", got)
	}
	newVisitor(t).get(f.base+"/topics").expect(t, http.StatusFound)

	// What the reader answers 404 for, resolution does not find.
	for _, u := range []string{f.base + "/nowhere", f.base + "/v2/nowhere", f.base + "/reference/v2",
		f.env.URL + "/published/" + f.org + "/no-such-site", f.env.URL + "/published/" + f.org,
		f.env.URL + "/elsewhere/" + f.org + "/" + f.site, "https://docs.nowhere.example/setup"} {
		if res, _ := resolve(t, f.admin, u, nil); res.Status != http.StatusNotFound {
			t.Errorf("%s: %d %s", u, res.Status, res.Body)
		}
		if !strings.HasPrefix(u, f.env.URL) {
			continue
		}
		if p := newVisitor(t).get(u); p.status != http.StatusNotFound {
			t.Errorf("the reader serves %s: %d", u, p.status)
		}
	}
	// A space's own published address leads to the site showing it.
	spaceURL := f.admin.Do("PATCH", "/v1/spaces/"+f.refSpace, map[string]any{"visibility": "public"}).Expect(http.StatusOK).
		JSON()["urls"].(map[string]any)["published"].(string)
	if res, got := resolve(t, f.admin, spaceURL, nil); res.Status != http.StatusOK || got.Target != "content" ||
		got.Redirect != canonical+"/reference/" {
		t.Errorf("a space's address: %d %+v", res.Status, got)
	}

	// An address that is none is the caller's mistake: 400, named.
	for _, u := range []any{"not a url", "/published/" + f.org + "/" + f.site, "ftp://example.com/x", f.base + "/" + strings.Repeat("a", 2100), 42} {
		res, _ := resolve(t, f.admin, "", map[string]any{"url": u})
		if res.Status != http.StatusBadRequest || !strings.Contains(res.ErrorMessage(), "url") {
			t.Errorf("url %.60v: %d %s", u, res.Status, res.Body)
		}
	}
}

// The visitor API token of a resolution reads, through /v1 and /graphql,
// what its visitor reads on its site (the published site, the spaces it
// shows, their live content and page documents), and nothing else: not
// another site of the organization, a space the site does not show, a
// past revision, the organization, its members, change requests, nor any
// write; it does not resolve addresses either.
func TestVisitorAPITokenReadsWhatItsVisitorReads(t *testing.T) {
	t.Parallel()
	f := newSectionedSite(t)
	_, got := resolve(t, f.admin, f.base+"/setup", nil)
	token := got.APIToken
	setup := f.pageID(f.space, "setup")
	before := got.Revision
	// A later edit: the revision resolved is past, the space's content
	// is the new one.
	f.page(f.space, map[string]any{"title": "Later", "markdown": "Added later."})
	live := f.revision(f.space)
	cr := f.admin.Do("POST", "/v1/spaces/"+f.space+"/change-requests", map[string]any{"subject": "Draft"}).Expect(http.StatusCreated).String("id")
	private := f.admin.Do("POST", "/v1/orgs/"+f.org+"/spaces", map[string]any{"title": "Private"}).Expect(http.StatusCreated).String("id")
	sitePath := "/v1/orgs/" + f.org + "/sites/" + f.site
	otherSite := f.admin.Do("GET", "/v1/orgs/"+f.org+"/sites?space="+f.otherPublished, nil).Expect(http.StatusOK).
		JSON()["items"].([]any)[0].(map[string]any)["id"].(string)
	as := func(method, path string, body any) *servertest.Response { return f.env.Do(method, path, token, body) }

	for _, c := range []struct {
		method, path string
		status       int
		contains     string
		body         any
	}{
		{"GET", sitePath + "/published", http.StatusOK, `"Acme Docs"`, nil},
		{"GET", sitePath + "/structure", http.StatusOK, `"reference"`, nil},
		{"GET", "/v1/spaces/" + f.space, http.StatusOK, `"Guides"`, nil},
		{"GET", "/v1/spaces/" + f.refSpace + "/content", http.StatusOK, `"revision"`, nil},
		{"GET", "/v1/spaces/" + f.space + "/content/path/later", http.StatusOK, `"Later"`, nil},
		{"GET", "/v1/spaces/" + f.space + "/revisions/" + live + "/page/" + setup + "/document", http.StatusOK, `"object":"document"`, nil},
		{"GET", "/v1/spaces/" + f.space + "/revisions/" + live + "/page/" + setup + "?format=markdown", http.StatusOK, "Run it.", nil},
		// A past revision is not published; nor another site, a space it
		// does not show, a change request.
		{"GET", "/v1/spaces/" + f.space + "/revisions/" + before + "/page/" + setup + "/document", http.StatusNotFound, "", nil},
		{"GET", "/v1/orgs/" + f.org + "/sites/" + otherSite + "/published", http.StatusNotFound, "", nil},
		{"GET", "/v1/spaces/" + f.otherPublished, http.StatusNotFound, "", nil},
		{"GET", "/v1/spaces/" + private, http.StatusNotFound, "", nil},
		{"GET", "/v1/spaces/" + f.space + "/change-requests/" + cr, http.StatusNotFound, "", nil},
		// A visitor is no member: what needs one is unauthenticated.
		{"GET", "/v1/user", http.StatusUnauthorized, "", nil},
		{"GET", "/v1/orgs", http.StatusUnauthorized, "", nil},
		{"GET", "/v1/orgs/" + f.org, http.StatusUnauthorized, "", nil},
		{"GET", "/v1/orgs/" + f.org + "/members", http.StatusUnauthorized, "", nil},
		{"GET", sitePath + "/share-links", http.StatusUnauthorized, "", nil},
		{"PATCH", "/v1/spaces/" + f.space, http.StatusUnauthorized, "", map[string]any{"title": "Pwned"}},
		{"POST", "/v1/spaces/" + f.space + "/change-requests", http.StatusUnauthorized, "", map[string]any{"subject": "Pwned"}},
		{"POST", sitePath + "/unpublish", http.StatusUnauthorized, "", nil},
		{"POST", "/v1/urls/published", http.StatusUnauthorized, "", map[string]any{"url": f.base}},
		{"GET", "/v1/urls/published?url=" + url.QueryEscape(f.base), http.StatusUnauthorized, "", nil},
	} {
		res := as(c.method, c.path, c.body)
		if res.Status != c.status || !strings.Contains(string(res.Body), c.contains) {
			t.Errorf("%s %s: %d %.300s, want %d with %q", c.method, c.path, res.Status, res.Body, c.status, c.contains)
		}
	}
	// Nothing it sent changed anything.
	f.admin.Do("GET", "/v1/spaces/"+f.space, nil).Expect(http.StatusOK)
	if title := f.admin.Do("GET", "/v1/spaces/"+f.space, nil).String("title"); title != "Guides" {
		t.Errorf("the space's title is %q", title)
	}
	f.admin.Do("GET", sitePath+"/published", nil).Expect(http.StatusOK)

	// Over GraphQL: the roots a visitor may ask, and no other.
	gql := func(query string, vars map[string]any) (int, map[string]any) {
		res := as("POST", "/graphql", map[string]any{"query": query, "variables": vars})
		var out map[string]any
		_ = json.Unmarshal(res.Body, &out)
		return res.Status, out
	}
	status, out := gql(`query($o: ID!, $s: ID!, $sp: ID!) { publishedContentSite(organizationId: $o, siteId: $s) { site { title } }
		space(id: $sp) { title content { pageByPath(path: "setup") { title markdown } } } }`,
		map[string]any{"o": f.org, "s": f.site, "sp": f.refSpace})
	if status != http.StatusOK || out["errors"] != nil || !strings.Contains(mustMarshal(t, out), "Run it.") {
		t.Errorf("the visitor's reads over GraphQL: %d %v", status, out)
	}
	for _, q := range []string{`{ viewer { id } }`, `{ organizations { items { id } } }`,
		`mutation($sp: ID!) { updateSpace(id: $sp, input: {title: "Pwned"}) { id } }`,
		`query($o: ID!) { organization(id: $o) { title } }`} {
		status, out := gql(q, map[string]any{"sp": f.space, "o": f.org})
		if status != http.StatusUnauthorized && (out["errors"] == nil || strings.Contains(mustMarshal(t, out["data"]), "Acme")) {
			t.Errorf("%s as a visitor: %d %v", q, status, out)
		}
	}
	// A websocket is no way in for it.
	res := f.env.DoWith("GET", "/graphql", token, nil, http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"},
		"Sec-WebSocket-Version": {"13"}, "Sec-WebSocket-Key": {"dGhlIHNhbXBsZSBub25jZQ=="}, "Sec-WebSocket-Protocol": {"graphql-transport-ws"}})
	if res.Status != http.StatusUnauthorized {
		t.Errorf("a websocket with a visitor API token: %d %s", res.Status, res.Body)
	}
	// Another token is not this one: a visitor API token altered, or made
	// with another key, is no token.
	parts := strings.Split(token, ".")
	for name, bad := range map[string]string{
		"altered":        parts[0] + "." + parts[1] + "x." + parts[2],
		"another key":    signedLike(t, parts[1], []byte("not the server's key")),
		"without prefix": "x" + token,
	} {
		if res := f.env.Do("GET", "/v1/spaces/"+f.space, bad, nil); res.Status != http.StatusUnauthorized {
			t.Errorf("%s: %d", name, res.Status)
		}
		gql := f.env.Do("POST", "/graphql", bad, map[string]any{"query": `query($sp: ID!) { space(id: $sp) { title } }`,
			"variables": map[string]any{"sp": f.space}})
		if gql.Status != http.StatusUnauthorized || strings.Contains(string(gql.Body), "Guides") {
			t.Errorf("%s over GraphQL: %d %.200s", name, gql.Status, gql.Body)
		}
	}
}

// signedLike is a token of payload (encoded) in a visitor API token's
// form, signed with key.
func signedLike(t *testing.T, payload string, key []byte) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		t.Fatal(err)
	}
	var claims jwt.MapClaims
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
	tok.Header["kid"] = "docsapi-site-visitor"
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	if !graph.IsVisitorToken(s) {
		t.Fatalf("%.40s is not in a visitor API token's form", s)
	}
	return s
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A site on its own hostname resolves at that host's root: its base paths
// are the host's, its canonical address on it; another host names nothing.
func TestResolvingASiteOnItsHostname(t *testing.T) {
	t.Parallel()
	f := newSectionedSite(t)
	f.admin.Do("PATCH", f.sitePath(), map[string]any{"hostname": "docs.acme.example"}).Expect(http.StatusOK)
	for _, c := range []struct{ u, siteSpace, pathname, base, canonical string }{
		{"https://docs.acme.example", f.main, "", "/", "https://docs.acme.example/"},
		{"https://DOCS.acme.example:443/setup/advanced", f.main, "setup/advanced", "/", "https://docs.acme.example/setup/advanced"},
		{"http://docs.acme.example/v2/setup", f.v2, "setup", "/v2/", "https://docs.acme.example/v2/setup"},
		{"https://docs.acme.example/reference/", f.ref, "", "/reference/", "https://docs.acme.example/reference/"},
	} {
		res, got := resolve(t, f.admin, c.u, nil)
		if res.Status != http.StatusOK || got.SiteSpace != c.siteSpace || got.Pathname != c.pathname || got.BasePath != c.base ||
			got.SiteBasePath != "/" || got.CanonicalURL != c.canonical {
			t.Errorf("%s: %d %+v", c.u, res.Status, got)
		}
	}
	for _, u := range []string{"https://other.acme.example/setup", "https://docs.acme.example/nowhere", "https://localhost/setup"} {
		if res, _ := resolve(t, f.admin, u, nil); res.Status != http.StatusNotFound {
			t.Errorf("%s: %d", u, res.Status)
		}
	}
}

// A share-link site resolves with a key in the address, the site's own or
// an active share link's, and not without; the visitor API token of a
// link's key works while the link does, and no longer once it is turned
// off or deleted.
func TestResolvingAShareLinkSite(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "share-link")
	own := f.publish()
	base := strings.SplitN(own, "?", 2)[0]
	link := f.admin.Do("POST", f.sitePath("/share-links"), map[string]any{"name": "Partners"}).Expect(http.StatusCreated).JSON()
	linkURL := link["urls"].(map[string]any)["published"].(string)
	linkKey := strings.SplitN(linkURL, "?share=", 2)[1]
	linkPath := f.sitePath("/share-links/" + link["id"].(string))

	for name, u := range map[string]string{"no key": base + "/setup", "a wrong key": base + "/setup?share=nope",
		"another site's key": base + "/setup?share=" + newReaderFixture(t, "share-link").shareKey()} {
		if res, _ := resolve(t, f.admin, u, nil); res.Status != http.StatusNotFound {
			t.Errorf("%s: %d %s", name, res.Status, res.Body)
		}
	}
	res, byOwn := resolve(t, f.admin, base+"/setup?share="+f.shareKey(), nil)
	if res.Status != http.StatusOK || byOwn.ShareKey != f.shareKey() || byOwn.Pathname != "setup" {
		t.Fatalf("the site's own key: %d %+v", res.Status, byOwn)
	}
	res, byLink := resolve(t, f.admin, base+"/setup?share="+linkKey, nil)
	if res.Status != http.StatusOK || byLink.ShareKey != linkKey {
		t.Fatalf("a link's key: %d %+v", res.Status, byLink)
	}
	if strings.Contains(byLink.APIToken, linkKey) || strings.Contains(decodedPayload(t, byLink.APIToken), linkKey) {
		t.Error("the visitor API token carries the share key itself")
	}
	reads := func(token string) int {
		return f.env.Do("GET", "/v1/spaces/"+f.space+"/content/path/setup", token, nil).Status
	}
	if reads(byLink.APIToken) != http.StatusOK || reads(byOwn.APIToken) != http.StatusOK {
		t.Fatal("the visitor API tokens do not read the site")
	}
	f.admin.Do("PATCH", linkPath, map[string]any{"active": false}).Expect(http.StatusOK)
	if got := reads(byLink.APIToken); got != http.StatusUnauthorized {
		t.Errorf("the token of a link turned off: %d", got)
	}
	if res, _ := resolve(t, f.admin, linkURL, nil); res.Status != http.StatusNotFound {
		t.Errorf("resolving with a link turned off: %d", res.Status)
	}
	if reads(byOwn.APIToken) != http.StatusOK {
		t.Error("the site's own key's token stopped with the link")
	}
	f.admin.Do("PATCH", linkPath, map[string]any{"active": true}).Expect(http.StatusOK)
	if got := reads(byLink.APIToken); got != http.StatusOK {
		t.Errorf("the token of a link turned on again: %d", got)
	}
	f.admin.Do("DELETE", linkPath, nil).Expect(http.StatusResetContent)
	if got := reads(byLink.APIToken); got != http.StatusUnauthorized {
		t.Errorf("the token of a deleted link: %d", got)
	}
	// A site made public opens to anyone, its old visitors too; one made
	// visitor-auth, to no share key.
	f.admin.Do("PATCH", f.sitePath(), map[string]any{"visibility": "visitor-auth"}).Expect(http.StatusOK)
	if got := reads(byOwn.APIToken); got != http.StatusUnauthorized {
		t.Errorf("a share key's token on a visitor-auth site: %d", got)
	}
}

// A visitor-auth site resolves with a valid visitor token only; refused,
// with redirectOnError, the answer is the site's login page, told where
// the visitor was going. The visitor API token carries the token's claims,
// works no longer than the token, and stops with a new visitor key.
func TestResolvingAVisitorAuthSite(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "visitor-auth")
	base := f.publish()
	authPath := f.sitePath("/publishing/auth")
	key := f.admin.Do("GET", authPath, nil).Expect(http.StatusOK).String("privateKey")
	now := f.env.Clock.Now()
	valid := token(t, jwt.SigningMethodHS256, []byte(key), jwt.MapClaims{"exp": now.Add(30 * time.Minute).Unix(), "plan": "pro"})
	with := func(tok string) map[string]any { return map[string]any{"visitor": map[string]any{"jwtToken": tok}} }

	for name, body := range map[string]map[string]any{
		"no token":      nil,
		"another key":   with(token(t, jwt.SigningMethodHS256, []byte("not the key"), jwt.MapClaims{"exp": now.Add(time.Hour).Unix()})),
		"expired":       with(token(t, jwt.SigningMethodHS256, []byte(key), jwt.MapClaims{"exp": now.Add(-time.Hour).Unix()})),
		"malformed":     with("a.b.c"),
		"a member's":    with(f.admin.Token),
		"no login page": {"redirectOnError": true, "visitor": map[string]any{"jwtToken": "a.b.c"}},
	} {
		if res, _ := resolve(t, f.admin, base+"/setup", body); res.Status != http.StatusNotFound {
			t.Errorf("%s: %d %s", name, res.Status, res.Body)
		}
	}
	f.admin.Do("PATCH", authPath, map[string]any{"backend": "custom", "fallbackURL": "https://login.acme.example/docs"}).Expect(http.StatusOK)
	res, got := resolve(t, f.admin, base+"/setup", map[string]any{"redirectOnError": true})
	if res.Status != http.StatusOK || got.Target != "external" ||
		got.Redirect != "https://login.acme.example/docs?location="+url.QueryEscape(strings.TrimPrefix(base, f.env.URL)+"/setup") {
		t.Errorf("refused, with redirectOnError: %d %+v", res.Status, got)
	}
	if res, _ := resolve(t, f.admin, base+"/setup", nil); res.Status != http.StatusNotFound {
		t.Errorf("refused, without redirectOnError: %d", res.Status)
	}

	res, got = resolve(t, f.admin, base+"/setup", with(valid))
	if res.Status != http.StatusOK || got.Pathname != "setup" || got.ContextID == "" {
		t.Fatalf("a valid token: %d %+v", res.Status, got)
	}
	// The token's payload: GitBook's SiteAPIToken, with the claims.
	var payload map[string]any
	if err := json.Unmarshal([]byte(decodedPayload(t, got.APIToken)), &payload); err != nil {
		t.Fatal(err)
	}
	claims, _ := payload["claims"].(map[string]any)
	if payload["kind"] != "site" || payload["site"] != f.site || payload["organization"] != f.org || payload["space"] != f.space ||
		claims["plan"] != "pro" || payload["exp"] != float64(now.Add(30*time.Minute).Unix()) {
		t.Errorf("the token's payload: %v", payload)
	}
	if strings.Contains(got.APIToken, key) || strings.Contains(decodedPayload(t, got.APIToken), key) {
		t.Error("the visitor API token carries the site's key")
	}
	// Over GraphQL, the answer's claims and expiry.
	out := f.admin.GraphQL(`query($in: ResolvePublishedContentInput!) { publishedContentByUrl(input: $in) {
		... on PublishedSiteContent { claims apiTokenExpiresAt pathname } } }`,
		map[string]any{"in": map[string]any{"url": base + "/setup", "visitor": map[string]any{"jwtToken": valid}}})
	var data struct {
		PublishedContentByURL struct {
			Claims            map[string]any
			APITokenExpiresAt time.Time
		} `json:"publishedContentByUrl"`
	}
	if err := json.Unmarshal(out.Data, &data); err != nil || data.PublishedContentByURL.Claims["plan"] != "pro" ||
		!data.PublishedContentByURL.APITokenExpiresAt.Equal(now.Add(30*time.Minute)) {
		t.Errorf("over GraphQL: %s %v", out.Data, out.Errors)
	}
	// The deprecated GET takes the token as visitorAuthToken.
	q := "?url=" + url.QueryEscape(base+"/setup") + "&visitorAuthToken=" + url.QueryEscape(valid)
	if res := f.admin.Do("GET", "/v1/urls/published"+q, nil); res.Status != http.StatusOK || res.String("pathname") != "setup" {
		t.Errorf("GET: %d %s", res.Status, res.Body)
	}
	if res := f.admin.Do("GET", "/v1/urls/published?url="+url.QueryEscape(base+"/setup")+"&redirectOnError=true", nil); res.Status != http.StatusOK ||
		res.String("target") != "external" {
		t.Errorf("GET, refused with redirectOnError: %d %s", res.Status, res.Body)
	}

	reads := func(token string) int {
		return f.env.Do("GET", "/v1/spaces/"+f.space+"/content/path/setup", token, nil).Status
	}
	if reads(got.APIToken) != http.StatusOK {
		t.Fatal("the visitor API token does not read the site")
	}
	// No longer than the visitor's token.
	f.env.Clock.Advance(31 * time.Minute)
	if got := reads(got.APIToken); got != http.StatusUnauthorized {
		t.Errorf("past the visitor token's expiry: %d", got)
	}
	// A new visitor key ends it at once.
	fresh := token(t, jwt.SigningMethodHS256, []byte(key), jwt.MapClaims{"exp": f.env.Clock.Now().Add(2 * time.Hour).Unix()})
	_, got = resolve(t, f.admin, base, with(fresh))
	if got.APIToken == "" || reads(got.APIToken) != http.StatusOK {
		t.Fatalf("a fresh token: %+v", got)
	}
	f.admin.Do("POST", authPath+"/regenerate", nil).Expect(http.StatusOK)
	if got := reads(got.APIToken); got != http.StatusUnauthorized {
		t.Errorf("after a new visitor key: %d", got)
	}
}

// decodedPayload is the JSON payload of a JSON Web Token.
func decodedPayload(t *testing.T, token string) string {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("%.40s… is no JSON Web Token", token)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// Unsigned claims decide a conditioned section as the reader lets them
// (adaptive content on, declared by the site's schema): resolved for the
// visitor who brings them, not found for one who does not; the visitor API
// token of each reads what that visitor sees.
func TestResolvingWithUnsignedClaims(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	beta := f.newSpace("Beta guides")
	section := f.admin.Do("POST", f.sitePath("/sections"), map[string]any{"spaceId": beta, "title": "Beta program"}).Expect(http.StatusCreated).String("id")
	f.admin.Do("PATCH", f.sitePath("/sections/"+section), map[string]any{"path": "beta", "condition": "visitor.claims.unsigned.beta === true"}).
		Expect(http.StatusOK)
	f.admin.Do("PUT", f.sitePath("/adaptive-schema"), map[string]any{"jsonSchema": map[string]any{"type": "object", "additionalProperties": false,
		"properties": map[string]any{"unsigned": map[string]any{"type": "object", "description": "Unsigned claims of the site visitor.", "additionalProperties": false,
			"properties": map[string]any{"beta": map[string]any{"type": "boolean", "description": "In the beta program"}}}}}}).Expect(http.StatusOK)
	f.admin.Do("PATCH", f.sitePath(), map[string]any{"adaptiveContent": map[string]any{"enabled": true}}).Expect(http.StatusOK)
	base := f.publish()
	tester := map[string]any{"visitor": map[string]any{"unsignedClaims": map[string]any{"beta": true}}}

	if res, _ := resolve(t, f.admin, base+"/beta/setup", nil); res.Status != http.StatusNotFound {
		t.Errorf("without the claim: %d", res.Status)
	}
	for name, claims := range map[string]any{"undeclared": map[string]any{"legacy": true}, "of another type": map[string]any{"beta": "yes"}} {
		if res, _ := resolve(t, f.admin, base+"/beta/setup", map[string]any{"visitor": map[string]any{"unsignedClaims": claims}}); res.Status != http.StatusNotFound {
			t.Errorf("a claim %s: %d", name, res.Status)
		}
	}
	res, got := resolve(t, f.admin, base+"/beta/setup", tester)
	if res.Status != http.StatusOK || got.SiteSection != section || got.Space != beta || got.Pathname != "setup" || got.ContextID == "" {
		t.Fatalf("with the claim: %d %+v %s", res.Status, got, res.Body)
	}
	// The same address, the same claims: the same context.
	if _, again := resolve(t, f.admin, base+"/beta", tester); again.ContextID != got.ContextID {
		t.Errorf("contextId %q, then %q", got.ContextID, again.ContextID)
	}
	_, anonymous := resolve(t, f.admin, base, nil)
	if anonymous.ContextID != "" {
		t.Errorf("an anonymous visitor's contextId: %q", anonymous.ContextID)
	}
	readsBeta := func(token string) int { return f.env.Do("GET", "/v1/spaces/"+beta+"/content", token, nil).Status }
	if readsBeta(got.APIToken) != http.StatusOK || readsBeta(anonymous.APIToken) != http.StatusNotFound {
		t.Errorf("the beta space to the tester's token %d, to the anonymous one's %d", readsBeta(got.APIToken), readsBeta(anonymous.APIToken))
	}
	// Adaptive content turned off: the claim no longer counts, for the
	// token too.
	f.admin.Do("PATCH", f.sitePath(), map[string]any{"adaptiveContent": map[string]any{"enabled": false}}).Expect(http.StatusOK)
	if readsBeta(got.APIToken) != http.StatusNotFound {
		t.Error("the tester's token reads the beta section with adaptive content off")
	}
}

// Who may resolve an address: the members who may read the sites of the
// site's organization, over POST and the deprecated GET alike; to a guest,
// another organization's member and a visitor API token the address is not
// there (404) or the token is no member's (401).
func TestWhoMayResolveAddresses(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	base := f.publish()
	f.admin.Do("PATCH", f.sitePath(), map[string]any{"hostname": "docs.acme.example"}).Expect(http.StatusOK)
	reader, guest, stranger := f.env.NewUser("Reader"), f.env.NewUser("Guest"), f.env.NewUser("Mallory")
	reader.Join(f.org, "read")
	guest.Join(f.org, "")
	stranger.NewOrg("Mallory Corp")
	_, visitor := resolve(t, f.admin, base, nil)
	for _, u := range []string{base + "/setup", "https://docs.acme.example/setup"} {
		for _, c := range []struct {
			name   string
			token  string
			status int
		}{
			{"the admin", f.admin.Token, http.StatusOK},
			{"a reader", reader.Token, http.StatusOK},
			{"a guest", guest.Token, http.StatusNotFound},
			{"another organization's member", stranger.Token, http.StatusNotFound},
			{"a visitor API token", visitor.APIToken, http.StatusUnauthorized},
			{"no token", "", http.StatusUnauthorized},
			{"an unknown token", "not-a-token", http.StatusUnauthorized},
		} {
			post := f.env.Do("POST", "/v1/urls/published", c.token, map[string]any{"url": u})
			get := f.env.Do("GET", "/v1/urls/published?url="+url.QueryEscape(u), c.token, nil)
			if post.Status != c.status || get.Status != c.status {
				t.Errorf("%s, %s: POST %d, GET %d, want %d", c.name, u, post.Status, get.Status, c.status)
			}
			if c.status == http.StatusNotFound && (string(post.Body) != string(get.Body) || strings.Contains(string(post.Body), f.site)) {
				t.Errorf("%s: %s", c.name, post.Body)
			}
		}
	}
	// What a stranger is told of a site of theirs it does not know is what
	// it is told of no site.
	nothing := f.env.Do("POST", "/v1/urls/published", stranger.Token, map[string]any{"url": f.env.URL + "/published/" + f.org + "/nope"})
	some := f.env.Do("POST", "/v1/urls/published", stranger.Token, map[string]any{"url": base})
	if nothing.Status != some.Status || string(nothing.Body) != string(some.Body) {
		t.Errorf("a stranger tells a site from none: %d %s / %d %s", nothing.Status, nothing.Body, some.Status, some.Body)
	}
}

// A visitor API token works for an hour at most, and stops when its site
// is unpublished (and works again when it is published again, within its
// hour: its proofs hold again) or deleted.
func TestVisitorAPITokenExpiresAndIsRevoked(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	base := f.publish()
	reads := func(token string) int { return f.env.Do("GET", "/v1/spaces/"+f.space, token, nil).Status }
	_, first := resolve(t, f.admin, base, nil)
	f.env.Clock.Advance(graph.VisitorTokenTTL - time.Second)
	if reads(first.APIToken) != http.StatusOK {
		t.Fatal("the token does not work within its hour")
	}
	f.env.Clock.Advance(2 * time.Second)
	if got := reads(first.APIToken); got != http.StatusUnauthorized {
		t.Errorf("after its hour: %d", got)
	}
	if res := f.env.Do("POST", "/graphql", first.APIToken, map[string]any{"query": `query($sp: ID!) { space(id: $sp) { title } }`,
		"variables": map[string]any{"sp": f.space}}); res.Status != http.StatusUnauthorized {
		t.Errorf("after its hour, over GraphQL: %d %.200s", res.Status, res.Body)
	}
	_, second := resolve(t, f.admin, base, nil)
	f.admin.Do("POST", f.sitePath("/unpublish"), nil).Expect(http.StatusOK)
	if got := reads(second.APIToken); got != http.StatusUnauthorized {
		t.Errorf("its site unpublished: %d", got)
	}
	if res, _ := resolve(t, f.admin, base, nil); res.Status != http.StatusNotFound {
		t.Errorf("resolving an unpublished site: %d", res.Status)
	}
	f.admin.Do("POST", f.sitePath("/publish"), nil).Expect(http.StatusOK)
	if got := reads(second.APIToken); got != http.StatusOK {
		t.Errorf("its site published again: %d", got)
	}
	f.admin.Do("DELETE", f.sitePath(), nil).Expect(http.StatusNoContent)
	if got := reads(second.APIToken); got != http.StatusUnauthorized {
		t.Errorf("its site deleted: %d", got)
	}
}

// The audience matrix of the reader, resolved: for every audience and
// every kind of visitor, an address resolves exactly when the reader
// serves it to that visitor, a section a condition hides from the visitor
// resolves as not found (the same answer as an address of no site), and
// the visitor API token reads the page documents the visitor may read
// and no other, nor anything of another organization.
func TestResolutionAudienceMatrix(t *testing.T) {
	t.Parallel()
	type proof struct {
		share string // a share key in the address
		jwt   string // the visitor's token (jwtToken)
	}
	const (
		validPro = iota
		validFree
		expired
		otherKey
		malformed
	)
	for _, c := range []struct {
		name       string
		visibility string
		adaptive   bool
		share      string // "own", "wrong" or ""
		token      int    // a visitor token of that kind, -1 for none
		main, pro  int    // resolving the site's page, and the conditioned section's
	}{
		{"public, anyone", "public", false, "", -1, http.StatusOK, http.StatusNotFound},
		{"public, adaptive, signed pro claims", "public", true, "", validPro, http.StatusOK, http.StatusOK},
		{"public, adaptive, signed free claims", "public", true, "", validFree, http.StatusOK, http.StatusNotFound},
		{"public, adaptive, pro claims signed with another key", "public", true, "", otherKey, http.StatusOK, http.StatusNotFound},
		{"unlisted, anyone", "unlisted", false, "", -1, http.StatusOK, http.StatusNotFound},
		{"unlisted, adaptive, signed pro claims", "unlisted", true, "", validPro, http.StatusOK, http.StatusOK},
		{"share-link, its key", "share-link", false, "own", -1, http.StatusOK, http.StatusNotFound},
		{"share-link, its key, adaptive, signed pro claims", "share-link", true, "own", validPro, http.StatusOK, http.StatusOK},
		{"share-link, no key", "share-link", false, "", -1, http.StatusNotFound, http.StatusNotFound},
		{"share-link, a wrong key", "share-link", false, "wrong", validPro, http.StatusNotFound, http.StatusNotFound},
		{"visitor-auth, a valid token of a pro", "visitor-auth", false, "", validPro, http.StatusOK, http.StatusOK},
		{"visitor-auth, a valid token of a free plan", "visitor-auth", false, "", validFree, http.StatusOK, http.StatusNotFound},
		{"visitor-auth, an expired token", "visitor-auth", false, "", expired, http.StatusNotFound, http.StatusNotFound},
		{"visitor-auth, a token of another key", "visitor-auth", false, "", otherKey, http.StatusNotFound, http.StatusNotFound},
		{"visitor-auth, a malformed token", "visitor-auth", false, "", malformed, http.StatusNotFound, http.StatusNotFound},
		{"visitor-auth, no token", "visitor-auth", false, "", -1, http.StatusNotFound, http.StatusNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newReaderFixture(t, c.visibility)
			pro := f.newSpace("Pro features")
			section := f.admin.Do("POST", f.sitePath("/sections"), map[string]any{"spaceId": pro, "title": "Pro"}).Expect(http.StatusCreated).String("id")
			f.admin.Do("PATCH", f.sitePath("/sections/"+section), map[string]any{"path": "pro", "condition": `visitor.claims.plan === "pro"`}).
				Expect(http.StatusOK)
			if c.adaptive {
				f.admin.Do("PATCH", f.sitePath(), map[string]any{"adaptiveContent": map[string]any{"enabled": true}}).Expect(http.StatusOK)
			}
			base, _, _ := strings.Cut(f.publish(), "?")
			key := f.admin.Do("GET", f.sitePath("/publishing/auth"), nil).Expect(http.StatusOK).String("privateKey")
			now := f.env.Clock.Now()
			var p proof
			switch c.share {
			case "own":
				p.share = f.shareKey()
			case "wrong":
				p.share = "not-the-key"
			}
			switch c.token {
			case validPro, validFree:
				plan := map[int]string{validPro: "pro", validFree: "free"}[c.token]
				p.jwt = token(t, jwt.SigningMethodHS256, []byte(key), jwt.MapClaims{"exp": now.Add(time.Hour).Unix(), "plan": plan})
			case expired:
				p.jwt = token(t, jwt.SigningMethodHS256, []byte(key), jwt.MapClaims{"exp": now.Add(-time.Hour).Unix(), "plan": "pro"})
			case otherKey:
				p.jwt = token(t, jwt.SigningMethodHS256, []byte("not the site's key"), jwt.MapClaims{"exp": now.Add(time.Hour).Unix(), "plan": "pro"})
			case malformed:
				p.jwt = "a.b.c"
			}
			address := func(path string) string {
				if p.share != "" {
					return base + path + "?share=" + url.QueryEscape(p.share)
				}
				return base + path
			}
			var body map[string]any
			if p.jwt != "" {
				body = map[string]any{"visitor": map[string]any{"jwtToken": p.jwt}}
			}
			// The reader, for the same visitor: a token is handed over as
			// the reader takes it (in the address on a visitor-auth site,
			// kept in a cookie; signed claims in GitBook's cookie).
			reader := newVisitor(t)
			var header []string
			if p.jwt != "" && c.visibility == "visitor-auth" {
				reader.get(address("") + map[bool]string{true: "&", false: "?"}[p.share != ""] + "jwt_token=" + url.QueryEscape(p.jwt))
			} else if p.jwt != "" {
				header = []string{"Cookie", "gitbook-visitor-token=" + p.jwt}
			}
			nothing, _ := resolve(t, f.admin, f.env.URL+"/published/"+f.org+"/no-such-site/setup", body)

			for _, at := range []struct {
				path, space string
				want        int
			}{{"/setup", f.space, c.main}, {"/pro/setup", pro, c.pro}} {
				res, got := resolve(t, f.admin, address(at.path), body)
				if res.Status != at.want {
					t.Fatalf("%s: %d %s, want %d", at.path, res.Status, res.Body, at.want)
				}
				served := reader.get(address(at.path), header...).status
				if at.want == http.StatusOK && served != http.StatusOK || at.want == http.StatusNotFound && served == http.StatusOK {
					t.Errorf("%s: resolved %d, the reader serves it %d", at.path, at.want, served)
				}
				if at.want == http.StatusNotFound {
					if string(res.Body) != string(nothing.Body) {
						t.Errorf("%s answers %s, an address of no site %s", at.path, res.Body, nothing.Body)
					}
					continue
				}
				if got.Space != at.space || got.Pathname != "setup" || got.APIToken == "" {
					t.Fatalf("%s: %+v", at.path, got)
				}
			}
			if c.main != http.StatusOK {
				return
			}
			// The visitor API token reads the page documents of what its
			// visitor may read, and nothing else.
			_, got := resolve(t, f.admin, address("/setup"), body)
			document := func(space string) int {
				path := "/v1/spaces/" + space + "/revisions/" + f.revision(space) + "/page/" + f.pageID(space, "setup") + "/document"
				return f.env.Do("GET", path, got.APIToken, nil).Status
			}
			if s := document(f.space); s != http.StatusOK {
				t.Errorf("the site's page document: %d", s)
			}
			if s := document(pro); s != c.pro {
				t.Errorf("the conditioned section's page document: %d, want %d", s, c.pro)
			}
			// Nothing of another organization, public as it may be.
			other := f.env.NewUser("Bob")
			otherOrg := other.NewOrg("Elsewhere")
			otherSpace := other.Do("POST", "/v1/orgs/"+otherOrg+"/spaces", map[string]any{"title": "Theirs"}).Expect(http.StatusCreated).String("id")
			otherSite := other.Do("POST", "/v1/orgs/"+otherOrg+"/sites", map[string]any{"title": "Theirs", "visibility": "public",
				"spaces": []string{otherSpace}}).Expect(http.StatusCreated).String("id")
			other.Do("POST", "/v1/orgs/"+otherOrg+"/sites/"+otherSite+"/publish", nil).Expect(http.StatusOK)
			for _, path := range []string{"/v1/orgs/" + otherOrg + "/sites/" + otherSite + "/published", "/v1/spaces/" + otherSpace,
				"/v1/spaces/" + otherSpace + "/content"} {
				if res := f.env.Do("GET", path, got.APIToken, nil); res.Status != http.StatusNotFound {
					t.Errorf("another organization's %s: %d %.200s", path, res.Status, res.Body)
				}
			}
		})
	}
}
