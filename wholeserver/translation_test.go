package wholeserver_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/graph/translator"
)

// fakeTranslationAPI speaks OpenAI's chat-completions protocol on loopback:
// it "translates" a text by prefixing it with "FR:" (or answers with the
// wrong number of translations when broken is set).
type fakeTranslationAPI struct {
	*httptest.Server
	requests atomic.Int64
	broken   atomic.Bool
}

func newFakeTranslationAPI(t *testing.T) *fakeTranslationAPI {
	f := &fakeTranslationAPI{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer test-key" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		var req struct {
			Model    string `json:"model"`
			Messages []struct{ Role, Content string }
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) != 2 || req.Model != "test-model" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var in struct{ Texts []string }
		if err := json.Unmarshal([]byte(req.Messages[1].Content), &in); err != nil {
			http.Error(w, "bad texts", http.StatusBadRequest)
			return
		}
		out := make([]string, len(in.Texts))
		for i, text := range in.Texts {
			out[i] = "FR:" + text
		}
		if f.broken.Load() {
			out = out[1:]
		}
		content, _ := json.Marshal(map[string]any{"translations": out})
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": string(content)}}}})
	}))
	t.Cleanup(f.Close)
	return f
}

// waitTranslation polls a translation until its status is final.
func waitTranslation(t *testing.T, u *servertest.User, org, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		tr := u.Do("GET", "/v1/orgs/"+org+"/translations/"+id, nil).Expect(http.StatusOK).JSON()
		if tr["status"] == "completed" || tr["status"] == "failed" {
			return tr
		}
		if time.Now().After(deadline) {
			t.Fatalf("translation %s did not finish: %v", id, tr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

const sourceMarkdown = "Install the tool with `make install` first.\n\n```sh\nmake install\n```\n\nSee [the guide](https://example.com/guide).\n"

func TestTranslationRuns(t *testing.T) {
	api := newFakeTranslationAPI(t)
	env := servertest.New(t, servertest.Options{Jobs: true,
		Translator: &translator.OpenAI{URL: api.URL + "/v1", Model: "test-model", APIKey: "test-key"}})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Docs"}).Expect(http.StatusCreated).String("id")
	page, _, _ := createPage(t, alice, space, "Getting started", sourceMarkdown)

	created := alice.Do("POST", "/v1/orgs/"+org+"/translations", map[string]any{
		"source": map[string]any{"space": space, "language": "en"}, "language": "fr",
		"instructions": map[string]any{"object": "document", "data": map[string]any{}, "nodes": []any{}},
	}).Expect(http.StatusCreated).JSON()
	id := created["id"].(string)
	if created["object"] != "translation" || created["status"] != "completed" || created["result"] != nil {
		t.Fatalf("new translation: %v", created)
	}

	// The first run makes the result space.
	alice.Do("POST", "/v1/orgs/"+org+"/translations/"+id+"/run", nil).Expect(http.StatusNoContent)
	tr := waitTranslation(t, alice, org, id)
	if tr["status"] != "completed" {
		t.Fatalf("run: %v", tr)
	}
	result := tr["result"].(map[string]any)
	resultSpace := result["space"].(string)
	translated := alice.Do("GET", "/v1/spaces/"+resultSpace, nil).Expect(http.StatusOK).JSON()
	if translated["title"] != "Docs (fr)" || translated["language"] != "fr" {
		t.Errorf("result space: %v", translated)
	}
	got := alice.Do("GET", "/v1/spaces/"+resultSpace+"/content/page/"+page+"?format=markdown", nil).Expect(http.StatusOK).JSON()
	want := "FR:Install the tool with `make install` FR:first.\n\n```sh\nmake install\n```\n\nFR:See [FR:the guide](https://example.com/guide)FR:.\n"
	if got["title"] != "FR:Getting started" || got["markdown"] != want {
		t.Errorf("translated page: title %q, markdown %q; want markdown %q", got["title"], got["markdown"], want)
	}
	stats := tr["stats"].(map[string]any)
	if stats["runs"] != 1.0 || stats["latestPages"] != 1.0 || stats["totalPages"] != 1.0 || stats["latestWords"].(float64) < 10 {
		t.Errorf("stats after one run: %v", stats)
	}

	// A second run, after a change, updates the same space with a new revision.
	if out := alice.GraphQL(`mutation($s: ID!, $p: ID!) { updatePage(spaceId: $s, pageId: $p, input: {markdown: "Changed."}) { id } }`,
		map[string]any{"s": space, "p": page}); len(out.Errors) > 0 {
		t.Fatalf("updatePage: %+v", out.Errors)
	}
	alice.Do("POST", "/v1/orgs/"+org+"/translations/"+id+"/run", nil).Expect(http.StatusNoContent)
	tr = waitTranslation(t, alice, org, id)
	second := tr["result"].(map[string]any)
	if tr["status"] != "completed" || second["space"] != resultSpace || second["revision"] == result["revision"] {
		t.Fatalf("second run: %v", tr)
	}
	got = alice.Do("GET", "/v1/spaces/"+resultSpace+"/content/page/"+page+"?format=markdown", nil).Expect(http.StatusOK).JSON()
	if got["markdown"] != "FR:Changed.\n" && got["markdown"] != "FR:Changed." {
		t.Errorf("after the second run: %q", got["markdown"])
	}
	stats = tr["stats"].(map[string]any)
	if stats["runs"] != 2.0 || stats["totalPages"] != 1.0 || stats["totalWords"].(float64) <= stats["latestWords"].(float64) {
		t.Errorf("stats after two runs: %v", stats)
	}

	// A provider that answers badly fails the run, saying why, and changes
	// nothing in the result space.
	api.broken.Store(true)
	alice.Do("POST", "/v1/orgs/"+org+"/translations/"+id+"/run", nil).Expect(http.StatusNoContent)
	tr = waitTranslation(t, alice, org, id)
	if tr["status"] != "failed" || !strings.Contains(tr["statusMessage"].(string), "translations for") {
		t.Errorf("broken provider: %v", tr)
	}
	if r := tr["result"].(map[string]any); r["revision"] != second["revision"] {
		t.Errorf("a failed run changed the result: %v", r)
	}

	// The list, then delete: 205, then 204; the result space stays.
	list := alice.Do("GET", "/v1/orgs/"+org+"/translations", nil).Expect(http.StatusOK).JSON()
	if items := list["items"].([]any); len(items) != 1 {
		t.Errorf("list: %v", list)
	}
	alice.Do("DELETE", "/v1/orgs/"+org+"/translations/"+id, nil).Expect(http.StatusResetContent)
	alice.Do("DELETE", "/v1/orgs/"+org+"/translations/"+id, nil).Expect(http.StatusNoContent)
	alice.Do("GET", "/v1/orgs/"+org+"/translations/"+id, nil).Expect(http.StatusNotFound)
	alice.Do("GET", "/v1/spaces/"+resultSpace, nil).Expect(http.StatusOK)
}

func TestTranslationWithoutProviderFails(t *testing.T) {
	env := servertest.New(t, servertest.Options{Jobs: true})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Docs"}).Expect(http.StatusCreated).String("id")
	createPage(t, alice, space, "Intro", "Hello.")
	id := alice.Do("POST", "/v1/orgs/"+org+"/translations", map[string]any{
		"source": map[string]any{"space": space, "language": "en"}, "language": "de"}).Expect(http.StatusCreated).String("id")
	alice.Do("POST", "/v1/orgs/"+org+"/translations/"+id+"/run", nil).Expect(http.StatusNoContent)
	tr := waitTranslation(t, alice, org, id)
	if tr["status"] != "failed" || !strings.Contains(tr["statusMessage"].(string), "no translation provider") || tr["result"] != nil {
		t.Errorf("run without a provider: %v", tr)
	}
	if stats := tr["stats"].(map[string]any); stats["runs"] != 0.0 {
		t.Errorf("a failed run counted: %v", stats)
	}
}

func TestTranslationInput(t *testing.T) {
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Docs"}).Expect(http.StatusCreated).String("id")
	bob := env.NewUser("Bob")
	other := bob.NewOrg("Other")
	foreign := bob.Do("POST", "/v1/orgs/"+other+"/spaces", map[string]any{"title": "Theirs"}).Expect(http.StatusCreated).String("id")
	base := "/v1/orgs/" + org + "/translations"
	for _, tc := range []struct {
		name string
		body any
	}{
		{"no source", map[string]any{"language": "fr"}},
		{"no language", map[string]any{"source": map[string]any{"space": space, "language": "en"}}},
		{"unknown language", map[string]any{"source": map[string]any{"space": space, "language": "en"}, "language": "klingon"}},
		{"same language", map[string]any{"source": map[string]any{"space": space, "language": "fr"}, "language": "fr"}},
		{"unknown space", map[string]any{"source": map[string]any{"space": "nope", "language": "en"}, "language": "fr"}},
		{"another organization's space", map[string]any{"source": map[string]any{"space": foreign, "language": "en"}, "language": "fr"}},
		{"instructions not an object", map[string]any{"source": map[string]any{"space": space, "language": "en"}, "language": "fr", "instructions": "be nice"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			alice.Do("POST", base, tc.body).Expect(http.StatusBadRequest)
		})
	}
	if list := alice.Do("GET", base, nil).Expect(http.StatusOK).JSON(); len(list["items"].([]any)) != 0 {
		t.Errorf("bad input created translations: %v", list)
	}
	id := alice.Do("POST", base, map[string]any{"source": map[string]any{"space": space, "language": "en"}, "language": "fr"}).
		Expect(http.StatusCreated).String("id")
	alice.Do("PUT", base+"/"+id, map[string]any{}).Expect(http.StatusBadRequest)
	updated := alice.Do("PUT", base+"/"+id, map[string]any{"instructions": paragraph("Formal tone.")}).
		Expect(http.StatusOK).JSON()
	if updated["instructions"].(map[string]any)["object"] != "document" {
		t.Errorf("update: %v", updated)
	}
	for _, path := range []string{base + "/nope", base + "/nope/run"} {
		method := "GET"
		if strings.HasSuffix(path, "/run") {
			method = "POST"
		}
		alice.Do(method, path, nil).Expect(http.StatusNotFound)
	}
	// Another organization's member sees nothing.
	bob.Do("GET", base+"/"+id, nil).Expect(http.StatusNotFound)
	bob.Do("POST", base+"/"+id+"/run", nil).Expect(http.StatusNotFound)
}

// A translation whose source space is gone is left out of the list, and
// pages read on past it: each page is full while more follow, its cursor
// leads to the next visible translation, and every visible one is listed
// once, over GraphQL's edges as over REST's pages.
func TestTranslationListLeavesOutDeletedSources(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	var want []string
	for i, title := range []string{"One", "Two", "Three", "Four"} {
		space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": title}).Expect(http.StatusCreated).String("id")
		id := alice.Do("POST", "/v1/orgs/"+org+"/translations", map[string]any{
			"source": map[string]any{"space": space, "language": "en"}, "language": "fr"}).Expect(http.StatusCreated).String("id")
		if i == 1 || i == 2 {
			alice.Do("DELETE", "/v1/spaces/"+space, nil).Expect(http.StatusNoContent)
			continue
		}
		want = append(want, id)
	}

	var got []string
	path := "/v1/orgs/" + org + "/translations?limit=1"
	for pages := 0; path != ""; pages++ {
		if pages > len(want) {
			t.Fatalf("more pages than translations: %v", got)
		}
		list := alice.Do("GET", path, nil).Expect(http.StatusOK).JSON()
		items := list["items"].([]any)
		next, _ := list["next"].(map[string]any)
		if len(items) == 0 && next != nil {
			t.Fatalf("an empty page with a next one: %v", list)
		}
		for _, it := range items {
			got = append(got, it.(map[string]any)["id"].(string))
		}
		path = ""
		if next != nil {
			path = "/v1/orgs/" + org + "/translations?limit=1&page=" + next["page"].(string)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("REST pages list %v, want %v", got, want)
	}

	res := alice.GraphQL(`query($org: ID!) { organization(id: $org) { translations(first: 1) {
		edges { cursor node { id } } pageInfo { hasNextPage endCursor } } } }`, map[string]any{"org": org})
	var page struct {
		Organization struct {
			Translations struct {
				Edges []struct {
					Cursor string
					Node   struct{ ID string }
				}
				PageInfo struct {
					HasNextPage bool
					EndCursor   string
				}
			}
		}
	}
	if err := json.Unmarshal(res.Data, &page); err != nil || len(res.Errors) > 0 {
		t.Fatalf("translations over GraphQL: %v %v %s", err, res.Errors, res.Data)
	}
	conn := page.Organization.Translations
	if len(conn.Edges) != 1 || !conn.PageInfo.HasNextPage || conn.Edges[0].Cursor != conn.PageInfo.EndCursor ||
		!slices.Contains(want, conn.Edges[0].Node.ID) {
		t.Errorf("the first page's edges and page info disagree: %s", res.Data)
	}
}
