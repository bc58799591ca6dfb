package published_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// redirect makes a redirect of f's site and returns its id.
func (f *readerFixture) redirect(source string, destination map[string]any) string {
	f.t.Helper()
	return f.admin.Do("POST", f.sitePath("/redirects"), map[string]any{"source": source, "destination": destination}).
		Expect(http.StatusCreated).String("id")
}

// siteSpaceOf is the id of the site space of f's site showing space.
func (f *readerFixture) siteSpaceOf(space string) string {
	f.t.Helper()
	for _, ss := range f.admin.Do("GET", f.sitePath("/site-spaces"), nil).Expect(http.StatusOK).JSON()["items"].([]any) {
		m := ss.(map[string]any)
		if m["space"].(map[string]any)["id"] == space {
			return m["id"].(string)
		}
	}
	f.t.Fatalf("no site space shows %s", space)
	return ""
}

// pageID is the id of the page at path in space's current content.
func (f *readerFixture) pageID(space, path string) string {
	f.t.Helper()
	return f.admin.Do("GET", "/v1/spaces/"+space+"/content/path/"+path, nil).Expect(http.StatusOK).String("id")
}

// moved expects a 301 to location (a path under the server, or an
// absolute URL elsewhere).
func (p page) moved(t *testing.T, location string) page {
	t.Helper()
	if p.status != http.StatusMovedPermanently || p.header.Get("Location") != location {
		t.Fatalf("%d to %q, want 301 to %q: %.300s", p.status, p.header.Get("Location"), location, p.body)
	}
	return p
}

// A site's redirects are served as 301s at addresses where no page is: to
// a path of the site (under the address the visitor used), an absolute URL
// (without the visitor's query), a section, a site space or a page (where
// it is now); sources match whole, decoded, with or without a trailing
// slash; a page is always served first; one hop a request.
func TestSiteRedirectsAreServed(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	reference := f.newSpace("Reference")
	section := f.admin.Do("POST", f.sitePath("/sections"), map[string]any{"spaceId": reference, "title": "Reference"}).
		Expect(http.StatusCreated).String("id")
	f.admin.Do("PATCH", f.sitePath("/sections/"+section), map[string]any{"path": "reference"}).Expect(http.StatusOK)
	guides := f.siteSpaceOf(f.space)
	advanced := f.pageID(f.space, "setup/advanced")
	f.redirect("/old-setup", map[string]any{"kind": "url", "url": "/setup"})
	f.redirect("/docs/v1/start", map[string]any{"kind": "url", "url": "https://example.com/v1?from=docs#top"})
	f.redirect("/to-section", map[string]any{"kind": "site-section", "siteSectionId": section})
	f.redirect("/to-space", map[string]any{"kind": "site-space", "siteSpaceId": f.siteSpaceOf(reference)})
	f.redirect("/to-page", map[string]any{"kind": "site-page", "siteSpaceId": guides, "pageId": advanced})
	f.redirect("/reference/old", map[string]any{"kind": "url", "url": "/reference/setup?tab=cli"})
	f.redirect("/setup", map[string]any{"kind": "url", "url": "/to-page"}) // a page is there
	f.redirect("/loop-a", map[string]any{"kind": "url", "url": "/loop-b"})
	f.redirect("/loop-b", map[string]any{"kind": "url", "url": "/loop-a/"})
	f.redirect("/caf%C3%A9", map[string]any{"kind": "url", "url": "/setup"})
	base := f.publish()
	path := strings.TrimPrefix(base, f.env.URL) // Locations are paths on the site's host

	v := newVisitor(t)
	cases := []struct {
		name, address string
		// location is where it leads; "" when it is served (200) or not
		// found (404).
		location string
		status   int
	}{
		{"a path of the site", "/old-setup", path + "/setup", http.StatusMovedPermanently},
		{"with a trailing slash", "/old-setup/", path + "/setup", http.StatusMovedPermanently},
		{"the query kept on the site", "/old-setup?utm_source=mail", path + "/setup?utm_source=mail", http.StatusMovedPermanently},
		{"an absolute URL, the query left on the site", "/docs/v1/start?utm_source=mail", "https://example.com/v1?from=docs#top", http.StatusMovedPermanently},
		{"a section: its default site space", "/to-section", path + "/reference/", http.StatusMovedPermanently},
		{"a site space", "/to-space", path + "/reference/", http.StatusMovedPermanently},
		{"a page, where it is", "/to-page", path + "/setup/advanced", http.StatusMovedPermanently},
		{"a source under a section, the destination's own query", "/reference/old?x=1", path + "/reference/setup?tab=cli", http.StatusMovedPermanently},
		{"a percent-encoded source, matched decoded", "/caf%c3%a9", path + "/setup", http.StatusMovedPermanently},
		{"a page first", "/setup", "", http.StatusOK},
		{"a chain: one hop", "/loop-a", path + "/loop-b", http.StatusMovedPermanently},
		{"a chain: the next hop", "/loop-b", path + "/loop-a/", http.StatusMovedPermanently},
		{"a source's prefix is no source", "/old-setup/more", "", http.StatusNotFound},
		{"a source's case counts", "/Old-Setup", "", http.StatusNotFound},
		{"no redirect", "/nowhere", "", http.StatusNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := v.get(base + c.address)
			f.resolvesAsServed(t, base+c.address, p)
			if c.location == "" {
				p.expect(t, c.status)
				return
			}
			p.moved(t, c.location)
			if cc := p.header.Get("Cache-Control"); cc != "public, max-age=0, must-revalidate" {
				t.Errorf("Cache-Control %q", cc)
			}
		})
	}
	// Where a redirect leads is served.
	v.get(f.env.URL+path+"/setup/advanced").expect(t, http.StatusOK, "Deep")

	// On the site's own hostname, Locations are under its root.
	f.admin.Do("PATCH", f.sitePath(), map[string]any{"hostname": "docs.acme.example"}).Expect(http.StatusOK)
	v.get(f.env.URL+"/old-setup", "Host", "docs.acme.example").moved(t, "/setup")
	v.get(f.env.URL+"/to-page", "Host", "docs.acme.example").moved(t, "/setup/advanced")
}

// A redirect serves only those its site admits, as everything else: the
// site's audience first (the same 404 or 401 as any address without the
// key or the token), then the conditions: a redirect to a section hidden
// from the visitor is not theirs to follow.
func TestRedirectsFollowTheAudience(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "share-link")
	f.redirect("/old-setup", map[string]any{"kind": "url", "url": "/setup"})
	withKey := f.publish()
	base, _, _ := strings.Cut(withKey, "?")
	path := strings.TrimPrefix(base, f.env.URL)
	stranger := newVisitor(t)
	refused := stranger.get(base+"/setup").expect(t, http.StatusNotFound)
	if p := stranger.get(base + "/old-setup"); p.status != http.StatusNotFound || p.body != refused.body {
		t.Errorf("a redirect without the share key: %d %q", p.status, p.header.Get("Location"))
	}
	holder := newVisitor(t)
	holder.get(withKey).expect(t, http.StatusOK)
	p := holder.get(base+"/old-setup").moved(t, path+"/setup")
	if p.header.Get("X-Robots-Tag") != "noindex" || p.header.Get("Cache-Control") != "private, no-cache" {
		t.Errorf("a share-link site's redirect: X-Robots-Tag %q, Cache-Control %q", p.header.Get("X-Robots-Tag"), p.header.Get("Cache-Control"))
	}

	auth := newReaderFixture(t, "visitor-auth")
	auth.redirect("/old-setup", map[string]any{"kind": "url", "url": "https://example.com/"})
	newVisitor(t).get(auth.publish()+"/old-setup").expect(t, http.StatusUnauthorized, "Sign-in required")

	// A section some visitors see, and redirects to it and into it.
	open := newReaderFixture(t, "public")
	beta := open.newSpace("Beta guides")
	section := open.admin.Do("POST", open.sitePath("/sections"), map[string]any{"spaceId": beta, "title": "Beta"}).
		Expect(http.StatusCreated).String("id")
	open.admin.Do("PATCH", open.sitePath("/sections/"+section), map[string]any{"path": "beta",
		"condition": "visitor.claims.unsigned.beta === true"}).Expect(http.StatusOK)
	open.admin.Do("PUT", open.sitePath("/adaptive-schema"), map[string]any{"jsonSchema": map[string]any{"type": "object", "additionalProperties": false,
		"properties": map[string]any{"unsigned": map[string]any{"type": "object", "description": "Unsigned claims of the site visitor.", "additionalProperties": false,
			"properties": map[string]any{"beta": map[string]any{"type": "boolean", "description": "In the beta program"}}}}}}).Expect(http.StatusOK)
	open.admin.Do("PATCH", open.sitePath(), map[string]any{"adaptiveContent": map[string]any{"enabled": true}}).Expect(http.StatusOK)
	// A variant of the main section, under the same condition.
	legacy := open.newSpace("Legacy guides")
	mainSection := ""
	for _, s := range open.admin.Do("GET", open.sitePath("/sections"), nil).Expect(http.StatusOK).JSON()["items"].([]any) {
		if m := s.(map[string]any); m["id"] != section {
			mainSection = m["id"].(string)
		}
	}
	legacySS := open.admin.Do("POST", open.sitePath("/site-spaces"), map[string]any{"spaceId": legacy, "sectionId": mainSection}).
		Expect(http.StatusCreated).String("id")
	open.admin.Do("PATCH", open.sitePath("/site-spaces/"+legacySS), map[string]any{"path": "legacy",
		"condition": "visitor.claims.unsigned.beta === true"}).Expect(http.StatusOK)
	open.redirect("/try-beta", map[string]any{"kind": "site-section", "siteSectionId": section})
	open.redirect("/beta-setup", map[string]any{"kind": "site-page", "siteSpaceId": open.siteSpaceOf(beta), "pageId": open.pageID(beta, "setup")})
	open.redirect("/old-guides", map[string]any{"kind": "site-space", "siteSpaceId": legacySS})
	open.redirect("/legacy-setup", map[string]any{"kind": "site-page", "siteSpaceId": legacySS, "pageId": open.pageID(legacy, "setup")})
	openBase := open.publish()
	openPath := strings.TrimPrefix(openBase, open.env.URL)
	// Those who do not see where a redirect leads get the not-found page
	// any address without a page gets: nothing of the section, the site
	// space or the page it leads to.
	anonymous := newVisitor(t)
	nowhere := anonymous.get(openBase+"/nowhere").expect(t, http.StatusNotFound).lacks(t, "Beta", "Legacy", "/beta", "/legacy")
	for _, address := range []string{"/try-beta", "/beta-setup", "/old-guides", "/legacy-setup"} {
		p := anonymous.get(openBase+address).expect(t, http.StatusNotFound)
		open.resolvesAsServed(t, openBase+address, p)
		if p.header.Get("Location") != "" || strings.ReplaceAll(p.body, address, "/nowhere") != nowhere.body {
			t.Errorf("%s answers otherwise than an address that leads nowhere: %q\n%s", address, p.header.Get("Location"), p.body)
		}
	}
	tester := newVisitor(t)
	tester.get(openBase+"/try-beta?visitor.beta=true").moved(t, openPath+"/beta/?visitor.beta=true")
	tester.get(openBase+"/beta-setup?visitor.beta=true").moved(t, openPath+"/beta/setup?visitor.beta=true")
	tester.get(openBase+"/old-guides?visitor.beta=true").moved(t, openPath+"/legacy/?visitor.beta=true")
	tester.get(openBase+"/legacy-setup?visitor.beta=true").moved(t, openPath+"/legacy/setup?visitor.beta=true")
	tester.get(openBase+"/beta/setup?visitor.beta=true").expect(t, http.StatusOK, "Install")
	tester.get(openBase+"/legacy/setup?visitor.beta=true").expect(t, http.StatusOK, "Install")
	// Resolved for a visitor who sees the beta section, they lead there.
	for address, to := range map[string]string{"/try-beta": "/beta/", "/beta-setup": "/beta/setup", "/old-guides": "/legacy/", "/legacy-setup": "/legacy/setup"} {
		res, got := resolve(t, open.admin, openBase+address, map[string]any{"visitor": map[string]any{"unsignedClaims": map[string]any{"beta": true}}})
		if res.Status != http.StatusOK || got.Redirect != openBase+to || got.Target != "content" {
			t.Errorf("resolving %s for a beta visitor: %d %+v, want a redirect to %s", address, res.Status, got, openBase+to)
		}
	}
}

// A redirect made, changed or removed is served so from the next request
// on, on pages that were kept too.
func TestRedirectsAreFresh(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	base := f.publish()
	path := strings.TrimPrefix(base, f.env.URL)
	v := newVisitor(t)
	for range 2 { // the pages kept, then the not-found one asked again
		v.get(base+"/setup").expect(t, http.StatusOK)
		v.get(base+"/old").expect(t, http.StatusNotFound)
	}
	id := f.redirect("/old", map[string]any{"kind": "url", "url": "/setup"})
	v.get(base+"/old").moved(t, path+"/setup")
	f.admin.Do("PATCH", f.sitePath("/redirects/"+id), map[string]any{"destination": map[string]any{"kind": "url", "url": "/introduction"}}).
		Expect(http.StatusOK)
	v.get(base+"/old").moved(t, path+"/introduction")
	f.admin.Do("PATCH", f.sitePath("/redirects/"+id), map[string]any{"source": "/older"}).Expect(http.StatusOK)
	v.get(base+"/old").expect(t, http.StatusNotFound)
	v.get(base+"/older").moved(t, path+"/introduction")
	f.admin.Do("DELETE", f.sitePath("/redirects/"+id), nil).Expect(http.StatusResetContent)
	v.get(base+"/older").expect(t, http.StatusNotFound)
	v.get(base+"/setup").expect(t, http.StatusOK)
}

// gql runs a GraphQL document as f's admin and decodes its data into out.
func (f *readerFixture) gql(document string, vars map[string]any, out any) {
	f.t.Helper()
	res := f.admin.GraphQL(document, vars)
	if len(res.Errors) > 0 {
		f.t.Fatalf("%s: %+v", strings.Fields(document)[3], res.Errors)
	}
	if out != nil {
		if err := json.Unmarshal(res.Data, out); err != nil {
			f.t.Fatal(err)
		}
	}
}

// When a page's path changes, its old address leads to the new one by
// itself, on every site showing its space: after a new slug, a rename, a
// move and a merge; along a chain of changes; and never where a page is
// now.
func TestMovedPagesRedirect(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	base := f.publish()
	path := strings.TrimPrefix(base, f.env.URL)
	// A second site showing the space, on its own hostname.
	other := f.admin.Do("POST", "/v1/orgs/"+f.org+"/sites", map[string]any{"title": "Mirror", "visibility": "public",
		"spaces": []string{f.space}}).Expect(http.StatusCreated).String("id")
	f.admin.Do("PATCH", "/v1/orgs/"+f.org+"/sites/"+other, map[string]any{"hostname": "mirror.acme.example"}).Expect(http.StatusOK)
	f.admin.Do("POST", "/v1/orgs/"+f.org+"/sites/"+other+"/publish", nil).Expect(http.StatusOK)

	setup, advanced, secret := f.pageID(f.space, "setup"), f.pageID(f.space, "setup/advanced"), f.pageID(f.space, "secret-notes")
	update := func(page string, input map[string]any) {
		f.gql(`mutation($s: ID!, $p: ID!, $in: UpdatePageInput!) { updatePage(spaceId: $s, pageId: $p, input: $in) { id } }`,
			map[string]any{"s": f.space, "p": page, "in": input}, nil)
	}
	move := func(page string, input map[string]any) {
		f.gql(`mutation($s: ID!, $p: ID!, $in: MovePageInput!) { movePage(spaceId: $s, pageId: $p, input: $in) { id } }`,
			map[string]any{"s": f.space, "p": page, "in": input}, nil)
	}
	v := newVisitor(t)
	v.get(base+"/setup/advanced").expect(t, http.StatusOK) // kept, then changed

	steps := []struct {
		name   string
		change func()
		// leads are the addresses that redirect, and where; serves those
		// that are pages.
		leads  map[string]string
		serves []string
	}{
		{"a new slug: the page and those under it", func() { update(setup, map[string]any{"slug": "installation"}) },
			map[string]string{"/setup": "/installation", "/setup/advanced": "/installation/advanced"},
			[]string{"/installation", "/installation/advanced"}},
		{"a rename with its slug", func() { update(advanced, map[string]any{"title": "Expert mode", "slug": "expert"}) },
			map[string]string{"/setup": "/installation", "/setup/advanced": "/installation/expert", "/installation/advanced": "/installation/expert"},
			[]string{"/installation/expert"}},
		{"a move to the top level (a slug from its title there)", func() { move(advanced, map[string]any{"parent": nil}) },
			map[string]string{"/setup/advanced": "/expert-mode", "/installation/advanced": "/expert-mode", "/installation/expert": "/expert-mode"},
			[]string{"/expert-mode"}},
		{"a hidden page moves too", func() { update(secret, map[string]any{"slug": "notes"}) },
			map[string]string{"/secret-notes": "/notes"}, []string{"/notes"}},
		{"a new page where one was: served, not redirected", func() {
			f.page(f.space, map[string]any{"title": "Setup", "markdown": "The new setup page."})
		}, map[string]string{"/setup/advanced": "/expert-mode"}, []string{"/setup"}},
	}
	for _, s := range steps {
		s.change()
		for from, to := range s.leads {
			f.resolvesAsServed(t, base+from, v.get(base+from).moved(t, path+to))
			v.get(f.env.URL+from, "Host", "mirror.acme.example").moved(t, to)
		}
		for _, address := range s.serves {
			v.get(base+address).expect(t, http.StatusOK)
		}
		if t.Failed() {
			t.Fatalf("after %s", s.name)
		}
	}
	v.get(base+"/setup").expect(t, http.StatusOK, "The new setup page.")

	// A merge of a change request that gives a page a new slug.
	cr := f.admin.Do("POST", "/v1/spaces/"+f.space+"/change-requests", map[string]any{"subject": "Rename"}).
		Expect(http.StatusCreated).String("id")
	f.gql(`mutation($s: ID!, $cr: ID!, $p: ID!) { updatePage(spaceId: $s, changeRequestId: $cr, pageId: $p, input: {slug: "getting-started"}) { id } }`,
		map[string]any{"s": f.space, "cr": cr, "p": f.pageID(f.space, "introduction")}, nil)
	v.get(base+"/introduction").expect(t, http.StatusOK) // not before the merge
	f.gql(`mutation($s: ID!, $cr: ID!) { mergeChangeRequest(spaceId: $s, changeRequestId: $cr) { result } }`,
		map[string]any{"s": f.space, "cr": cr}, nil)
	v.get(base+"/introduction").moved(t, path+"/getting-started")
	v.get(base+"/getting-started").expect(t, http.StatusOK, "Welcome to")

	// A page deleted leaves no redirect to follow.
	f.gql(`mutation($s: ID!, $p: ID!) { deletePage(spaceId: $s, pageId: $p) }`, map[string]any{"s": f.space, "p": advanced}, nil)
	for _, address := range []string{"/expert-mode", "/setup/advanced", "/installation/expert"} {
		v.get(base+address).expect(t, http.StatusNotFound)
	}
}

// A git import that retitles a page (a new slug) or moves it out from
// under another page leaves redirects from its old addresses, as an edit
// does: the page keeps its id by its file's path.
func TestGitImportsRedirectMovedPages(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	space := f.admin.Do("POST", "/v1/orgs/"+f.org+"/spaces", map[string]any{"title": "Synced"}).Expect(http.StatusCreated).String("id")
	f.site = f.admin.Do("POST", "/v1/orgs/"+f.org+"/sites", map[string]any{"title": "Synced docs", "visibility": "public",
		"spaces": []string{space}}).Expect(http.StatusCreated).String("id")
	repo := func(summary, setupTitle string) string {
		return bareRepoOf(t, map[string]string{
			"README.md":   "# Welcome\n\nHello.\n",
			"setup.md":    "# " + setupTitle + "\n\nRun it.\n",
			"advanced.md": "# Advanced\n\nDeep.\n",
			"SUMMARY.md":  "# Table of contents\n\n* [Welcome](README.md)\n" + summary,
		})
	}
	imports := func(url string) {
		f.admin.Do("POST", "/v1/spaces/"+space+"/git/import", map[string]any{"url": url, "ref": "refs/heads/main"}).
			Expect(http.StatusNoContent)
	}
	imports(repo("* [Setup](setup.md)\n  * [Advanced](advanced.md)\n", "Setup"))
	base := f.publish()
	path := strings.TrimPrefix(base, f.env.URL)
	v := newVisitor(t)
	v.get(base+"/setup/advanced").expect(t, http.StatusOK, "Deep.")

	imports(repo("* [Installation](setup.md)\n* [Advanced](advanced.md)\n", "Installation"))
	v.get(base+"/setup").moved(t, path+"/installation")
	v.get(base+"/setup/advanced").moved(t, path+"/advanced")
	v.get(base+"/installation").expect(t, http.StatusOK, "Run it.")
	v.get(base+"/advanced").expect(t, http.StatusOK, "Deep.")
}

// resolvesAsServed checks that URL resolution (for custom front ends)
// answers address as the reader served it to a visitor (p): a 301 as a
// redirect to the same place (an address of the site in the address's
// own form; another site's as it is), a page as content, nothing as 404.
func (f *readerFixture) resolvesAsServed(t *testing.T, address string, p page) {
	t.Helper()
	res, got := resolve(t, f.admin, address, nil)
	switch p.status {
	case http.StatusMovedPermanently:
		location := p.header.Get("Location")
		want := location
		if strings.HasPrefix(location, "/") {
			want = f.env.URL + location
		}
		if res.Status != http.StatusOK || got.Redirect != want {
			t.Errorf("resolving %s: %d %+v, want a redirect to %s", address, res.Status, got, want)
		}
	case http.StatusOK:
		if res.Status != http.StatusOK || got.Redirect != "" || got.Space == "" {
			t.Errorf("resolving %s: %d %+v, want content", address, res.Status, got)
		}
	default:
		if res.Status != http.StatusNotFound {
			t.Errorf("resolving %s: %d %s, want 404", address, res.Status, res.Body)
		}
	}
}
