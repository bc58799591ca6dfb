package published_test

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/docsapi/docsapi/published"
)

// What search engines and machines read of a site, per audience: each
// answers what the visitor may read, and nothing to a visitor refused. A
// public site has a sitemap and a robots.txt that lets crawlers in; the
// others none, and a robots.txt that keeps every crawler out (a
// visitor-auth site's crawler, which has no token, too). llms.txt,
// llms-full.txt and pages as Markdown follow the pages: hidden pages are
// listed nowhere, their .md address works as their page's does.
func TestMachinesReadWhatTheVisitorMayRead(t *testing.T) {
	t.Parallel()
	for _, visibility := range []string{"public", "unlisted", "share-link", "visitor-auth"} {
		t.Run(visibility, func(t *testing.T) {
			t.Parallel()
			f := newReaderFixture(t, visibility)
			addr := f.publish()
			u, _ := url.Parse(addr)
			base, path := f.env.URL+u.Path, u.Path
			reader, refused := newVisitor(t), newVisitor(t)
			switch visibility {
			case "share-link":
				reader.get(addr).expect(t, http.StatusOK)
			case "visitor-auth":
				key := f.admin.Do("GET", f.sitePath("/publishing/auth"), nil).Expect(http.StatusOK).String("privateKey")
				tok := token(t, jwt.SigningMethodHS256, []byte(key), jwt.MapClaims{"exp": f.env.Clock.Now().Add(time.Hour).Unix()})
				reader.get(base+"?jwt_token="+tok).expect(t, http.StatusFound)
			default:
				refused = nil // everyone reads it
			}

			sitemap := reader.get(base + "/sitemap.xml")
			robots := reader.get(base+"/robots.txt").expect(t, http.StatusOK).lacks(t, "Secret", "secret-notes")
			reader.get(base+"/llms.txt").expect(t, http.StatusOK, "# Acme Docs\n",
				"- [Setup]("+base+"/setup.md): How to set things up\n", "- [Advanced]("+base+"/setup/advanced.md)\n").
				lacks(t, "Secret notes")
			reader.get(base+"/llms-full.txt").expect(t, http.StatusOK, "# Introduction\n\nSource: "+base+"/\n",
				"Read [the setup]("+base+"/setup) next.", "# Setup\n\nSource: "+base+"/setup\n\nHow to set things up\n\n## Install\n",
				"Deep [back]("+base+"/introduction).").lacks(t, "Hidden but reachable")
			md := reader.get(base+"/setup.md").expect(t, http.StatusOK)
			if md.body != "# Setup\n\nHow to set things up\n\n## Install\n\nRun it.\n" {
				t.Errorf("setup.md: %q", md.body)
			}
			if ct := md.header.Get("Content-Type"); ct != "text/markdown; charset=utf-8" {
				t.Errorf("setup.md: Content-Type %q", ct)
			}
			if l := md.header.Get("Link"); l != "<"+base+`/setup>; rel="canonical"` {
				t.Errorf("setup.md: Link %q", l)
			}
			reader.get(base+"/secret-notes.md").expect(t, http.StatusOK, "# Secret notes\n\nHidden but reachable.")
			reader.get(base+"/nowhere.md").expect(t, http.StatusNotFound)

			if visibility == "public" {
				sitemap.expect(t, http.StatusOK, "<loc>"+base+"/</loc>", "<loc>"+base+"/setup</loc>", "<loc>"+base+"/setup/advanced</loc>").
					lacks(t, "secret-notes")
				robots.expect(t, http.StatusOK, "User-agent: *\nAllow: "+path+"/\n", "\nSitemap: "+base+"/sitemap.xml\n").lacks(t, "Disallow")
				for _, p := range []page{sitemap, robots, md} {
					if p.header.Get("X-Robots-Tag") != "" || !strings.HasPrefix(p.header.Get("Cache-Control"), "public") {
						t.Errorf("a public site's answer: X-Robots-Tag %q, Cache-Control %q", p.header.Get("X-Robots-Tag"), p.header.Get("Cache-Control"))
					}
				}
			} else {
				sitemap.expect(t, http.StatusNotFound).lacks(t, "<loc>")
				if robots.body != "User-agent: *\nDisallow: "+path+"/\n" {
					t.Errorf("robots.txt of a %s site: %q", visibility, robots.body)
				}
				if md.header.Get("X-Robots-Tag") != "noindex" {
					t.Errorf("a %s site's page as Markdown: X-Robots-Tag %q", visibility, md.header.Get("X-Robots-Tag"))
				}
			}
			if restricted := visibility == "share-link" || visibility == "visitor-auth"; restricted != strings.Contains(md.header.Get("Cache-Control"), "private") {
				t.Errorf("a %s site's page as Markdown: Cache-Control %q", visibility, md.header.Get("Cache-Control"))
			}

			if refused == nil {
				return
			}
			unknown := refused.get(f.env.URL + "/published/" + f.org + "/no-such-site/llms.txt")
			for _, p := range []string{"/sitemap.xml", "/sitemap-1.xml", "/robots.txt", "/llms.txt", "/llms-full.txt", "/setup.md", "/secret-notes.md"} {
				got := refused.get(base + p)
				switch {
				case visibility == "visitor-auth" && p == "/robots.txt":
					if got.status != http.StatusOK || got.body != "User-agent: *\nDisallow: "+path+"/\n" {
						t.Errorf("robots.txt without a token: %d %q", got.status, got.body)
					}
				case visibility == "visitor-auth":
					got.expect(t, http.StatusUnauthorized, "Sign-in required").lacks(t, "Setup", "Welcome")
				case got.status != http.StatusNotFound || got.body != unknown.body:
					t.Errorf("%s without a key: %d %.200s, want the 404 of an address of nothing", p, got.status, got.body)
				}
			}
		})
	}
}

// A sitemap lists every page of every site space the visitor may read (of
// every section, every variant), at its canonical address, with its last
// change; it is valid against the protocol's schema, and stays fresh as
// pages change. llms.txt lists the same pages, each readable as Markdown.
func TestSitemapListsEverySiteSpace(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	reference := f.newSpace("Reference")
	legacy := f.newSpace("Legacy")
	section := f.admin.Do("POST", f.sitePath("/sections"), map[string]any{"spaceId": reference, "title": "Reference"}).Expect(http.StatusCreated).String("id")
	f.admin.Do("PATCH", f.sitePath("/sections/"+section), map[string]any{"path": "reference"}).Expect(http.StatusOK)
	var guides string
	for _, s := range f.admin.Do("GET", f.sitePath("/sections"), nil).Expect(http.StatusOK).JSON()["items"].([]any) {
		if m := s.(map[string]any); m["id"] != section {
			guides = m["id"].(string)
		}
	}
	variant := f.admin.Do("POST", f.sitePath("/site-spaces"), map[string]any{"spaceId": legacy, "sectionId": guides}).Expect(http.StatusCreated).String("id")
	f.admin.Do("PATCH", f.sitePath("/site-spaces/"+variant), map[string]any{"path": "v1"}).Expect(http.StatusOK)
	base := f.publish()
	v := newVisitor(t)

	created := f.env.Clock.Now().UTC().Format(time.RFC3339)
	sitemap := v.get(base+"/sitemap.xml").expect(t, http.StatusOK)
	urls := checkSitemap(t, sitemap.body, base, "sitemap.xsd")
	var locs []string
	for _, u := range urls {
		locs = append(locs, u.Loc)
		if u.LastMod != created {
			t.Errorf("%s: lastmod %q, want %q", u.Loc, u.LastMod, created)
		}
	}
	var want []string
	for _, space := range []string{"", "/v1", "/reference"} {
		want = append(want, base+space+"/", base+space+"/setup", base+space+"/setup/advanced")
	}
	if slices.Sort(locs); !slices.Equal(locs, slices.Sorted(slices.Values(want))) {
		t.Errorf("sitemap lists\n%q\nwant\n%q", locs, want)
	}
	// Each is the page's canonical address.
	for _, loc := range locs {
		v.get(loc).expect(t, http.StatusOK, `<link rel="canonical" href="`+loc+`">`)
	}
	// llms.txt lists the same pages, under their sections and variants.
	llms := v.get(base+"/llms.txt").expect(t, http.StatusOK, "\n## Acme Docs › Guides\n", "\n## Acme Docs › Legacy\n", "\n## Reference\n")
	for _, line := range strings.Split(llms.body, "\n") {
		if !strings.HasPrefix(line, "- [") {
			continue
		}
		md := between(line, "](", ")")
		v.get(md).expect(t, http.StatusOK, "# ")
	}
	if n := strings.Count(llms.body, "\n- ["); n != len(want) {
		t.Errorf("llms.txt lists %d pages, want %d:\n%s", n, len(want), llms.body)
	}

	// A page edited later: its lastmod is the edit's, on the next read.
	f.env.Clock.Advance(time.Hour)
	changelog := f.page(f.space, map[string]any{"title": "Changelog", "markdown": "Nothing yet.\n"})
	f.env.Clock.Advance(time.Hour)
	edited := f.env.Clock.Now().UTC().Format(time.RFC3339)
	out := f.admin.GraphQL(`mutation($s: ID!, $p: ID!) { updatePage(spaceId: $s, pageId: $p, input: {markdown: "Version 2."}) { id } }`,
		map[string]any{"s": f.space, "p": changelog})
	if len(out.Errors) > 0 {
		t.Fatalf("updatePage: %+v", out.Errors)
	}
	v.get(base+"/sitemap.xml").expect(t, http.StatusOK, "<loc>"+base+"/changelog</loc>\n    <lastmod>"+edited+"</lastmod>")
	v.get(base+"/changelog.md").expect(t, http.StatusOK, "Version 2.")
	v.get(base+"/llms-full.txt").expect(t, http.StatusOK, "# Changelog\n\nSource: "+base+"/changelog\n\nVersion 2.\n")
}

// sitemapDoc is a sitemap or a sitemap index, as a crawler decodes it.
type sitemapDoc struct {
	XMLName  xml.Name
	URLs     []sitemapEntry `xml:"url"`
	Sitemaps []sitemapEntry `xml:"sitemap"`
}

type sitemapEntry struct {
	Loc     string `xml:"loc"`
	LastMod string `xml:"lastmod"`
}

// checkSitemap checks a sitemap (schema sitemap.xsd) or a sitemap index
// (siteindex.xsd) against the protocol: with xmllint against the schema
// the protocol publishes (testdata/sitemap), when xmllint is installed
// (Debian's libxml2-utils); and always against its rules, decoded: the
// namespace, at most 50,000 entries and 50 MB, absolute addresses under
// the sitemap's own (base), W3C datetimes. It returns the entries.
func checkSitemap(t *testing.T, body, base, schema string) []sitemapEntry {
	t.Helper()
	t.Run("schema "+schema, func(t *testing.T) {
		xmllint, err := exec.LookPath("xmllint")
		if err != nil {
			t.Skip("xmllint is not installed (Debian: libxml2-utils): the sitemap is checked against the protocol's rules only")
		}
		file := filepath.Join(t.TempDir(), "sitemap.xml")
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("testdata", "sitemap", schema), file).CombinedOutput(); err != nil {
			t.Errorf("xmllint: %v\n%s\n%s", err, out, body)
		}
	})
	if !strings.HasPrefix(body, `<?xml version="1.0" encoding="UTF-8"?>`) || len(body) > 50<<20 {
		t.Errorf("sitemap of %d bytes starts %.60q", len(body), body)
	}
	var doc sitemapDoc
	if err := xml.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("sitemap: %v\n%s", err, body)
	}
	entries := doc.URLs
	wantRoot := "urlset"
	if schema == "siteindex.xsd" {
		entries, wantRoot = doc.Sitemaps, "sitemapindex"
	}
	if doc.XMLName.Space != "http://www.sitemaps.org/schemas/sitemap/0.9" || doc.XMLName.Local != wantRoot {
		t.Errorf("root element %v, want %s", doc.XMLName, wantRoot)
	}
	if len(entries) == 0 || len(entries) > 50_000 || len(doc.URLs)+len(doc.Sitemaps) != len(entries) {
		t.Errorf("%d entries (%d urls, %d sitemaps)", len(entries), len(doc.URLs), len(doc.Sitemaps))
	}
	for _, e := range entries {
		if u, err := url.Parse(e.Loc); err != nil || !u.IsAbs() || !strings.HasPrefix(e.Loc, base+"/") || len(e.Loc) > 2048 {
			t.Errorf("loc %q: not an absolute address under %s", e.Loc, base)
		}
		if _, err := time.Parse(time.RFC3339, e.LastMod); err != nil {
			t.Errorf("%s: lastmod %q: %v", e.Loc, e.LastMod, err)
		}
	}
	return entries
}

// A section a condition hides from a visitor is in none of what machines
// read for that visitor, and in all of it for a visitor whose claims show
// it; the second round is answered from the cache, kept apart per
// visitor as pages are.
func TestConditionsDecideWhatMachinesRead(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	f.betaSection()
	base := f.publish()
	files := []string{"/sitemap.xml", "/robots.txt", "/llms.txt", "/llms-full.txt"}

	for round := range 2 {
		anonymous := newVisitor(t)
		for _, file := range files {
			anonymous.get(base+file).expect(t, http.StatusOK).lacks(t, "/beta", "Beta")
		}
		anonymous.get(base+"/beta/setup.md").expect(t, http.StatusNotFound).lacks(t, "Install")
		anonymous.get(base+"/beta.md").expect(t, http.StatusNotFound)

		tester := newVisitor(t)
		tester.get(base+"/sitemap.xml?visitor.beta=true").expect(t, http.StatusOK, "<loc>"+base+"/beta/setup</loc>")
		tester.get(base+"/robots.txt?visitor.beta=true").expect(t, http.StatusOK)
		tester.get(base+"/llms.txt?visitor.beta=true").expect(t, http.StatusOK, "\n## Beta program\n", "("+base+"/beta/setup.md)")
		tester.get(base+"/llms-full.txt?visitor.beta=true").expect(t, http.StatusOK, "Welcome to **Beta guides**", "Source: "+base+"/beta/setup\n")
		tester.get(base+"/beta/setup.md?visitor.beta=true").expect(t, http.StatusOK, "# Setup", "## Install")
		tester.get(base+"/beta.md?visitor.beta=true").expect(t, http.StatusOK, "Welcome to **Beta guides**")
		if round == 0 {
			t.Log("again, from what was kept")
		}
	}
}

// betaSection adds a section of a new space, "Beta guides", at /beta, for
// visitors whose unsigned claim beta is true (declared in the site's
// visitor schema, with adaptive content on); it returns the space.
func (f *readerFixture) betaSection() string {
	f.t.Helper()
	beta := f.newSpace("Beta guides")
	section := f.admin.Do("POST", f.sitePath("/sections"), map[string]any{"spaceId": beta, "title": "Beta program"}).Expect(http.StatusCreated).String("id")
	f.admin.Do("PATCH", f.sitePath("/sections/"+section), map[string]any{"path": "beta",
		"condition": "visitor.claims.unsigned.beta === true"}).Expect(http.StatusOK)
	f.admin.Do("PUT", f.sitePath("/adaptive-schema"), map[string]any{"jsonSchema": map[string]any{"type": "object", "additionalProperties": false,
		"properties": map[string]any{"unsigned": map[string]any{"type": "object", "description": "Unsigned claims of the site visitor.",
			"additionalProperties": false, "properties": map[string]any{"beta": map[string]any{"type": "boolean", "description": "In the beta program"}}}}}}).
		Expect(http.StatusOK)
	f.admin.Do("PATCH", f.sitePath(), map[string]any{"adaptiveContent": map[string]any{"enabled": true}}).Expect(http.StatusOK)
	return beta
}

// A page's Markdown: a group's address leads to its first page's, the
// page's HTML names it, and it is kept as pages are (ETag, gzip).
func TestPagesAsMarkdown(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	group := f.page(f.space, map[string]any{"title": "Reference", "type": "group"})
	f.page(f.space, map[string]any{"title": "API", "parent": group, "markdown": "# The API\n\nSee [setup](../setup.md) and [elsewhere](https://example.com/x.md).\n"})
	base := f.publish()
	u, _ := url.Parse(base)
	v := newVisitor(t)

	if p := v.get(base + "/reference.md"); p.status != http.StatusFound || p.header.Get("Location") != u.Path+"/reference/api.md" {
		t.Errorf("a group's Markdown: %d → %q", p.status, p.header.Get("Location"))
	}
	// A page whose markdown has its own title keeps it.
	api := v.get(base+"/reference/api.md").expect(t, http.StatusOK)
	if want := "# The API\n\nSee [setup](" + base + "/setup) and [elsewhere](https://example.com/x.md).\n"; api.body != want {
		t.Errorf("reference/api.md = %q, want %q", api.body, want)
	}
	v.get(base+"/setup").expect(t, http.StatusOK, `<link rel="alternate" type="text/markdown" href="`+u.Path+`/setup.md">`)
	// Kept: the same ETag, 304 for a client that has it, gzip.
	again := v.get(base + "/reference/api.md")
	if etag := api.header.Get("ETag"); etag == "" || again.header.Get("ETag") != etag {
		t.Errorf("ETag %q, then %q", etag, again.header.Get("ETag"))
	}
	v.get(base+"/reference/api.md", "If-None-Match", api.header.Get("ETag")).expect(t, http.StatusNotModified)
	if p := v.get(base+"/llms-full.txt", "Accept-Encoding", "gzip"); p.header.Get("Content-Encoding") != "gzip" {
		t.Errorf("llms-full.txt, gzip asked: Content-Encoding %q", p.header.Get("Content-Encoding"))
	}
	for _, p := range []string{"/.md", "/sitemap-1.xml", "/sitemap-01.xml", "/sitemap-0.xml", "/reference/llms.txt"} {
		v.get(base+p).expect(t, http.StatusNotFound)
	}
}

// On its own hostname, a site answers robots.txt, its sitemap and llms.txt
// at the host's root, with addresses on that host.
func TestMachineFilesAtTheRootOfAHostname(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	f.admin.Do("PATCH", f.sitePath(), map[string]any{"hostname": "docs.acme.example"}).Expect(http.StatusOK)
	f.publish()
	v := newVisitor(t)
	host := []string{"Host", "docs.acme.example"}
	robots := v.get(f.env.URL+"/robots.txt", host...).expect(t, http.StatusOK)
	if want := "User-agent: *\nAllow: /\n\nSitemap: https://docs.acme.example/sitemap.xml\n"; robots.body != want {
		t.Errorf("robots.txt = %q, want %q", robots.body, want)
	}
	sitemap := v.get(f.env.URL+"/sitemap.xml", host...).expect(t, http.StatusOK)
	checkSitemap(t, sitemap.body, "https://docs.acme.example", "sitemap.xsd")
	sitemap.expect(t, http.StatusOK, "<loc>https://docs.acme.example/</loc>", "<loc>https://docs.acme.example/setup</loc>")
	v.get(f.env.URL+"/llms.txt", host...).expect(t, http.StatusOK, "- [Setup](https://docs.acme.example/setup.md): How to set things up")
	v.get(f.env.URL+"/setup/advanced.md", host...).expect(t, http.StatusOK, "Deep [back](https://docs.acme.example/introduction).")
	// Not the API's host: it has no site.
	v.get(f.env.URL+"/robots.txt").expect(t, http.StatusNotFound)
}

// What machines read is bounded: a sitemap beyond its number of URLs is an
// index of sitemaps, each valid, and llms.txt and llms-full.txt stop with
// a note saying so. The bounds are made small here (they are the
// package's: this test does not run in parallel, and sets them before its
// server starts).
func TestMachineAnswersAreBounded(t *testing.T) {
	published.SetBounds(t, published.Bounds{SitemapURLs: 2, LLMsBytes: 700, LLMsFullBytes: 1200})
	f := newReaderFixture(t, "public")
	for i := range 3 {
		f.page(f.space, map[string]any{"title": "Extra " + string(rune('A'+i)), "markdown": strings.Repeat("Some text. ", 30)})
	}
	base := f.publish()
	v := newVisitor(t)

	index := v.get(base+"/sitemap.xml").expect(t, http.StatusOK)
	parts := checkSitemap(t, index.body, base, "siteindex.xsd")
	if len(parts) != 3 { // 6 pages listed, 2 a sitemap
		t.Fatalf("%d sitemaps in the index, want 3:\n%s", len(parts), index.body)
	}
	var listed []string
	for i, part := range parts {
		if want := base + "/sitemap-" + string(rune('1'+i)) + ".xml"; part.Loc != want {
			t.Errorf("sitemap %d at %q, want %q", i, part.Loc, want)
		}
		for _, u := range checkSitemap(t, v.get(part.Loc).expect(t, http.StatusOK).body, base, "sitemap.xsd") {
			listed = append(listed, u.Loc)
		}
	}
	if len(listed) != 6 || slices.Contains(listed, base+"/secret-notes") {
		t.Errorf("the sitemaps list %q", listed)
	}
	v.get(base+"/sitemap-4.xml").expect(t, http.StatusNotFound)

	llms := v.get(base+"/llms.txt").expect(t, http.StatusOK, "\nThis list stops at 700 bytes: it names ")
	if len(llms.body) > 700 || !strings.Contains(llms.body, "- [Introduction]") || strings.Contains(llms.body, "Extra C") {
		t.Errorf("llms.txt of %d bytes:\n%s", len(llms.body), llms.body)
	}
	full := v.get(base+"/llms-full.txt").expect(t, http.StatusOK, "# Introduction", "This file stops at 1200 bytes: it holds ", base+"/llms.txt lists them all")
	if len(full.body) > 1200 || strings.Contains(full.body, "# Extra C") {
		t.Errorf("llms-full.txt of %d bytes:\n%s", len(full.body), full.body)
	}
}
