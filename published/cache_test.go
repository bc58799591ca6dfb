package published_test

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

const updatePageDocument = `mutation($s: ID!, $p: ID!, $in: UpdatePageInput!) { updatePage(spaceId: $s, pageId: $p, input: $in) { id } }`

// metric reads a counter or gauge of env's /metrics.
func metric(t *testing.T, env *servertest.Env, name string) float64 {
	t.Helper()
	res, err := http.Get(env.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// A page is made once and kept: the next views are answered from memory,
// a client that has it gets 304, and a change through the API (to the
// page, the site, its structure, its audience) is on the next view.
func TestPublishedPagesAreKeptAndFresh(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	intro := f.page(f.space, map[string]any{"title": "Changelog", "markdown": "Version one.\n"})
	base := f.publish()
	v := newVisitor(t)
	v.get(base+"/changelog").expect(t, http.StatusOK, "Version one.")
	hits := metric(t, f.env, "docsapi_published_cache_hits_total")
	second := v.get(base+"/changelog").expect(t, http.StatusOK, "Version one.")
	if got := metric(t, f.env, "docsapi_published_cache_hits_total"); got != hits+1 {
		t.Errorf("the second view was not kept: hits %v → %v", hits, got)
	}
	if metric(t, f.env, "docsapi_published_cache_bytes") <= 0 || metric(t, f.env, "docsapi_published_cache_entries") < 1 {
		t.Error("the cache reports no size")
	}
	etag := second.header.Get("ETag")
	if etag == "" || v.get(base+"/changelog", "If-None-Match", etag).status != http.StatusNotModified {
		t.Errorf("ETag %q: no 304", etag)
	}
	if p := v.get(base+"/changelog", "Accept-Encoding", "gzip"); p.header.Get("Content-Encoding") != "gzip" {
		// The client decompresses it itself when it asked for nothing;
		// asked explicitly, it is given as it came.
		t.Errorf("no gzip: %q", p.header.Get("Content-Encoding"))
	}

	for _, change := range []struct {
		name  string
		apply func()
		want  string
		path  string
	}{
		{"a page edit", func() {
			out := f.admin.GraphQL(updatePageDocument, map[string]any{"s": f.space, "p": intro, "in": map[string]any{"markdown": "Version two.\n"}})
			if len(out.Errors) > 0 {
				t.Fatalf("updatePage: %+v", out.Errors)
			}
		}, "Version two.", "/changelog"},
		{"a site's title", func() {
			f.admin.Do("PATCH", f.sitePath(), map[string]any{"title": "Acme Handbook"}).Expect(http.StatusOK)
		}, "Acme Handbook", "/changelog"},
		{"a page added", func() {
			f.page(f.space, map[string]any{"title": "Roadmap", "markdown": "Later.\n"})
		}, ">Roadmap</a>", "/changelog"},
		{"a site space's customization", func() {
			ss := f.admin.Do("GET", f.sitePath("/site-spaces"), nil).Expect(http.StatusOK).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)
			f.admin.Do("PATCH", f.sitePath("/site-spaces/"+ss+"/customization"),
				map[string]any{"styling": map[string]any{"primaryColor": map[string]any{"light": "#aa0000", "dark": "#ff8888"}}}).Expect(http.StatusOK)
		}, "--primary:#", "/changelog"},
	} {
		v.get(base + change.path) // kept before the change
		change.apply()
		v.get(base+change.path).expect(t, http.StatusOK, change.want)
	}
	f.admin.Do("POST", f.sitePath("/unpublish"), nil).Expect(http.StatusOK)
	v.get(base+"/changelog").expect(t, http.StatusNotFound)
}

// An edit to a space of a section some visitors do not see reaches the
// pages kept for those who see it, whoever read the site last: what a
// site shows is all it shows to any visitor, not what the last one saw.
func TestEditsReachThePagesOfEveryVisitor(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	beta := f.betaSection()
	changelog := f.page(beta, map[string]any{"title": "Changelog", "markdown": "Version one.\n"})
	base := f.publish()
	tester := newVisitor(t)
	for _, p := range []string{"/beta/changelog", "/beta/changelog.md", "/llms-full.txt"} {
		tester.get(base+p+"?visitor.beta=true").expect(t, http.StatusOK, "Version one.")
		tester.get(base+p+"?visitor.beta=true").expect(t, http.StatusOK, "Version one.") // kept
	}
	newVisitor(t).get(base).expect(t, http.StatusOK).lacks(t, "Beta program") // shown one space only
	out := f.admin.GraphQL(updatePageDocument, map[string]any{"s": beta, "p": changelog, "in": map[string]any{"markdown": "Version two.\n"}})
	if len(out.Errors) > 0 {
		t.Fatalf("updatePage: %+v", out.Errors)
	}
	for _, p := range []string{"/beta/changelog", "/beta/changelog.md", "/llms-full.txt"} {
		tester.get(base+p+"?visitor.beta=true").expect(t, http.StatusOK, "Version two.")
	}
}

// Two instances of the server on one database: an edit through the API of
// one is on the other's next view of a page it keeps, every time, once the
// other heard of it. PostgreSQL delivers the change at its commit; on an
// overloaded machine that can take longer than the test's next request,
// so the test waits for the other instance to hear it (its metric) and
// counts the views that came first apart: no page may outlive the change.
func TestPublishedPagesFreshAcrossInstances(t *testing.T) {
	t.Parallel()
	f := newReaderFixture(t, "public")
	page := f.page(f.space, map[string]any{"title": "Status", "markdown": "Edit 0.\n"})
	base := f.publish()
	other := f.env.AnotherProcessOwnPool()
	otherBase := strings.Replace(base, f.env.URL, other.URL, 1)
	v := newVisitor(t)
	stale, early := 0, 0
	const edits = 20
	for i := 1; i <= edits; i++ {
		v.get(otherBase+"/status").expect(t, http.StatusOK, fmt.Sprintf("Edit %d.", i-1)) // made by the other instance,
		v.get(otherBase+"/status").expect(t, http.StatusOK, fmt.Sprintf("Edit %d.", i-1)) // and kept
		heard := metric(t, other, "docsapi_published_changes_heard_total")
		out := f.admin.GraphQL(updatePageDocument, map[string]any{"s": f.space, "p": page, "in": map[string]any{"markdown": fmt.Sprintf("Edit %d.\n", i)}})
		if len(out.Errors) > 0 {
			t.Fatalf("updatePage: %+v", out.Errors)
		}
		for deadline, waited := time.Now().Add(10*time.Second), false; metric(t, other, "docsapi_published_changes_heard_total") == heard; waited = true {
			if time.Now().After(deadline) {
				t.Fatalf("edit %d: the other instance heard no change in 10 s", i)
			}
			if !waited {
				early++
			}
			time.Sleep(time.Millisecond)
		}
		if p := v.get(otherBase + "/status"); !strings.Contains(p.body, fmt.Sprintf("Edit %d.", i)) {
			stale++
		}
	}
	t.Logf("the other instance heard %d of %d edits after the edit's answer", early, edits)
	if hits := metric(t, other, "docsapi_published_cache_hits_total"); hits < edits {
		t.Errorf("the other instance kept no page: %v hits", hits)
	}
	if stale > 0 {
		t.Errorf("%d of %d views after an edit were stale", stale, edits)
	}
}
