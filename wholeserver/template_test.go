package wholeserver_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

func TestApplySpaceTemplate(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice, reader := env.NewUser("Alice"), env.NewUser("Reader")
	org := alice.NewOrg("Acme")
	reader.Join(org, store.RoleRead)
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	base := "/v1/spaces/" + space
	existing, _, _ := createPage(t, alice, space, "Existing", "# Existing")
	logo := uploadedFile(t, alice, space, "", "logo.png", []byte("not really a PNG"))
	revision := func() string { return alice.Do("GET", base+"/content", nil).Expect(http.StatusOK).String("id") }
	before := revision()

	// Bad input is a 400 and changes nothing.
	for _, body := range []string{`{}`, `{"id":"nothing"}`, `{"id":5}`,
		`{"id":"product-docs","params":{"contentRefs":{"banner":{"kind":"file","file":"` + logo + `"}}}}`,
		`{"id":"product-docs","params":{"contentRefs":{"logo":{"kind":"url","url":"https://example.com/logo.png"}}}}`,
		`{"id":"product-docs","params":{"contentRefs":{"logo":"` + logo + `"}}}`,
		`{"id":"product-docs","params":{"contentRefs":{"logo":{"kind":"file","file":"nothing"}}}}`,
		`{"id":"api-reference","params":{"contentRefs":{"logo":{"kind":"file","file":"` + logo + `"}}}}`} {
		alice.Do("POST", base+"/content/template", body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	reader.Do("POST", base+"/content/template", `{"id":"product-docs"}`).Expect(http.StatusForbidden).ErrorMessage()
	alice.Do("POST", base+"/content/template", `{"id":"product-docs","changeRequestId":"nothing"}`).Expect(http.StatusNotFound).ErrorMessage()
	alice.Do("POST", "/v1/spaces/nothing/content/template", `{"id":"product-docs"}`).Expect(http.StatusNotFound).ErrorMessage()
	if got := revision(); got != before {
		t.Fatalf("refused templates changed the content: %s → %s", before, got)
	}

	// Applied to the space: its pages follow the existing ones, and the
	// logo reference links the file.
	alice.Do("POST", base+"/content/template", `{"id":"product-docs","params":{"contentRefs":{"logo":{"kind":"file","file":"`+logo+`"}}}}`).
		Expect(http.StatusNoContent)
	content := alice.Do("GET", base+"/content/pages", nil).Expect(http.StatusOK).JSON()
	if got := titles(content["pages"].([]any)); got != "Existing,Overview,Quick start,Guides[First guide]" {
		t.Fatalf("pages after the template: %s", got)
	}
	overview := content["pages"].([]any)[1].(map[string]any)
	if overview["emoji"] != "👋" || overview["description"] != "What the product does and who it is for" || overview["path"] != "overview" {
		t.Errorf("overview page: %v", overview)
	}
	md := alice.Do("GET", base+"/content/page/"+overview["id"].(string)+"?format=markdown", nil).Expect(http.StatusOK).JSON()["markdown"].(string)
	if !strings.Contains(md, "![Logo](.gitbook/assets/logo.png)") || strings.Contains(md, "{{") {
		t.Errorf("overview markdown: %q", md)
	}
	// Its links lead to its own pages and to the file.
	var links struct {
		Stats struct {
			Total  int
			Broken struct{ Total int }
		}
	}
	alice.Do("GET", base+"/links", nil).Expect(http.StatusOK).Decode(&links)
	if links.Stats.Total != 3 || links.Stats.Broken.Total != 0 {
		t.Errorf("links of the template's pages: %+v", links)
	}
	if got := alice.Do("GET", base+"/content/page/"+existing+"?format=markdown", nil).Expect(http.StatusOK).JSON()["markdown"]; got != "# Existing" {
		t.Errorf("existing page: %v", got)
	}

	// Applied again, without the reference: new pages with their own slugs,
	// and no line for the missing logo.
	alice.Do("POST", base+"/content/template", `{"id":"product-docs"}`).Expect(http.StatusNoContent)
	pages := alice.Do("GET", base+"/content/pages", nil).Expect(http.StatusOK).JSON()["pages"].([]any)
	second := pages[4].(map[string]any)
	if len(pages) != 7 || second["title"] != "Overview" || second["path"] == "overview" {
		t.Fatalf("pages after a second application: %s (%v)", titles(pages), second["path"])
	}
	md = alice.Do("GET", base+"/content/page/"+second["id"].(string)+"?format=markdown", nil).Expect(http.StatusOK).JSON()["markdown"].(string)
	if strings.Contains(md, "Logo") || strings.Contains(md, "{{") {
		t.Errorf("markdown without the reference: %q", md)
	}

	// Applied in a change request: only the change request has the pages.
	cr := alice.Do("POST", base+"/change-requests", `{"subject":"API docs"}`).Expect(http.StatusCreated).String("id")
	mainBefore := revision()
	alice.Do("POST", base+"/content/template", `{"id":"api-reference","changeRequestId":"`+cr+`"}`).Expect(http.StatusNoContent)
	crPages := alice.Do("GET", base+"/change-requests/"+cr+"/content/pages", nil).Expect(http.StatusOK).JSON()["pages"].([]any)
	if got := titles(crPages[len(crPages)-4:]); got != "Introduction,Authentication,Errors,Endpoints" {
		t.Errorf("change request pages: %s", titles(crPages))
	}
	if revision() != mainBefore {
		t.Error("a template applied in a change request changed the space's content")
	}

	// A locked space takes no template.
	alice.Do("PATCH", base, `{"editMode":"locked"}`).Expect(http.StatusOK)
	alice.Do("POST", base+"/content/template", `{"id":"knowledge-base"}`).Expect(http.StatusConflict).ErrorMessage()

	// The catalogue is listed in GraphQL.
	var out struct {
		SpaceTemplates []struct {
			ID          string
			ContentRefs []string
		}
	}
	gql(t, alice, `{ spaceTemplates { id contentRefs } }`, nil, &out)
	if len(out.SpaceTemplates) != 3 || out.SpaceTemplates[0].ID != "product-docs" || out.SpaceTemplates[0].ContentRefs[0] != "logo" {
		t.Errorf("spaceTemplates: %+v", out.SpaceTemplates)
	}
}
