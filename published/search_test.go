package published_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A site's search finds what its visitor reads and nothing else: over the
// API (searchSiteContent) for members, and on the published site, a page
// of results that works without script, for visitors, with each hit at its
// published address and heading.
func TestSiteSearch(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	f.page(f.space, map[string]any{"title": "Zanzibar", "markdown": "Intro.\n\n## Ferry times\n\nThe zanzibar ferry leaves at noon.\n"})
	secret := f.newSpace("Beta guides")
	f.page(secret, map[string]any{"title": "Beta zanzibar", "markdown": "The beta zanzibar route.\n"})
	section := f.admin.Do("POST", f.sitePath("/sections"), map[string]any{"spaceId": secret, "title": "Beta"}).Expect(http.StatusCreated).String("id")
	f.admin.Do("PATCH", f.sitePath("/sections/"+section), map[string]any{"path": "beta", "condition": "visitor.claims.unsigned.beta === true"}).
		Expect(http.StatusOK)
	f.declareUnsignedClaim("beta", true)
	base := f.publish()

	// Over the API, as a member: every scope, the deprecated forms, and
	// bad bodies.
	search := func(body string) map[string]any {
		return f.admin.Do("POST", f.sitePath("/search"), body).Expect(http.StatusOK).JSON()
	}
	titles := func(res map[string]any) []string {
		var out []string
		for _, it := range res["items"].([]any) {
			for _, p := range it.(map[string]any)["pages"].([]any) {
				out = append(out, p.(map[string]any)["title"].(string))
			}
		}
		return out
	}
	all := titles(search(`{"query": "zanzibar", "scope": {"mode": "all"}}`))
	if len(all) != 2 || all[0] != "Zanzibar" && all[0] != "Beta zanzibar" {
		t.Errorf("scope all: %v", all)
	}
	if got := titles(search(`{"query": "zanzibar", "mode": "all"}`)); len(got) != 2 {
		t.Errorf("mode all: %v", got)
	}
	for _, bad := range []string{`{"scope": {"mode": "all"}}`, `{"query": "", "scope": {"mode": "all"}}`,
		`{"query": "x", "scope": {"mode": "everything"}}`, `{"query": "` + strings.Repeat("x", 513) + `", "scope": {"mode": "all"}}`} {
		f.admin.Do("POST", f.sitePath("/search"), bad).Expect(http.StatusBadRequest)
	}

	// On the published site: the beta section is hidden from this visitor,
	// and so are its pages in the results.
	v := newVisitor(t)
	front := v.get(base).expect(t, http.StatusOK, `role="search"`)
	action := between(front.body, `<form class="search" role="search" action="`, `"`)
	p := v.get(f.env.URL+action+"?q=zanzibar").expect(t, http.StatusOK, `Results for “zanzibar”`,
		`href="`+strings.TrimPrefix(base, f.env.URL)+`/zanzibar"`, `/zanzibar#ferry-times"`, "The zanzibar ferry leaves at noon.")
	p.lacks(t, "Beta zanzibar", "beta zanzibar route")
	if p.header.Get("X-Robots-Tag") != "noindex" {
		t.Errorf("results page X-Robots-Tag %q", p.header.Get("X-Robots-Tag"))
	}
	// A visitor who sees the beta section finds its pages too.
	v.get(f.env.URL+action+"?q=zanzibar&visitor.beta=true").expect(t, http.StatusOK, "Beta zanzibar")
	v.get(f.env.URL+action+"?q=nothingmatchesthis").expect(t, http.StatusOK, "Nothing matches")
	v.get(f.env.URL+action+"?q="+url.QueryEscape(strings.Repeat("x", 600))).expect(t, http.StatusOK, "too long")
	v.get(f.env.URL+action).expect(t, http.StatusOK)
	// The heading anchor of the hit is the page's own.
	v.get(base+"/zanzibar").expect(t, http.StatusOK, `id="ferry-times"`)
}

// A search of a site whose audience the visitor is not answers as the site
// does: the same 404.
func TestSiteSearchKeepsTheAudience(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "share-link")
	withKey := f.publish()
	u, _ := url.Parse(withKey)
	search := f.env.URL + u.Path + "/~gitbook/search?q=welcome"
	newVisitor(t).get(search).expect(t, http.StatusNotFound).lacks(t, "Welcome")
	holder := newVisitor(t)
	holder.get(withKey).expect(t, http.StatusOK)
	holder.get(search).expect(t, http.StatusOK, "Introduction")
}
