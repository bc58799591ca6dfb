package wholeserver_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

// bareRepo makes an empty bare repository and returns its file:// URL.
func bareRepo(t *testing.T) string { return servertest.BareRepo(t) }

// pushFiles commits files to refs/heads/main of the repository at url.
func pushFiles(t *testing.T, url string, files map[string]string) {
	servertest.PushFiles(t, url, files)
}

// pageOutline is the titles, nesting and bodies of a space's pages.
func pageOutline(t *testing.T, e *crEnv, space string) string {
	t.Helper()
	pages := e.alice.Do("GET", "/v1/spaces/"+space+"/content/pages", nil).Expect(http.StatusOK).JSON()["pages"].([]any)
	var b strings.Builder
	var walk func(pages []any, depth int)
	walk = func(pages []any, depth int) {
		for _, p := range pages {
			m := p.(map[string]any)
			b.WriteString(strings.Repeat("  ", depth) + m["title"].(string) + " (" + m["type"].(string) + ")")
			if m["hidden"] == true {
				b.WriteString(" hidden")
			}
			if m["type"] == "document" {
				page := e.alice.Do("GET", "/v1/spaces/"+space+"/content/page/"+m["id"].(string)+"?format=markdown", nil).Expect(http.StatusOK).JSON()
				b.WriteString(": " + strings.TrimSpace(page["markdown"].(string)))
				if d, ok := page["description"]; ok {
					b.WriteString(" [" + d.(string) + "]")
				}
			}
			b.WriteString("\n")
			if kids, _ := m["pages"].([]any); len(kids) > 0 {
				walk(kids, depth+1)
			}
		}
	}
	walk(pages, 0)
	return b.String()
}

func TestGitImportExportRoundTrip(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	source := bareRepo(t)
	pushFiles(t, source, map[string]string{
		".gitbook.yaml":                 "root: ./docs/\n\nstructure:\n  readme: README.md\n  summary: SUMMARY.md\n",
		"docs/README.md":                "# Welcome\n\nHello there.\n",
		"docs/SUMMARY.md":               "# Table of contents\n\n* [Welcome](README.md)\n* [Guide](guide/README.md)\n  * [Install](guide/install.md)\n\n## Reference\n\n* [API](reference/api.md)\n",
		"docs/guide/README.md":          "---\ndescription: All about the guide\n---\n\n# Guide\n\nThe guide.\n",
		"docs/guide/install.md":         "# Install\n\nRun ![logo](../.gitbook/assets/logo.txt).\n",
		"docs/reference/api.md":         "---\nhidden: true\n---\n\n# API\n\nEndpoints.\n",
		"docs/.gitbook/assets/logo.txt": "LOGO",
		"other/ignored.md":              "# Not in the project\n",
	})
	space := e.alice.Do("POST", "/v1/orgs/"+e.org+"/spaces", `{"title":"Imported"}`).Expect(http.StatusCreated).String("id")
	e.alice.Do("POST", "/v1/spaces/"+space+"/git/import", map[string]any{"url": source, "ref": "refs/heads/main"}).Expect(http.StatusNoContent)
	want := "Welcome (document): Hello there.\nGuide (document): The guide. [All about the guide]\n  Install (document): Run ![logo](../.gitbook/assets/logo.txt).\nReference (group)\n  API (document) hidden: Endpoints.\n"
	if got := pageOutline(t, e, space); got != want {
		t.Fatalf("imported:\n%s\nwant:\n%s", got, want)
	}
	rev := e.alice.Do("GET", "/v1/spaces/"+space+"/content", nil).Expect(http.StatusOK).JSON()
	git, _ := rev["git"].(map[string]any)
	files, _ := rev["files"].([]any)
	if git == nil || git["message"] != "Initial content" || len(git["oid"].(string)) != 40 || len(files) != 1 {
		t.Errorf("revision: git %v, files %v", git, files)
	}
	if info := e.alice.Do("GET", "/v1/spaces/"+space+"/git/info", nil).Expect(http.StatusOK).JSON(); info["url"] != source || info["ref"] != "refs/heads/main" {
		t.Errorf("git info: %v", info)
	}

	// Export, then import the export elsewhere: the same pages.
	target := bareRepo(t)
	e.alice.Do("POST", "/v1/spaces/"+space+"/git/export", map[string]any{"url": target, "ref": "refs/heads/docs", "commitMessage": "Export"}).
		Expect(http.StatusNoContent)
	again := e.alice.Do("POST", "/v1/orgs/"+e.org+"/spaces", `{"title":"Round trip"}`).Expect(http.StatusCreated).String("id")
	e.alice.Do("POST", "/v1/spaces/"+again+"/git/import", map[string]any{"url": target, "ref": "refs/heads/docs"}).Expect(http.StatusNoContent)
	if got := pageOutline(t, e, again); got != want {
		t.Errorf("round trip:\n%s\nwant:\n%s", got, want)
	}
	// A second export to the same ref commits on top of the first.
	e.alice.Do("POST", "/v1/spaces/"+space+"/git/export", map[string]any{"url": target, "ref": "refs/heads/docs", "commitMessage": "Again"}).
		Expect(http.StatusNoContent)

	// Reimporting keeps page ids: pages are updated, not replaced.
	before := e.alice.Do("GET", "/v1/spaces/"+space+"/content/pages", nil).Expect(http.StatusOK).Body
	e.alice.Do("POST", "/v1/spaces/"+space+"/git/import", map[string]any{"url": source, "ref": "refs/heads/main"}).Expect(http.StatusNoContent)
	after := e.alice.Do("GET", "/v1/spaces/"+space+"/content/pages", nil).Expect(http.StatusOK).Body
	if idsOf(before) != idsOf(after) {
		t.Errorf("page ids changed on reimport")
	}

	// A standalone import leaves the content alone.
	current := e.alice.Do("GET", "/v1/spaces/"+e.space+"/content", nil).Expect(http.StatusOK).String("id")
	e.alice.Do("POST", "/v1/spaces/"+e.space+"/git/import", map[string]any{"url": source, "ref": "refs/heads/main", "standalone": true}).
		Expect(http.StatusNoContent)
	if got := e.alice.Do("GET", "/v1/spaces/"+e.space+"/content", nil).Expect(http.StatusOK).String("id"); got != current {
		t.Error("a standalone import changed the content")
	}

	// Refused: unknown ref, bad ref, file outside the allowed root, private
	// hosts (credentials are never echoed), readers.
	for _, body := range []map[string]any{
		{"url": source, "ref": "refs/heads/nope"},
		{"url": source, "ref": "main"},
		{"url": "file:///etc", "ref": "refs/heads/main"},
		{"url": "https://user:s3cret@10.1.2.3/repo.git", "ref": "refs/heads/main"},
		{"url": "ftp://example.com/x", "ref": "refs/heads/main"},
		{"ref": "refs/heads/main"},
	} {
		res := e.alice.Do("POST", "/v1/spaces/"+space+"/git/import", body).Expect(http.StatusBadRequest)
		if msg := res.ErrorMessage(); strings.Contains(msg, "s3cret") {
			t.Errorf("credentials in an error: %s", msg)
		}
	}
	reader := e.env.NewUser("Reader")
	reader.Join(e.org, store.RoleRead)
	reader.Do("POST", "/v1/spaces/"+space+"/git/import", map[string]any{"url": source, "ref": "refs/heads/main"}).Expect(http.StatusForbidden)
}

// idsOf lists the "id" members of a JSON body, in order.
func idsOf(body []byte) string {
	var ids []string
	for _, part := range strings.Split(string(body), `"id":"`)[1:] {
		ids = append(ids, part[:strings.Index(part, `"`)])
	}
	return strings.Join(ids, ",")
}
