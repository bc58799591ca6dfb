package published_test

import (
	"encoding/json"
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

// A page may ask to stay out of its site's search (noIndex) and out of
// search engines (noRobotsIndex): set over the API and read back, each is
// honoured where it applies, and undone by setting it back. Both pages
// still answer at their addresses, and the members' own search (not the
// site's) still finds them.
func TestPagesThatAskToStayOutOfIndexes(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	quiet := f.page(f.space, map[string]any{"title": "Quokka quiet", "markdown": "The quokka island, quietly.\n", "noIndex": true})
	shy := f.page(f.space, map[string]any{"title": "Quokka shy", "markdown": "The quokka island, away from robots.\n", "noRobotsIndex": true})
	f.page(f.space, map[string]any{"title": "Quokka plain", "markdown": "The quokka island.\n"})
	base := f.publish()
	path := strings.TrimPrefix(base, f.env.URL)

	settings := func(page string) (noIndex, noRobotsIndex bool) {
		out := f.admin.GraphQL(`mutation($s: ID!, $p: ID!) { updatePage(spaceId: $s, pageId: $p, input: {}) { noIndex noRobotsIndex } }`,
			map[string]any{"s": f.space, "p": page})
		var data struct {
			UpdatePage struct{ NoIndex, NoRobotsIndex bool }
		}
		if err := json.Unmarshal(out.Data, &data); err != nil || len(out.Errors) > 0 {
			t.Fatalf("updatePage: %s %v", out.Data, out.Errors)
		}
		return data.UpdatePage.NoIndex, data.UpdatePage.NoRobotsIndex
	}
	if ni, nr := settings(quiet); !ni || nr {
		t.Errorf("quiet page reads noIndex %v noRobotsIndex %v", ni, nr)
	}
	if ni, nr := settings(shy); ni || !nr {
		t.Errorf("shy page reads noIndex %v noRobotsIndex %v", ni, nr)
	}
	if got := f.admin.Do("GET", "/v1/spaces/"+f.space+"/content/page/"+quiet, nil).Expect(http.StatusOK).JSON(); got["noIndex"] != true {
		t.Errorf("REST page noIndex %v", got["noIndex"])
	}

	v := newVisitor(t)
	action := between(v.get(base).expect(t, http.StatusOK).body, `<form class="search" role="search" action="`, `"`)
	results := func() string {
		return between(v.get(f.env.URL+action+"?q=quokka").expect(t, http.StatusOK).body, `<ol class="results">`, `</ol>`)
	}
	if r := results(); !strings.Contains(r, "Quokka plain") || !strings.Contains(r, "Quokka shy") || strings.Contains(r, "Quokka quiet") {
		t.Errorf("the site's results: %s", r)
	}
	site := string(f.admin.Do("POST", f.sitePath("/search"), `{"query": "quokka", "scope": {"mode": "all"}}`).Expect(http.StatusOK).Body)
	if strings.Contains(site, "Quokka quiet") || !strings.Contains(site, "Quokka shy") {
		t.Errorf("searchSiteContent: %s", site)
	}
	if members := string(f.admin.Do("GET", "/v1/spaces/"+f.space+"/search?query=quokka", nil).Expect(http.StatusOK).Body); !strings.Contains(members, "Quokka quiet") {
		t.Errorf("the space's own search lost the noIndex page: %s", members)
	}
	v.get(base+"/sitemap.xml").expect(t, http.StatusOK, "<loc>"+base+"/quokka-plain</loc>").lacks(t, "quokka-shy", "quokka-quiet")
	v.get(base+"/robots.txt").expect(t, http.StatusOK, "Disallow: "+path+"/quokka-shy$\n").lacks(t, "quokka-quiet", "quokka-plain")
	v.get(base+"/llms.txt").expect(t, http.StatusOK, "[Quokka plain]").lacks(t, "Quokka shy", "Quokka quiet")
	for _, p := range []string{"/quokka-shy", "/quokka-quiet"} {
		v.get(base+p).expect(t, http.StatusOK, `<meta name="robots" content="noindex">`)
	}
	v.get(base+"/quokka-plain").expect(t, http.StatusOK).lacks(t, `content="noindex"`)

	// Set back, each page is indexed again on the next request.
	for _, p := range []string{quiet, shy} {
		out := f.admin.GraphQL(`mutation($s: ID!, $p: ID!) { updatePage(spaceId: $s, pageId: $p, input: {noIndex: false, noRobotsIndex: false}) { id } }`,
			map[string]any{"s": f.space, "p": p})
		if len(out.Errors) > 0 {
			t.Fatalf("updatePage: %v", out.Errors)
		}
	}
	if r := results(); !strings.Contains(r, "Quokka quiet") {
		t.Errorf("the site's results, noIndex set back: %s", r)
	}
	v.get(base+"/sitemap.xml").expect(t, http.StatusOK, "quokka-shy", "quokka-quiet")
	v.get(base+"/robots.txt").expect(t, http.StatusOK).lacks(t, "quokka-shy")
	v.get(base+"/quokka-shy").expect(t, http.StatusOK).lacks(t, `content="noindex"`)
}
