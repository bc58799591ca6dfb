package graph

import (
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"

	"github.com/docsapi/docsapi/graph/generated"
)

// Which operations may read the spaces of site spaces as summaries: only
// those in which no field of type Space, anywhere, selects more.
// Which operations may read the spaces of site spaces as summaries: only
// those in which no field of type Space, anywhere, selects more.
func TestSpaceSummariesSuffice(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &Resolver{}}).Schema()
	const tree = `site(organizationId: "o", id: "s") { structure { structure { ... on SiteSection { siteSpaces { %s } } } } }`
	with := func(spaceSelection string) string {
		return "{ " + strings.ReplaceAll(tree, "%s", "space { "+spaceSelection+" }") + " }"
	}
	for _, tc := range []struct {
		name, query string
		summaries   bool
	}{
		{"no space at all", `{ viewer { id } }`, true},
		{"titles", with("id title"), true},
		{"every summary field", with("__typename object id title emoji visibility organization parent urls { app location published public icon }"), true},
		{"a field outside the summary", with("id createdAt"), false},
		{"permissions", with("title permissions { view }"), false},
		{"inline fragment", with("title ... on Space { revision }"), false},
		{"named fragment", `{ ` + strings.ReplaceAll(tree, "%s", "space { ...S }") + ` } fragment S on Space { title mergeRules { type } }`, false},
		{"named fragment of summary fields", `{ ` + strings.ReplaceAll(tree, "%s", "space { ...S }") + ` } fragment S on Space { id title }`, true},
		{"fragment around the space", `{ ` + strings.ReplaceAll(tree, "%s", "...SS") + ` } fragment SS on SiteSpace { id space { language } }`, false},
		{"another space field of the operation", `{ ` + strings.ReplaceAll(tree, "%s", "space { title }") + ` space(id: "x") { comments } }`, false},
		{"the site's list of site spaces", `{ site(organizationId: "o", id: "s") { siteSpaceList { items { space { updatedAt } } } structure { type } } }`, false},
	} {
		doc, errs := gqlparser.LoadQueryWithRules(schema, tc.query, nil)
		if errs != nil {
			t.Fatalf("%s: %v", tc.name, errs)
		}
		if got := spaceSummary.Suffices(doc.Operations[0].SelectionSet); got != tc.summaries {
			t.Errorf("%s: summaries %v, want %v", tc.name, got, tc.summaries)
		}
	}
}
