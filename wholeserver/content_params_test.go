package wholeserver_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

// without returns v (decoded JSON) without the members named keys, at any depth.
func without(v any, keys ...string) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if !slices.Contains(keys, k) {
				out[k] = without(x, keys...)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = without(x, keys...)
		}
		return out
	}
	return v
}

func decoded(t *testing.T, res *servertest.Response) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(res.Expect(http.StatusOK).Body, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The content reads' metadata, computed and evaluated parameters:
// metadata=false leaves out the git metadata; computed and evaluated
// change nothing here (no computed content, no expressions) but are checked.
func TestContentReadParameters(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	repo := bareRepo(t)
	pushFiles(t, repo, map[string]string{
		"README.md":                "# Welcome\n\nSee ![logo](.gitbook/assets/logo.txt).\n",
		"SUMMARY.md":               "# Table of contents\n\n* [Welcome](README.md)\n* [Guide](guide.md)\n",
		"guide.md":                 "# Guide\n\nSteps.\n",
		".gitbook/assets/logo.txt": "LOGO",
	})
	space := e.alice.Do("POST", "/v1/orgs/"+e.org+"/spaces", `{"title":"Imported"}`).Expect(http.StatusCreated).String("id")
	base := "/v1/spaces/" + space
	e.alice.Do("POST", base+"/git/import", map[string]any{"url": repo, "ref": "refs/heads/main"}).Expect(http.StatusNoContent)
	content := e.alice.Do("GET", base+"/content", nil).Expect(http.StatusOK).JSON()
	rev := content["id"].(string)
	page := content["pages"].([]any)[1].(map[string]any)
	file := content["files"].([]any)[0].(map[string]any)["id"].(string)
	cr := e.alice.Do("POST", base+"/change-requests", `{"subject":"Later"}`).Expect(http.StatusCreated).String("id")
	crBase := base + "/change-requests/" + cr

	reads := []string{
		base + "/content", base + "/content/pages", base + "/content/files", base + "/content/files/" + file,
		base + "/content/page/" + page["id"].(string), base + "/content/path/" + page["path"].(string),
		base + "/revisions/" + rev, base + "/revisions/" + rev + "/pages", base + "/revisions/" + rev + "/files",
		base + "/revisions/" + rev + "/files/" + file, base + "/revisions/" + rev + "/page/" + page["id"].(string),
		base + "/revisions/" + rev + "/path/" + page["path"].(string),
		crBase + "/content", crBase + "/content/pages", crBase + "/content/files", crBase + "/content/files/" + file,
		crBase + "/content/page/" + page["id"].(string), crBase + "/content/path/" + page["path"].(string),
	}
	for _, path := range reads {
		t.Run(strings.TrimPrefix(path, base), func(t *testing.T) {
			sep := "?"
			full := decoded(t, e.alice.Do("GET", path, nil))
			if !strings.Contains(mustJSON(t, full), `"git":`) {
				t.Fatalf("no git metadata by default: %s", mustJSON(t, full))
			}
			lean := decoded(t, e.alice.Do("GET", path+sep+"metadata=false", nil))
			if strings.Contains(mustJSON(t, lean), `"git":`) {
				t.Errorf("git metadata with metadata=false: %s", mustJSON(t, lean))
			}
			// Signed download addresses are made afresh at each read.
			if !reflect.DeepEqual(without(lean, "downloadURL"), without(full, "git", "downloadURL")) {
				t.Errorf("metadata=false changed more than git:\n%s\n%s", mustJSON(t, lean), mustJSON(t, full))
			}
			if got := decoded(t, e.alice.Do("GET", path+sep+"metadata=true&computed=true", nil)); !reflect.DeepEqual(without(got, "downloadURL"), without(full, "downloadURL")) {
				t.Errorf("explicit defaults changed the answer")
			}
			if got := decoded(t, e.alice.Do("GET", path+sep+"computed=false", nil)); !reflect.DeepEqual(without(got, "downloadURL"), without(full, "downloadURL")) {
				t.Errorf("computed=false changed the answer (there is no computed content)")
			}
			for _, bad := range []string{"metadata=maybe", "computed=2", "metadata="} {
				e.alice.Do("GET", path+sep+bad, nil).Expect(http.StatusBadRequest).ErrorMessage()
			}
			if !strings.Contains(path, "/page/") && !strings.Contains(path, "/path/") {
				return
			}
			for _, v := range []string{"true", "false", "deterministic-only"} {
				got := decoded(t, e.alice.Do("GET", path+sep+"evaluated="+v, nil))
				if !reflect.DeepEqual(without(got, "downloadURL"), without(full, "downloadURL")) {
					t.Errorf("evaluated=%s changed the answer (there are no expressions)", v)
				}
			}
			msg := e.alice.Do("GET", path+sep+"evaluated=sometimes", nil).Expect(http.StatusBadRequest).ErrorMessage()
			if !strings.Contains(msg, "evaluated") {
				t.Errorf("message: %q", msg)
			}
		})
	}
}
