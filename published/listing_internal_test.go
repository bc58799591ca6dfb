package published

import (
	"encoding/json"
	"strings"
	"testing"
)

// Pages that ask to stay out of indexes: the API has no setting for them
// yet (graph/model's PageNode answers false), so the reader's part is
// checked here, over the answers of its operations as they would read:
// a page with noIndex or noRobotsIndex is in no sitemap or llms.txt and
// says noindex in its HTML; one with noRobotsIndex is disallowed in
// robots.txt at each of its addresses. A page without a last change of
// its own has its revision's.
func TestPagesThatAskToStayOutOfIndexes(t *testing.T) {
	t.Parallel()
	var sd siteData
	decode(t, `{"publishedContentSite": {"site": {"id": "site", "title": "Acme Docs", "visibility": "public"},
		"customizations": {"site": {}, "siteSpaces": {}},
		"structure": {"type": "siteSpaces", "structure": [{"__typename": "SiteSpace", "id": "ss", "path": "docs", "default": true,
			"title": "Docs", "space": {"id": "space", "title": "Docs"}}]}}}`, &sd)
	var cd contentData
	decode(t, `{"space": {"id": "space", "title": "Docs", "content": {"id": "rev", "createdAt": "2026-01-01T00:00:00Z", "files": [], "allPages": [
		{"id": "p1", "title": "Welcome", "type": "document", "path": "welcome", "sourcePath": "README.md", "updatedAt": "2026-01-02T10:00:00Z"},
		{"id": "p2", "title": "Drafts", "type": "document", "path": "drafts", "sourcePath": "drafts.md", "noIndex": true},
		{"id": "p3", "title": "Private", "type": "document", "path": "private", "sourcePath": "private.md", "noRobotsIndex": true},
		{"id": "p4", "title": "Open", "type": "document", "path": "open", "sourcePath": "open.md"}]}}}`, &cd)
	pages, err := parseTemplates()
	if err != nil {
		t.Fatal(err)
	}
	rd := &Reader{publishedScheme: "https", host: "sites.example.com", pages: pages, assets: newAssets()}
	s := newSite(&sd, "/acme")
	c := newContent(&cd)
	l := &listing{site: s, spaces: []listedSpace{newListedSpace(s.siteSpaces()[0], c)}}

	var locs []string
	for _, u := range rd.sitemapURLs(l) {
		locs = append(locs, u.Loc+" "+u.LastMod)
	}
	if got, want := strings.Join(locs, "\n"), "https://sites.example.com/acme/ 2026-01-02T10:00:00Z\nhttps://sites.example.com/acme/open 2026-01-01T00:00:00Z"; got != want {
		t.Errorf("sitemap:\n%s\nwant\n%s", got, want)
	}
	if got, want := string(rd.robots(l)), "User-agent: *\nAllow: /acme/\nDisallow: /acme/private$\nDisallow: /acme/private.md$\n\nSitemap: https://sites.example.com/acme/sitemap.xml\n"; got != want {
		t.Errorf("robots.txt:\n%s\nwant\n%s", got, want)
	}
	if llms := string(rd.llmsText(l)); strings.Contains(llms, "Drafts") || strings.Contains(llms, "Private") || !strings.Contains(llms, "[Open](https://sites.example.com/acme/open.md)") {
		t.Errorf("llms.txt:\n%s", llms)
	}
	for _, p := range c.ordered {
		v := rd.newView(s, s.siteSpaces()[0], c, address{base: "/acme"})
		text := "Text."
		if err := rd.fillPage(v, s, s.siteSpaces()[0], c, p, &pageBody{Markdown: &text}); err != nil {
			t.Fatal(err)
		}
		page := rd.renderPage(s, 200, v)
		asks := p.NoIndex || p.NoRobotsIndex
		if said := page.header.Get("X-Robots-Tag") == "noindex"; said != asks {
			t.Errorf("%s: X-Robots-Tag %q", p.Title, page.header.Get("X-Robots-Tag"))
		}
		if said := strings.Contains(string(page.body), `<meta name="robots" content="noindex">`); said != asks {
			t.Errorf("%s: robots meta tag %v", p.Title, said)
		}
	}
}

func decode(t *testing.T, s string, out any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), out); err != nil {
		t.Fatal(err)
	}
}
