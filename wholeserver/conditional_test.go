package wholeserver_test

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/rest"
)

// Conditional requests: every read answers an ETag, and PATCH, PUT and
// DELETE honour If-Match (rest/conditional.go).

var strongETag = regexp.MustCompile(`^"[A-Za-z0-9_-]+"$`)

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

// etag GETs path as u and returns its ETag, failing when there is none.
func etag(t *testing.T, u *servertest.User, path string) string {
	t.Helper()
	res := u.Do("GET", path, nil).Expect(http.StatusOK)
	tag := res.Header.Get("ETag")
	if !strongETag.MatchString(tag) {
		t.Fatalf("GET %s: ETag %q, want a strong entity tag", path, tag)
	}
	return tag
}

func TestIfMatch(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	path := "/v1/spaces/" + alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")

	// The tag is the representation's: the same until it changes.
	e1 := etag(t, alice, path)
	if again := etag(t, alice, path); again != e1 {
		t.Fatalf("two reads of an unchanged space: %s then %s", e1, again)
	}
	res := alice.DoWith("GET", path, nil, hdr("If-None-Match", e1)).Expect(http.StatusNotModified)
	if len(res.Body) != 0 || res.Header.Get("ETag") != e1 {
		t.Fatalf("304: ETag %q, body %q", res.Header.Get("ETag"), res.Body)
	}
	alice.DoWith("GET", path, nil, hdr("If-None-Match", `"other", W/`+e1)).Expect(http.StatusNotModified)
	alice.DoWith("GET", path, nil, hdr("If-None-Match", `"other"`)).Expect(http.StatusOK)

	// A write from the current tag is made; from a stale one, refused with
	// the current tag, and nothing changes.
	alice.DoWith("PATCH", path, `{"title":"First"}`, hdr("If-Match", e1)).Expect(http.StatusOK)
	e2 := etag(t, alice, path)
	if e2 == e1 {
		t.Fatal("the tag did not change with the title")
	}
	res = alice.DoWith("PATCH", path, `{"title":"Over a stale read"}`, hdr("If-Match", e1)).Expect(http.StatusPreconditionFailed)
	if msg := res.ErrorMessage(); !strings.Contains(msg, e2) || res.Header.Get("ETag") != e2 {
		t.Fatalf("412: %q, ETag %q; want the current tag %s", msg, res.Header.Get("ETag"), e2)
	}
	if got := alice.Do("GET", path, nil).String("title"); got != "First" || etag(t, alice, path) != e2 {
		t.Fatalf("a refused write changed the space: title %q", got)
	}
	// If-Match compares strongly: a weak tag never matches. A list matches
	// by any of its tags; * by the resource's existing.
	alice.DoWith("PATCH", path, `{"title":"Weak"}`, hdr("If-Match", "W/"+e2)).Expect(http.StatusPreconditionFailed)
	alice.DoWith("PATCH", path, `{"title":"Second"}`, hdr("If-Match", `"other", `+e2)).Expect(http.StatusOK)
	alice.DoWith("PATCH", path, `{"title":"Third"}`, hdr("If-Match", "*")).Expect(http.StatusOK)
	alice.DoWith("PATCH", path, `{"title":"Bad"}`, hdr("If-Match", "not-a-tag")).Expect(http.StatusBadRequest).ErrorMessage()
	// Without If-Match, as GitBook's client sends it: as before.
	alice.Do("PATCH", path, `{"title":"Fourth"}`).Expect(http.StatusOK)

	// DELETE: from the current tag; no resource matches nothing, not even *.
	stale := etag(t, alice, path)
	alice.Do("PATCH", path, `{"title":"Fifth"}`).Expect(http.StatusOK)
	alice.DoWith("DELETE", path, nil, hdr("If-Match", stale)).Expect(http.StatusPreconditionFailed).ErrorMessage()
	alice.DoWith("DELETE", path, nil, hdr("If-Match", etag(t, alice, path))).Expect(http.StatusNoContent)
	alice.Do("GET", path, nil).Expect(http.StatusNotFound)
	alice.DoWith("DELETE", path, nil, hdr("If-Match", "*")).Expect(http.StatusPreconditionFailed).ErrorMessage()
	alice.Do("DELETE", path, nil).Expect(http.StatusNoContent)
}

// Two clients writing from the same tag at once: one write is made, the
// other refused, every time (the check and the write run under one lock).
func TestConcurrentIfMatchWrites(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	path := "/v1/spaces/" + alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	for round := range 5 {
		tag := etag(t, alice, path)
		statuses := make([]int, 2)
		var wg sync.WaitGroup
		for i := range statuses {
			wg.Go(func() {
				statuses[i] = alice.DoWith("PATCH", path, map[string]any{"title": fmt.Sprintf("round %d writer %d", round, i)}, hdr("If-Match", tag)).Status
			})
		}
		wg.Wait()
		sort.Ints(statuses)
		if statuses[0] != http.StatusOK || statuses[1] != http.StatusPreconditionFailed {
			t.Fatalf("round %d: statuses %v, want one 200 and one 412", round, statuses)
		}
	}
}

// Across the route table: every GET answering 200 has a strong ETag and
// honours If-None-Match; the tag of every resource a write can target is
// stable (so If-Match can match it); and every write sent with a stale
// If-Match is refused and changes nothing.
func TestConditionalRequestsAcrossTheRouteTable(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	f := newWalkFixture(t, env)
	owner := f.owner

	pathOf := func(route rest.Route) string {
		path := strings.ReplaceAll(route.Path, "...}", "}")
		for name, id := range threadIDs(route, f.ids) {
			path = strings.ReplaceAll(path, "{"+name+"}", id)
		}
		if strings.Contains(path, "{") {
			t.Fatalf("no id for a parameter of %s", route.Path)
		}
		return path
	}
	readable := map[string]bool{} // the GET paths of the table (no query) answering 200
	snapshot := func() map[string]string {
		out := map[string]string{}
		for _, route := range rest.Routes {
			if route.Method == "GET" {
				path := pathOf(route)
				res := owner.Do("GET", path+f.queryOf(route, f.ids), nil)
				out[route.Path] = fmt.Sprintf("%d %s", res.Status, res.Body)
			}
		}
		return out
	}

	ok := 0
	for _, route := range rest.Routes {
		if route.Method != "GET" {
			continue
		}
		path := pathOf(route) + f.queryOf(route, f.ids)
		res := owner.Do("GET", path, nil)
		if res.Status != http.StatusOK {
			t.Logf("GET %s: %d (no tag to check)", route.Path, res.Status)
			continue
		}
		ok++
		readable[route.Path] = true
		tag := res.Header.Get("ETag")
		if !strongETag.MatchString(tag) {
			t.Errorf("GET %s (%s): ETag %q, want a strong entity tag", route.Path, route.Operation, tag)
			continue
		}
		// The clock has not moved: even bodies with signed download
		// addresses are the same (they expire by steps of time).
		if got := owner.DoWith("GET", path, nil, hdr("If-None-Match", tag)); got.Status != http.StatusNotModified || got.Header.Get("ETag") != tag || len(got.Body) != 0 {
			t.Errorf("GET %s with If-None-Match of its own tag: %d, ETag %s, want 304 with %s", route.Path, got.Status, got.Header.Get("ETag"), tag)
		}
	}
	if ok < 100 {
		t.Fatalf("only %d GET routes answered 200: the fixture does not reach the table", ok)
	}

	// The resources of writes: their tag does not move with time alone.
	targets := 0
	for _, route := range rest.Routes {
		if route.Method == "GET" || route.Method == "POST" || !readable[route.Path] {
			continue
		}
		targets++
		path := pathOf(route)
		before := etag(t, owner, path)
		env.Clock.Advance(time.Minute)
		if after := etag(t, owner, path); after != before {
			t.Errorf("%s %s: the tag of GET %s changed with the clock alone (%s, then %s): If-Match could never match",
				route.Method, route.Path, route.Path, before, after)
		}
	}
	if targets < 30 {
		t.Fatalf("only %d writes have a GET of their path", targets)
	}

	before := snapshot()
	refused := map[int]int{}
	for _, route := range rest.Routes {
		if route.Method == "GET" || route.Method == "POST" {
			continue
		}
		res := owner.DoWith(route.Method, pathOf(route), `{}`, hdr("If-Match", `"stale"`))
		refused[res.Status]++
		switch res.Status {
		case http.StatusPreconditionFailed:
			res.ErrorMessage() // the reference's error shape
		case http.StatusBadRequest:
			// The body is checked first: a request that fails whatever its
			// preconditions is answered as such (RFC 9110 §13.2.1).
		default:
			t.Errorf("%s %s with a stale If-Match: %d %s, want 412", route.Method, route.Path, res.Status, res.Body)
		}
	}
	t.Logf("%d GET routes answered 200 with a tag; %d writes target one; writes with a stale If-Match answered (status: count) %v", ok, targets, refused)
	if refused[http.StatusPreconditionFailed] < 30 {
		t.Errorf("only %d writes answered 412", refused[http.StatusPreconditionFailed])
	}
	after := snapshot()
	for path, b := range before {
		if after[path] != b {
			t.Errorf("GET %s changed after writes with a stale If-Match:\n%.300s\n%.300s", path, b, after[path])
		}
	}
}

// A read showing signed download addresses keeps its tag for a while: the
// addresses expire by steps of time, not a second after the previous one.
func TestTagsOfReadsWithDownloadAddresses(t *testing.T) {
	t.Parallel()
	env := servertest.New(t) // its clock starts at 03:04:05, in a 5-minute step
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	file := uploadedFile(t, alice, space, "", "a.txt", []byte("a"))
	for _, path := range []string{"/v1/spaces/" + space + "/content", "/v1/spaces/" + space + "/content/files/" + file} {
		first := etag(t, alice, path)
		env.Clock.Advance(time.Second)
		if again := etag(t, alice, path); again != first {
			t.Errorf("GET %s: the tag moved with a second of time", path)
		}
	}
	download := alice.Do("GET", "/v1/spaces/"+space+"/content/files/"+file, nil).String("downloadURL")
	env.Clock.Advance(59 * time.Minute)
	res, err := http.Get(download)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("an address made 59 minutes ago: %d", res.StatusCode)
	}
}
