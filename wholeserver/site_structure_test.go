package wholeserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// ids returns the "id" members of the items of a list body.
func ids(list map[string]any) []string {
	var out []string
	for _, it := range list["items"].([]any) {
		out = append(out, it.(map[string]any)["id"].(string))
	}
	return out
}

func names(items []any, key string) string {
	var out []string
	for _, it := range items {
		out = append(out, fmt.Sprint(it.(map[string]any)[key]))
	}
	return strings.Join(out, ",")
}

func TestSectionsAndSiteSpaces(t *testing.T) {
	t.Parallel()
	f := newSiteFixture(t, 5)
	alice := f.admin
	site := f.site(map[string]any{"title": "Docs", "spaces": f.spaces[:2]})

	// The first section turns the root site spaces into a default section.
	res := alice.Do("POST", f.path(site, "/sections"), map[string]any{"spaceId": f.spaces[2], "title": "Guides", "icon": "book"}).
		Expect(http.StatusCreated)
	guides := res.JSON()
	if res.Header.Get("Location") != "" && !strings.Contains(res.Header.Get("Location"), "/sites/") {
		t.Errorf("Location = %q", res.Header.Get("Location"))
	}
	if guides["object"] != "site-section" || guides["title"] != "Guides" || guides["path"] != "guides" || guides["default"] != false ||
		guides["icon"] != "book" || names(guides["siteSpaces"].([]any), "path") != "space-2" {
		t.Fatalf("section = %v", guides)
	}
	sections := alice.Do("GET", f.path(site, "/sections"), nil).Expect(http.StatusOK).JSON()
	items := sections["items"].([]any)
	if names(items, "title") != "Docs,Guides" || names(items, "default") != "true,false" ||
		names(items[0].(map[string]any)["siteSpaces"].([]any), "path") != "space-0,space-1" {
		t.Fatalf("sections = %v", sections)
	}
	docs := items[0].(map[string]any)["id"].(string)

	// Site spaces go to the default section unless told otherwise.
	ss := alice.Do("POST", f.path(site, "/site-spaces"), map[string]any{"spaceId": f.spaces[3]}).Expect(http.StatusCreated).JSON()
	if ss["section"] != docs || ss["default"] != false || ss["path"] != "space-3" || ss["title"] != "Space 3" {
		t.Fatalf("site space = %v", ss)
	}
	inGuides := alice.Do("POST", f.path(site, "/site-spaces"), map[string]any{"spaceId": f.spaces[3], "sectionId": guides["id"]}).
		Expect(http.StatusCreated).JSON()
	if inGuides["section"] != guides["id"] {
		t.Fatalf("site space in guides = %v", inGuides)
	}
	for _, body := range []string{`{}`, `{"spaceId":"nope"}`, `{"spaceId":"` + f.spaces[0] + `","sectionId":"nope"}`, `{"spaceId":5}`} {
		alice.Do("POST", f.path(site, "/site-spaces"), body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	list := alice.Do("GET", f.path(site, "/site-spaces"), nil).Expect(http.StatusOK).JSON()
	if names(list["items"].([]any), "path") != "space-0,space-1,space-3,space-2,space-3" {
		t.Fatalf("site spaces = %v", names(list["items"].([]any), "path"))
	}
	def := alice.Do("GET", f.path(site, "/site-spaces?default=true"), nil).Expect(http.StatusOK).JSON()
	if names(def["items"].([]any), "path") != "space-0" {
		t.Errorf("default site spaces = %v", names(def["items"].([]any), "path"))
	}
	if n := alice.Do("GET", f.path(site, "/site-spaces?default=false"), nil).JSON()["count"]; n != 4.0 {
		t.Errorf("non-default site spaces = %v", n)
	}

	// Update a section: every limit, then every field.
	spath := f.path(site, "/sections/", guides["id"].(string))
	before := alice.Do("GET", f.path(site, "/sections"), nil).Body
	for _, tc := range []struct{ body, field string }{
		{`{"title":"G"}`, "title"},
		{`{"title":"` + strings.Repeat("g", 129) + `"}`, "title"},
		{`{"path":""}`, "path"},
		{`{"path":"a b"}`, "path"},
		{`{"path":"` + strings.Repeat("p", 101) + `"}`, "path"},
		{`{"condition":"visitor.claims.x =="}`, "condition"},
		{`{"condition":"` + strings.Repeat("a", 1025) + `"}`, "condition"},
		{`{"condition":"visitor.claims.x = 1"}`, "condition"},
		{`{"icon":"` + strings.Repeat("i", 51) + `"}`, "icon"},
		{`{"description":"` + strings.Repeat("d", 257) + `"}`, "description"},
		{`{"defaultSiteSpace":"` + ss["id"].(string) + `"}`, "defaultSiteSpace"},
		{`{"condition":true}`, "condition"},
	} {
		msg := alice.Do("PATCH", spath, tc.body).Expect(http.StatusBadRequest).ErrorMessage()
		if !strings.Contains(msg, tc.field) {
			t.Errorf("%s: %q does not name %s", tc.body, msg, tc.field)
		}
	}
	alice.Do("PATCH", spath, `{"path":"docs"}`).Expect(http.StatusConflict).ErrorMessage()
	if after := alice.Do("GET", f.path(site, "/sections"), nil).Body; string(after) != string(before) {
		t.Fatal("rejected updates changed the sections")
	}
	up := alice.Do("PATCH", spath, map[string]any{"title": "How-to guides", "path": "how-to", "condition": "visitor.claims.isBetaUser == true",
		"description": "Step by step", "icon": nil, "defaultSiteSpace": inGuides["id"]}).Expect(http.StatusOK).JSON()
	if up["title"] != "How-to guides" || up["path"] != "how-to" || up["condition"] != "visitor.claims.isBetaUser == true" ||
		up["description"] != "Step by step" || up["icon"] != nil || names(up["siteSpaces"].([]any), "default") != "false,true" {
		t.Fatalf("updated section = %v", up)
	}
	kept := alice.Do("PATCH", spath, `{"title":"Guides"}`).Expect(http.StatusOK).JSON()
	if kept["condition"] != "visitor.claims.isBetaUser == true" {
		t.Errorf("an absent condition was not kept: %v", kept["condition"])
	}
	if removed := alice.Do("PATCH", spath, `{"condition":null}`).Expect(http.StatusOK).JSON(); removed["condition"] != nil {
		t.Errorf("a null condition was not removed: %v", removed["condition"])
	}

	// Update a site space.
	sspath := f.path(site, "/site-spaces/", ss["id"].(string))
	for _, body := range []string{`{"path":""}`, `{"path":"` + strings.Repeat("p", 101) + `"}`, `{"condition":"(("}`, `{"spaceId":"nope"}`, `{"spaceId":null}`} {
		alice.Do("PATCH", sspath, body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	alice.Do("PATCH", sspath, `{"path":"space-0"}`).Expect(http.StatusConflict)
	upss := alice.Do("PATCH", sspath, map[string]any{"path": "v2", "condition": "visitor.claims.plan === \"pro\"", "spaceId": f.spaces[4]}).
		Expect(http.StatusOK).JSON()
	if upss["path"] != "v2" || upss["space"].(map[string]any)["id"] != f.spaces[4] || upss["title"] != "Space 4" {
		t.Fatalf("updated site space = %v", upss)
	}

	// The default site space of the site, set on the site.
	site0 := alice.Do("GET", f.path(site, "/site-spaces?default=false"), nil).JSON()["items"].([]any)[0].(map[string]any)
	alice.Do("PATCH", f.path(site), map[string]any{"defaultSiteSpace": inGuides["id"]}).Expect(http.StatusBadRequest) // not in the default section
	alice.Do("PATCH", f.path(site), map[string]any{"defaultSiteSpace": site0["id"]}).Expect(http.StatusOK)
	def = alice.Do("GET", f.path(site, "/site-spaces?default=true"), nil).JSON()
	if ids(def)[0] != site0["id"] {
		t.Errorf("default site space = %v", ids(def))
	}
	alice.Do("PATCH", f.path(site), map[string]any{"defaultSiteSection": guides["id"]}).Expect(http.StatusOK)
	if d := alice.Do("GET", f.path(site, "/sections"), nil).JSON(); names(d["items"].([]any), "default") != "false,true" {
		t.Errorf("default section not moved: %v", names(d["items"].([]any), "default"))
	}

	// Deleting a default section or site space hands the role on.
	alice.Do("DELETE", f.path(site, "/sections/", guides["id"].(string)), nil).Expect(http.StatusNoContent)
	after := alice.Do("GET", f.path(site, "/sections"), nil).JSON()
	if names(after["items"].([]any), "title") != "Docs" || names(after["items"].([]any), "default") != "true" {
		t.Fatalf("after deleting the default section: %v", after)
	}
	alice.Do("GET", f.path(site, "/site-spaces/", inGuides["id"].(string)), nil).Expect(http.StatusMethodNotAllowed) // no GET of one site space
	alice.Do("DELETE", f.path(site, "/sections/", guides["id"].(string)), nil).Expect(http.StatusNoContent)
	alice.Do("DELETE", f.path(site, "/site-spaces/", site0["id"].(string)), nil).Expect(http.StatusNoContent)
	def = alice.Do("GET", f.path(site, "/site-spaces?default=true"), nil).JSON()
	if def["count"] != 1.0 {
		t.Errorf("no default after deleting the default site space: %v", def)
	}
	alice.Do("DELETE", f.path(site, "/site-spaces/nope"), nil).Expect(http.StatusNoContent)
	alice.Do("PATCH", f.path(site, "/site-spaces/nope"), `{"path":"x"}`).Expect(http.StatusNotFound)
	alice.Do("PATCH", f.path(site, "/sections/nope"), `{"title":"xx"}`).Expect(http.StatusNotFound)
	alice.Do("POST", f.path("nope", "/sections"), map[string]any{"spaceId": f.spaces[0]}).Expect(http.StatusNotFound)

	// Site spaces of deleted spaces are hidden until the space is restored.
	alice.Do("DELETE", "/v1/spaces/"+f.spaces[0], nil).Expect(http.StatusNoContent)
	if l := alice.Do("GET", f.path(site, "/site-spaces"), nil).JSON(); strings.Contains(names(l["items"].([]any), "path"), "space-0") {
		t.Errorf("a deleted space's site space is listed: %v", names(l["items"].([]any), "path"))
	}
	if s := alice.Do("GET", f.path(site), nil).JSON(); s["siteSpaces"] != 1.0 {
		t.Errorf("siteSpaces counts a deleted space: %v", s["siteSpaces"])
	}
	alice.Do("POST", "/v1/spaces/"+f.spaces[0]+"/restore", nil).Expect(http.StatusOK)
	if l := alice.Do("GET", f.path(site, "/site-spaces"), nil).JSON(); !strings.Contains(names(l["items"].([]any), "path"), "space-0") {
		t.Errorf("a restored space's site space is missing: %v", names(l["items"].([]any), "path"))
	}
}

func TestSectionGroupsAndMoves(t *testing.T) {
	t.Parallel()
	f := newSiteFixture(t, 4)
	alice := f.admin
	site := f.site(map[string]any{"title": "Docs"})
	var sec []string
	for i := range 4 {
		sec = append(sec, alice.Do("POST", f.path(site, "/sections"), map[string]any{"spaceId": f.spaces[i], "title": fmt.Sprintf("S%d", i)}).
			Expect(http.StatusCreated).String("id"))
	}
	order := func() string {
		var out []string
		for _, it := range alice.Do("GET", f.path(site, "/structure"), nil).Expect(http.StatusOK).JSON()["structure"].([]any) {
			m := it.(map[string]any)
			if m["object"] == "site-section-group" {
				out = append(out, fmt.Sprintf("%v[%s]", m["title"], names(m["children"].([]any), "title")))
			} else {
				out = append(out, fmt.Sprint(m["title"]))
			}
		}
		return strings.Join(out, " ")
	}
	if got := order(); got != "S0 S1 S2 S3" {
		t.Fatalf("order = %s", got)
	}

	res := alice.Do("POST", f.path(site, "/section-groups"), map[string]any{"title": "Group", "icon": "folder", "sections": []string{sec[2], sec[1]}}).
		Expect(http.StatusCreated)
	group := res.JSON()
	gid := group["id"].(string)
	if group["object"] != "site-section-group" || names(group["children"].([]any), "title") != "S2,S1" ||
		names(group["sections"].([]any), "title") != "S2,S1" || group["icon"] != "folder" {
		t.Fatalf("group = %v", group)
	}
	if got := order(); got != "S0 S3 Group[S2,S1]" {
		t.Fatalf("order = %s", got)
	}
	for _, tc := range []struct{ body, field string }{
		{`{}`, "title"}, {`{"title":""}`, "title"}, {`{"title":"` + strings.Repeat("t", 101) + `"}`, "title"},
		{`{"title":"G","icon":"` + strings.Repeat("i", 51) + `"}`, "icon"}, {`{"title":"G","sections":["nope"]}`, "sections[0]"},
		{`{"title":"G","parent":"nope"}`, "parent"},
	} {
		msg := alice.Do("POST", f.path(site, "/section-groups"), tc.body).Expect(http.StatusBadRequest).ErrorMessage()
		if !strings.Contains(msg, tc.field) {
			t.Errorf("%s: %q does not name %s", tc.body, msg, tc.field)
		}
	}

	// Moves, before and after, across containers.
	move := func(id, where, target string) *http.Response {
		t.Helper()
		body := map[string]any{"position": map[string]any{where: map[string]any{"type": "site-section", "siteSection": target}}}
		alice.Do("POST", f.path(site, "/sections/", id, "/move"), body).Expect(http.StatusOK)
		return nil
	}
	move(sec[3], "before", sec[0])
	if got := order(); got != "S3 S0 Group[S2,S1]" {
		t.Fatalf("after moving S3 before S0: %s", got)
	}
	move(sec[0], "after", sec[1]) // into the group
	if got := order(); got != "S3 Group[S2,S1,S0]" {
		t.Fatalf("after moving S0 after S1: %s", got)
	}
	alice.Do("POST", f.path(site, "/sections/", sec[2], "/move"), nil).Expect(http.StatusOK) // to the end of the site
	if got := order(); got != "S3 Group[S1,S0] S2" {
		t.Fatalf("after moving S2 to the end: %s", got)
	}
	for _, body := range []string{
		`{"position":{"before":{"type":"site-section","siteSection":"nope"}}}`,
		`{"position":{"before":{"type":"site-space","siteSection":"` + sec[0] + `"}}}`,
		`{"position":{"before":{"type":"site-section","siteSection":"` + sec[3] + `"},"after":{"type":"site-section","siteSection":"` + sec[0] + `"}}}`,
		`{"position":{"after":{"type":"site-section","siteSection":"` + sec[3] + `"}}}`,
		`{"position":{"before":{}}}`,
	} {
		alice.Do("POST", f.path(site, "/sections/", sec[3], "/move"), body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	alice.Do("POST", f.path(site, "/sections/nope/move"), `{}`).Expect(http.StatusNotFound).ErrorMessage()
	if got := order(); got != "S3 Group[S1,S0] S2" {
		t.Fatalf("rejected moves changed the order: %s", got)
	}

	// Groups move too, relative to sections or groups, and nest at most 3 deep.
	alice.Do("POST", f.path(site, "/section-groups/", gid, "/move"),
		map[string]any{"position": map[string]any{"before": map[string]any{"type": "site-section", "id": sec[3]}}}).Expect(http.StatusOK)
	if got := order(); got != "Group[S1,S0] S3 S2" {
		t.Fatalf("after moving the group first: %s", got)
	}
	inner := alice.Do("POST", f.path(site, "/section-groups"), map[string]any{"title": "Inner", "parent": gid, "sections": []string{sec[3]}}).
		Expect(http.StatusCreated).String("id")
	if got := order(); got != "Group[S1,S0,Inner] S2" {
		t.Fatalf("after nesting: %s", got)
	}
	third := alice.Do("POST", f.path(site, "/section-groups"), map[string]any{"title": "Third", "parent": inner}).Expect(http.StatusCreated).String("id")
	alice.Do("POST", f.path(site, "/section-groups"), map[string]any{"title": "Fourth", "parent": third}).Expect(http.StatusBadRequest).ErrorMessage()
	alice.Do("POST", f.path(site, "/section-groups/", gid, "/move"),
		map[string]any{"position": map[string]any{"after": map[string]any{"type": "site-section", "id": sec[3]}}}).Expect(http.StatusBadRequest)
	alice.Do("DELETE", f.path(site, "/section-groups/", third), nil).Expect(http.StatusNoContent)

	// Adding to and removing from groups.
	res = alice.Do("POST", f.path(site, "/section-groups/", inner, "/sections"), map[string]any{"sectionId": sec[2]}).Expect(http.StatusCreated)
	if names(res.JSON()["children"].([]any), "title") != "S3,S2" {
		t.Fatalf("inner group = %v", res.JSON()["children"])
	}
	alice.Do("POST", f.path(site, "/section-groups/", inner, "/sections"), map[string]any{"sectionId": "nope"}).Expect(http.StatusBadRequest)
	alice.Do("POST", f.path(site, "/section-groups/nope/sections"), map[string]any{"sectionId": sec[2]}).Expect(http.StatusNotFound)
	alice.Do("DELETE", f.path(site, "/section-groups/", gid, "/sections/", sec[1]), nil).Expect(http.StatusNoContent)
	if got := order(); got != "Group[S0,Inner] S1" {
		t.Fatalf("after removing S1 from the group: %s", got)
	}
	alice.Do("DELETE", f.path(site, "/section-groups/", gid, "/sections/", sec[1]), nil).Expect(http.StatusNoContent) // not in it
	alice.Do("DELETE", f.path(site, "/section-groups/nope/sections/", sec[1]), nil).Expect(http.StatusNotFound)

	// Update and delete groups: children take the group's place.
	alice.Do("PATCH", f.path(site, "/section-groups/", gid), `{"title":""}`).Expect(http.StatusBadRequest)
	up := alice.Do("PATCH", f.path(site, "/section-groups/", gid), `{"title":"Renamed","icon":null}`).Expect(http.StatusOK).JSON()
	if up["title"] != "Renamed" || up["icon"] != nil {
		t.Fatalf("updated group = %v", up)
	}
	alice.Do("PATCH", f.path(site, "/section-groups/nope"), `{"title":"x"}`).Expect(http.StatusNotFound)
	alice.Do("DELETE", f.path(site, "/section-groups/", gid), nil).Expect(http.StatusNoContent)
	if got := order(); got != "S0 Inner[S3,S2] S1" {
		t.Fatalf("after deleting the outer group: %s", got)
	}
	alice.Do("DELETE", f.path(site, "/section-groups/", gid), nil).Expect(http.StatusNoContent)
	groups := alice.Do("GET", f.path(site, "/section-groups"), nil).Expect(http.StatusOK).JSON()
	if names(groups["items"].([]any), "title") != "Inner" || groups["items"].([]any)[0].(map[string]any)["sectionGroup"] != nil {
		t.Fatalf("groups = %v", groups)
	}

	// sortSiteStructure moves any kind of item.
	sorted := alice.Do("PATCH", f.path(site, "/structure/sort"), map[string]any{
		"item": map[string]any{"type": "site-section", "id": sec[1]}, "position": map[string]any{"before": map[string]any{"type": "site-section-group", "id": inner}},
	}).Expect(http.StatusOK).JSON()
	if sorted["object"] != "site-section" || sorted["id"] != sec[1] {
		t.Fatalf("sorted = %v", sorted)
	}
	if got := order(); got != "S0 S1 Inner[S3,S2]" {
		t.Fatalf("after sort: %s", got)
	}
	alice.Do("PATCH", f.path(site, "/structure/sort"), map[string]any{"item": map[string]any{"type": "page", "id": sec[1]}}).Expect(http.StatusBadRequest)
	alice.Do("PATCH", f.path(site, "/structure/sort"), map[string]any{"item": map[string]any{"type": "site-section", "id": "nope"}}).Expect(http.StatusNotFound)
}

func TestMoveSiteSpaces(t *testing.T) {
	t.Parallel()
	f := newSiteFixture(t, 4)
	alice := f.admin
	site := f.site(map[string]any{"title": "Docs", "spaces": f.spaces[:3]})
	list := func() string {
		return names(alice.Do("GET", f.path(site, "/site-spaces"), nil).Expect(http.StatusOK).JSON()["items"].([]any), "path")
	}
	all := ids(alice.Do("GET", f.path(site, "/site-spaces"), nil).JSON())
	move := func(id, where, target string) {
		t.Helper()
		alice.Do("POST", f.path(site, "/site-spaces/", id, "/move"),
			map[string]any{"position": map[string]any{where: map[string]any{"type": "site-space", "siteSpace": target}}}).Expect(http.StatusOK)
	}
	move(all[2], "before", all[0])
	if got := list(); got != "space-2,space-0,space-1" {
		t.Fatalf("order = %s", got)
	}
	move(all[2], "after", all[1])
	if got := list(); got != "space-0,space-1,space-2" {
		t.Fatalf("order = %s", got)
	}
	// Into another section, by moving next to one of its site spaces.
	other := alice.Do("POST", f.path(site, "/sections"), map[string]any{"spaceId": f.spaces[3], "title": "Other"}).Expect(http.StatusCreated).JSON()
	otherSS := other["siteSpaces"].([]any)[0].(map[string]any)["id"].(string)
	move(all[0], "before", otherSS)
	sections := alice.Do("GET", f.path(site, "/sections"), nil).JSON()["items"].([]any)
	if names(sections[0].(map[string]any)["siteSpaces"].([]any), "path") != "space-1,space-2" ||
		names(sections[1].(map[string]any)["siteSpaces"].([]any), "path") != "space-0,space-3" ||
		names(sections[0].(map[string]any)["siteSpaces"].([]any), "default") != "true,false" {
		t.Fatalf("sections after the move: %v", sections)
	}
	alice.Do("POST", f.path(site, "/site-spaces/", all[1], "/move"), nil).Expect(http.StatusOK)
	for _, body := range []string{
		`{"position":{"before":{"type":"site-space","siteSpace":"nope"}}}`,
		`{"position":{"before":{"type":"site-section","siteSpace":"` + all[2] + `"}}}`,
		`{"position":{"after":{"type":"site-space","siteSpace":"` + all[1] + `"}}}`,
	} {
		alice.Do("POST", f.path(site, "/site-spaces/", all[1], "/move"), body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	alice.Do("POST", f.path(site, "/site-spaces/nope/move"), `{}`).Expect(http.StatusNotFound)
}

func TestStructureListPagination(t *testing.T) {
	t.Parallel()
	f := newSiteFixture(t, 7)
	alice := f.admin
	site := f.site(map[string]any{"title": "Docs"})
	for i, sp := range f.spaces {
		alice.Do("POST", f.path(site, "/sections"), map[string]any{"spaceId": sp, "title": fmt.Sprintf("Section %d", i)}).Expect(http.StatusCreated)
	}
	for _, kind := range []string{"/sections", "/site-spaces"} {
		var got []string
		page := ""
		for range 10 {
			res := alice.Do("GET", f.path(site, kind+"?limit=3"+page), nil).Expect(http.StatusOK).JSON()
			got = append(got, ids(res)...)
			next, ok := res["next"].(map[string]any)
			if !ok {
				break
			}
			page = "&page=" + next["page"].(string)
		}
		whole := ids(alice.Do("GET", f.path(site, kind), nil).JSON())
		if strings.Join(got, ",") != strings.Join(whole, ",") || len(whole) != 7 {
			t.Errorf("%s: pages %v, whole %v", kind, got, whole)
		}
	}
	alice.Do("GET", f.path(site, "/sections?limit=1001"), nil).Expect(http.StatusBadRequest)
}

// The reference's title of a new section is nullable: null, as absent,
// takes the space's title.
func TestSectionWithNullTitle(t *testing.T) {
	t.Parallel()
	f := newSiteFixture(t, 2)
	site := f.site(map[string]any{"title": "Docs", "spaces": f.spaces[:1]})
	section := f.admin.Do("POST", f.path(site, "/sections"), map[string]any{"spaceId": f.spaces[1], "title": nil}).Expect(http.StatusCreated).JSON()
	if section["title"] != "Space 1" {
		t.Fatalf("a section with a null title: %v", section)
	}
}
