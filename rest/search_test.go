package rest_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store"
)

type searchPage struct {
	ID, Title, Path string
	Sections        []struct{ ID, Title, Body string }
	Ancestors       []struct{ Title string }
	Urls            struct{ App string }
}

func searchSpace(t *testing.T, u *servertest.User, space, query string) []searchPage {
	t.Helper()
	var out struct{ Items []searchPage }
	u.Do("GET", "/v1/spaces/"+space+"/search?query="+url.QueryEscape(query), nil).Expect(http.StatusOK).Decode(&out)
	return out.Items
}

func TestSearch(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	docs := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	guides, _, _ := createPage(t, alice, docs, "Guides", "Start here.")
	var in struct{ CreatePage struct{ ID string } }
	gql(t, alice, createPageQuery, map[string]any{"s": docs, "in": map[string]any{"title": "Install", "parent": guides,
		"markdown": "Intro text.\n\n## Requirements\n\nYou need PostgreSQL 15 and a kettle.\n\n```\n# not a heading\n```\n\n## Steps\n\nRun the installer."}}, &in)
	install := in.CreatePage.ID
	createPage(t, alice, docs, "FAQ", "Why a kettle? Tea.")

	hits := searchSpace(t, alice, docs, "PostgreSQL")
	if len(hits) != 1 || hits[0].ID != install || hits[0].Path != "guides/install" || len(hits[0].Sections) != 1 ||
		hits[0].Sections[0].ID != "requirements" || !strings.Contains(hits[0].Sections[0].Body, "PostgreSQL 15") ||
		len(hits[0].Ancestors) != 1 || hits[0].Ancestors[0].Title != "Guides" || !strings.HasSuffix(hits[0].Sections[0].Title, "Requirements") {
		t.Fatalf("hits for PostgreSQL: %+v", hits)
	}
	// Stemming, several pages, the title first.
	hits = searchSpace(t, alice, docs, "kettles")
	if len(hits) != 2 {
		t.Errorf("hits for kettles: %+v", hits)
	}
	hits = searchSpace(t, alice, docs, "installing")
	if len(hits) == 0 || hits[0].ID != install {
		t.Errorf("hits for installing: %+v", hits)
	}
	if hits := searchSpace(t, alice, docs, `"not a heading"`); len(hits) != 1 {
		t.Errorf("code blocks are text: %+v", hits)
	}

	// Only the current content is searched.
	gql(t, alice, updatePageQuery, map[string]any{"s": docs, "p": install, "in": map[string]any{"markdown": "Nothing to see."}}, nil)
	if hits := searchSpace(t, alice, docs, "PostgreSQL"); len(hits) != 0 {
		t.Errorf("the old revision was searched: %+v", hits)
	}

	for _, q := range []string{"", "?query=", "?query=%20%20", "?query=" + strings.Repeat("x", 513)} {
		alice.Do("GET", "/v1/spaces/"+docs+"/search"+q, nil).Expect(http.StatusBadRequest).ErrorMessage()
	}

	// Across the organization: only what the caller can read.
	hidden := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Secret"}`).Expect(http.StatusCreated).String("id")
	createPage(t, alice, hidden, "Kettle policy", "The secret kettle.")
	alice.Do("PATCH", "/v1/spaces/"+hidden, `{"defaultLevel":null}`).Expect(http.StatusOK)
	other := env.NewUser("Other")
	otherOrg := other.NewOrg("Elsewhere")
	otherSpace := other.Do("POST", "/v1/orgs/"+otherOrg+"/spaces", `{"title":"Theirs"}`).Expect(http.StatusCreated).String("id")
	createPage(t, other, otherSpace, "Kettles", "Their kettle.")
	reader := env.NewUser("Reader")
	reader.Join(org, store.RoleRead)

	spacesFound := func(u *servertest.User) map[string]int {
		var out struct {
			Items []struct {
				ID    string
				Pages []searchPage
			}
		}
		u.Do("GET", "/v1/orgs/"+org+"/search?query=kettle", nil).Expect(http.StatusOK).Decode(&out)
		found := map[string]int{}
		for _, s := range out.Items {
			found[s.ID] = len(s.Pages)
		}
		return found
	}
	if got := spacesFound(alice); len(got) != 2 || got[docs] != 1 || got[hidden] != 1 {
		t.Errorf("the admin's results: %v", got)
	}
	if got := spacesFound(reader); len(got) != 1 || got[docs] != 1 {
		t.Errorf("the reader's results: %v", got)
	}
	other.Do("GET", "/v1/orgs/"+org+"/search?query=kettle", nil).Expect(http.StatusNotFound)
	reader.Do("GET", "/v1/spaces/"+hidden+"/search?query=kettle", nil).Expect(http.StatusNotFound)
}
