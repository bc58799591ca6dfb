package wholeserver_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/rest"
	"github.com/docsapi/docsapi/store"
)

// TestAuthorizationWalk reads everything the GraphQL schema offers, as an
// attacker would: from every field of Query, it walks every object,
// interface and union field walkDepth levels deep, with arguments naming the
// private objects of another user, and looks for their text in the answers.
//
// An owner fills an organization with objects, each holding a marker of its
// own in every text it can hold. Markers are of three classes:
//
//   - secret: in what the organization's readers may not see, the content of
//     a space and of a collection whose default level is null (title,
//     pages, files, change requests, comments, replies, reviews) and the
//     admin-only SAML provider;
//   - internal: in what every reader of the organization sees (the
//     organization's settings, sites, their sections and groups, teams,
//     translations, OpenAPI specifications, conversations, its private
//     integration and its installation, agent instructions), which no other
//     tenant may;
//   - readable: internal, in a space every member reads, which the reader's
//     walk must find (so that it cannot pass by reaching nothing).
//
// The walk runs as the owner, who must find every marker, as a member with
// the read role, who must find no secret marker, and as the admin of another
// organization, who must find no marker at all. A marker counts wherever it
// is in a response, errors included; a leak is reported with the path from
// the root to the field that showed it.
//
// The walk is a breadth-first search guided by the answers. Its schema comes
// from introspection. A path is a chain of fields from the root; its end
// selects __typename and every scalar and enum field (under "... on T" for
// each type an interface or union may be). Each field takes the arguments
// it requires, from the fixture by field or by name (a field without one
// fails the test), and limit: 5; no other. A path is followed further only
// when its end was not null, never takes the same field of the same type
// twice, and stops at walkDepth fields. A level's paths are queried as the
// paths they extend, each with its extensions aliased below it (many to a
// request); one whose answer has an error that may have nulled more than
// its own field is queried again path by path, and a path whose end a
// failing leaf nulled, leaf by leaf.
func TestAuthorizationWalk(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	f := newWalkFixture(t, env)
	schema := introspectSchema(t, env)

	walks := []struct {
		name  string
		user  *servertest.User
		leaks func(walkMarker) bool
		floor int // fields the walk must at least visit
	}{
		{"owner", f.owner, nil, walkFloorOwner},
		{"reader", f.reader, func(m walkMarker) bool { return m.secret }, walkFloorReader},
		{"other-tenant", f.outsider, func(walkMarker) bool { return true }, walkFloorOutsider},
	}
	for _, wk := range walks {
		t.Run("graphql/"+wk.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			w := newWalker(t, env, wk.user, schema, f)
			w.walk()
			t.Logf("%s: %d fields (Type.field) visited of the %d reachable from Query; %d paths of at most %d fields queried (%d times in all, in %d requests), %d of them not null; %s",
				wk.name, len(w.visited), len(schema.reachable), w.paths, walkDepth, w.queries, w.requests, w.live, time.Since(start).Round(time.Millisecond))
			if len(w.visited) < wk.floor {
				t.Errorf("the walk visited %d fields, fewer than the floor of %d: is the generator broken?", len(w.visited), wk.floor)
			}
			if wk.leaks == nil {
				w.checkTotals()
				// The owner reaches every marker: the walk sees what it must.
				var missing []string
				for _, m := range f.markers {
					paths := uniqueHits(w.found[m.kind])
					if len(paths) == 0 {
						missing = append(missing, m.kind)
						continue
					}
					var eg []string
					for _, h := range paths {
						eg = append(eg, h.String())
					}
					slices.SortStableFunc(eg, func(a, b string) int { return len(a) - len(b) })
					eg = firstN(eg, 3)
					t.Logf("marker %-25s (%s) found by %4d paths, e.g. %s", m.kind, m.class(), len(paths), strings.Join(eg, ", "))
				}
				if len(missing) > 0 {
					t.Errorf("the owner's walk found no marker of %v: the walk does not reach everything", missing)
				}
				var unvisited []string
				for field := range schema.reachable {
					if !w.visited[field] {
						unvisited = append(unvisited, field)
					}
				}
				sort.Strings(unvisited)
				t.Logf("fields reachable from Query that the owner's walk never selected (their parents are always null or empty in the fixture, or deeper than the walk): %d: %s",
					len(unvisited), strings.Join(unvisited, " "))
				return
			}
			reportLeaks(t, wk.name, f, w.found, wk.leaks)
			w.checkTotals()
			if wk.user == f.reader {
				// The reader's walk reaches what the reader may read.
				var seen []string
				for _, m := range f.markers {
					if !m.secret && len(w.found[m.kind]) > 0 {
						seen = append(seen, m.kind)
					}
					if m.readable && len(w.found[m.kind]) == 0 {
						t.Errorf("the reader's walk found no %s marker, in content every member reads: the walk does not reach it", m.kind)
					}
				}
				t.Logf("the reader sees the markers %v", seen)
			}
		})
	}

	// A visitor of the published site, who holds no token: it reads what
	// the site publishes (its structure, the live content of the spaces it
	// shows) and nothing else, whatever the walk asks of it from the roots
	// a visitor may ask (graph/visitor.go).
	// visitorWalk walks as a visitor (who names it) and checks that it
	// found what the site publishes, and nothing else.
	visitorWalk := func(t *testing.T, who string, w *walker) {
		w.walk()
		t.Logf("%s: %d fields (Type.field) visited of the %d reachable from Query; %d paths queried, %d of them not null",
			who, len(w.visited), len(schema.reachable), w.paths, w.live)
		if len(w.visited) < walkFloorVisitor {
			t.Errorf("the walk visited %d fields, fewer than the floor of %d: is the generator broken?", len(w.visited), walkFloorVisitor)
		}
		reportLeaks(t, who, f, w.found, func(m walkMarker) bool { return !visitorReads[m.kind] })
		for kind := range visitorReads {
			if len(w.found[kind]) == 0 {
				t.Errorf("the walk of %s found no %s marker, in what the site publishes: the walk does not reach it", who, kind)
			}
		}
	}
	t.Run("graphql/visitor", func(t *testing.T) {
		t.Parallel()
		w := newWalker(t, env, nil, schema, f)
		w.send = visitorSender(env, f.org, f.ids["siteId"])
		visitorWalk(t, "a visitor", w)
	})

	// The same visitor with the visitor API token URL resolution hands a
	// custom front end, over HTTP: /graphql from every root, as a caller
	// of its own (it asks the roots a visitor may; the others are refused
	// it), finds the published site and nothing else; and the REST walk
	// below.
	tokenVisitor := &servertest.User{Env: env, Token: resolvedToken(t, f.owner, f.ids["publishedURL"])}
	t.Run("graphql/visitor-token", func(t *testing.T) {
		t.Parallel()
		visitorWalk(t, "a visitor API token", newWalker(t, env, tokenVisitor, schema, f))
	})

	// The REST surface, over the same resolvers: every GET route of the
	// table, with the ids of the private objects.
	for _, rc := range []struct {
		name  string
		user  *servertest.User
		leaks func(walkMarker) bool
	}{
		{"reader", f.reader, func(m walkMarker) bool { return m.secret }},
		{"other-tenant", f.outsider, func(walkMarker) bool { return true }},
		{"visitor-token", tokenVisitor, func(m walkMarker) bool { return !visitorReads[m.kind] }},
	} {
		t.Run("rest/"+rc.name, func(t *testing.T) {
			t.Parallel()
			found := map[string][]walkHit{}
			routes := 0
			for _, route := range rest.Routes {
				if route.Method != "GET" {
					continue
				}
				for _, ids := range f.restIDs(route) {
					path := strings.ReplaceAll(route.Path, "...}", "}")
					for name, id := range ids {
						path = strings.ReplaceAll(path, "{"+name+"}", id)
					}
					if q, ok := walkSearches[route.Operation]; ok {
						path += q
					} else {
						path += f.queryOf(route, ids)
					}
					if strings.Contains(path, "{") {
						t.Fatalf("no id for a parameter of %s", route.Path)
					}
					routes++
					res := rc.user.Do("GET", path, nil)
					if err := countIsItems(res.Body); err != nil {
						t.Errorf("GET %s: %v", path, err)
					}
					for _, m := range f.markers {
						if containsFold(res.Body, m.text) {
							found[m.kind] = append(found[m.kind], walkHit{node: fmt.Sprintf("GET %s (%s, %d)", route.Path, route.Operation, res.Status), edge: route.Operation})
						}
					}
				}
			}
			t.Logf("%d GET requests of %d routes", routes, len(rest.Routes))
			reportLeaks(t, "REST "+rc.name, f, found, rc.leaks)
		})
	}

	// A member's spaces, as a reader sees them, are those the reader may see.
	t.Run("rest/member-spaces", func(t *testing.T) {
		t.Parallel()
		res := f.reader.Do("GET", "/v1/orgs/"+f.org+"/members/"+f.owner.ID+"/spaces", nil).Expect(http.StatusOK)
		for _, s := range []struct{ name, id string }{{"private space", f.space}, {"space of the private collection", f.collSpace}} {
			if bytes.Contains(res.Body, []byte(s.id)) {
				t.Errorf("a reader lists the admin's %s (%s) in GET /v1/orgs/{organizationId}/members/{userId}/spaces: %.300s", s.name, s.id, res.Body)
			}
		}
	})
}

// How deep the walk goes, in fields from the root (a list's items count as
// one): 8 reaches a reply's body from organization.member. And the least
// number of fields (Type.field) each walk must visit: the owner's visits
// all 864 of today's schema, the reader's some 790, the other tenant's 550.
const (
	walkDepth         = 8
	walkFloorOwner    = 800
	walkFloorReader   = 500
	walkFloorOutsider = 300
	walkFloorVisitor  = 60
	// walkWorkers is how many requests each walk has in flight.
	walkWorkers = 3
	// walkTokens bounds a request's document (the server takes 10,000
	// tokens); walkAliases the paths in one request.
	walkTokens  = 8000
	walkAliases = 250
)

// walkSearches are the query strings of searches, for a word of the
// private page.
var walkSearches = map[string]string{
	"searchSpaceContent":        "?query=Zanzibar",
	"searchOrganizationContent": "?query=Zanzibar",
}

func firstN[T any](s []T, n int) []T {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// walkHit is where a marker was seen: at the end of the path node, in
// the field (or member of a JSON value) leaf.
type walkHit struct {
	node, leaf string
	// edge is the last field of node (Type.field), or the REST operation.
	edge string
}

func (h walkHit) String() string {
	if h.leaf == "" {
		return h.node
	}
	return h.node + "." + h.leaf
}

// reportLeaks fails the test for each marker in found that leaks says must
// not be seen, with the paths it was seen by; then it names the entry points
// of the leaks: the leaking paths none of whose prefixes leaks.
func reportLeaks(t *testing.T, who string, f *walkFixture, found map[string][]walkHit, leaks func(walkMarker) bool) {
	t.Helper()
	n := 0
	kindsAt := map[string][]string{} // path → the markers seen at its end
	edgeOf := map[string]string{}
	for _, m := range f.markers {
		hits := found[m.kind]
		if !leaks(m) || len(hits) == 0 {
			continue
		}
		var paths []string
		for _, h := range uniqueHits(hits) {
			paths = append(paths, h.String())
			edgeOf[h.node] = h.edge
			if !slices.Contains(kindsAt[h.node], m.kind) {
				kindsAt[h.node] = append(kindsAt[h.node], m.kind)
			}
		}
		n += len(paths)
		t.Errorf("%s sees the %s marker (%s) by %d paths:\n\t%s", who, m.kind, m.class(), len(paths), strings.Join(paths, "\n\t"))
	}
	if n == 0 {
		return
	}
	var entries []string
	byEdge := map[string]int{}
	for node, kinds := range kindsAt {
		entry := true
		for i := range len(node) {
			if node[i] == '.' && kindsAt[node[:i]] != nil {
				entry = false
				break
			}
		}
		if entry {
			entries = append(entries, node+" → "+strings.Join(kinds, ", "))
			byEdge[edgeOf[node]]++
		}
	}
	sort.Strings(entries)
	var edges []string
	for e, k := range byEdge {
		edges = append(edges, fmt.Sprintf("%s (%d)", e, k))
	}
	sort.Strings(edges)
	t.Errorf("%s: %d leaking paths in all, from %d entry points (leaking paths with no leaking prefix, and what their end shows):\n\t%s\nthe entry points end with: %s",
		who, n, len(entries), strings.Join(entries, "\n\t"), strings.Join(edges, ", "))
}

// uniqueHits sorts hits and drops repeats (a path queried again is seen
// again).
func uniqueHits(hits []walkHit) []walkHit {
	out := slices.Clone(hits)
	slices.SortFunc(out, func(a, b walkHit) int { return strings.Compare(a.String(), b.String()) })
	return slices.Compact(out)
}

func containsFold(body []byte, s string) bool {
	return bytes.Contains(bytes.ToLower(body), []byte(strings.ToLower(s)))
}

// walkMarker is a unique text put in one kind of private text.
type walkMarker struct {
	kind, text string
	// secret: hidden from the organization's readers too.
	secret bool
	// readable: in content every reader of the organization reads, which
	// the reader's walk must find.
	readable bool
}

func (m walkMarker) class() string {
	switch {
	case m.secret:
		return "secret"
	case m.readable:
		return "readable"
	}
	return "internal"
}

// walkFixture is an organization of an owner, full of private objects, a
// reader of it and the admin of another organization.
type walkFixture struct {
	owner, reader, outsider *servertest.User
	org, space, collSpace   string
	markers                 []walkMarker
	// ids are the path parameters of REST routes; queries the query
	// strings of those that need one of the fixture's (a redirect's source).
	ids     map[string]string
	queries map[string]string
	// args are the values of GraphQL arguments, by "Type.field.argument"
	// or, failing that, by argument name; each value is a GraphQL literal
	// with a label that names it in paths.
	args map[string][]walkArg
}

type walkArg struct{ label, literal string }

func newWalkFixture(t *testing.T, env *servertest.Env) *walkFixture {
	t.Helper()
	var random [5]byte
	if _, err := rand.Read(random[:]); err != nil {
		t.Fatal(err)
	}
	token := strings.ToUpper(hex.EncodeToString(random[:]))
	f := &walkFixture{}
	// Markers are letters and digits only, so that slugs and escapes keep
	// them whole; they are matched regardless of case.
	mark := func(kind string, secret, readable bool) string {
		text := "MRK" + token + "Q" + strings.ToUpper(kind)
		f.markers = append(f.markers, walkMarker{kind: kind, text: text, secret: secret, readable: readable})
		return text
	}
	secret := func(kind string) string { return mark(kind, true, false) }
	internal := func(kind string) string { return mark(kind, false, false) }
	readable := func(kind string) string { return mark(kind, false, true) }

	owner, reader, outsider := env.NewUser("Owner"), env.NewUser("Reader"), env.NewUser("Outsider")
	f.owner, f.reader, f.outsider = owner, reader, outsider
	org := owner.NewOrg("Walk Inc")
	f.org = org
	reader.Join(org, store.RoleRead)
	// The other tenant has content of its own, for its walk to go through.
	outsiderOrg := outsider.NewOrg("Outsider Corp")
	outsiderSpace := outsider.Do("POST", "/v1/orgs/"+outsiderOrg+"/spaces", `{"title":"Own"}`).Expect(http.StatusCreated).String("id")
	createPage(t, outsider, outsiderSpace, "Own page", "Nothing secret.")
	do := func(method, path string, body any, status int) *servertest.Response {
		t.Helper()
		return owner.Do(method, path, body).Expect(status)
	}
	do("PATCH", "/v1/orgs/"+org, map[string]any{"hostname": strings.ToLower(internal("orgHostname")),
		"emailDomains": []string{strings.ToLower(internal("orgEmailDomain")) + ".example"}}, http.StatusOK)

	// A space every member reads, with content the reader's walk must find.
	public := do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": readable("publicSpaceTitle")}, http.StatusCreated).String("id")
	publicPage, _, _ := createPage(t, owner, public, "Welcome", "Hello: "+readable("publicPageMarkdown"))
	publicCR := openChangeRequest(t, owner, public, readable("publicCRSubject"), publicPage)
	publicComment := do("POST", "/v1/spaces/"+public+"/comments", map[string]any{"body": map[string]any{"markdown": readable("publicComment")}},
		http.StatusOK).String("id")

	// A private space, and a private collection holding a space. Their
	// titles are set once the site has them: a site space's path is made
	// from its space's title.
	space := do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Plans"}`, http.StatusCreated).String("id")
	collection := do("POST", "/v1/orgs/"+org+"/collections", `{"title":"Vault"}`, http.StatusCreated).String("id")
	collSpace := do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": "Inner", "parent": collection}, http.StatusCreated).String("id")
	f.space, f.collSpace = space, collSpace

	// A site publishing both, in a section of a group.
	sitePath := "/v1/orgs/" + org + "/sites/"
	site := do("POST", "/v1/orgs/"+org+"/sites", map[string]any{"title": internal("siteTitle"), "spaces": []string{space}}, http.StatusCreated).String("id")
	sitePath += site
	section := do("POST", sitePath+"/sections", map[string]any{"spaceId": collSpace, "title": internal("sectionTitle")}, http.StatusCreated)
	sectionID := section.String("id")
	siteSpaceID := section.JSON()["siteSpaces"].([]any)[0].(map[string]any)["id"].(string)
	do("PATCH", sitePath+"/sections/"+sectionID, map[string]any{"description": internal("sectionDescription")}, http.StatusOK)
	group := do("POST", sitePath+"/section-groups", map[string]any{"title": internal("groupTitle"), "sections": []string{sectionID}}, http.StatusCreated).String("id")
	do("PUT", sitePath+"/adaptive-schema", map[string]any{"jsonSchema": map[string]any{"type": "object", "additionalProperties": false,
		"properties": map[string]any{"beta": map[string]any{"type": "boolean", "description": internal("adaptiveSchema")}}}}, http.StatusOK)
	do("POST", sitePath+"/publish", nil, http.StatusOK)
	// The site's customization, which its visitors see (the published
	// profile), and the overrides of the private collection's site space,
	// which only those who read the space see there; both are the admins'
	// to read whole (Site.customization, SiteSpace.customization).
	do("PUT", sitePath+"/customization", strings.Replace(siteCustomizationBody, `"copyright": "© Acme"`,
		`"copyright": "`+internal("siteCustomization")+`"`, 1), http.StatusOK)
	do("PATCH", sitePath+"/site-spaces/"+siteSpaceID+"/customization",
		map[string]any{"footer": map[string]any{"copyright": secret("siteSpaceCustomization")}}, http.StatusOK)
	// What opens the site to the public, which only those who manage it
	// read (Site.shareKey, Site.shareLinks, Site.publishingAuth): a share
	// link's name and the fallback URL of visitor authentication, and the
	// keys the server made (the site's own, the link's, the private key),
	// secret to the organization's readers.
	link := do("POST", sitePath+"/share-links", map[string]any{"name": secret("shareLinkName")}, http.StatusCreated)
	do("PATCH", sitePath+"/publishing/auth", map[string]any{"backend": "custom",
		"fallbackURL": "https://" + strings.ToLower(secret("fallbackURL")) + ".example/login"}, http.StatusOK)
	madeSecret := func(kind, text string) {
		f.markers = append(f.markers, walkMarker{kind: kind, text: text, secret: true})
	}
	_, linkKey, _ := strings.Cut(link.JSON()["urls"].(map[string]any)["published"].(string), "?share=")
	madeSecret("shareLinkKey", linkKey)
	madeSecret("privateKey", do("GET", sitePath+"/publishing/auth", nil, http.StatusOK).String("privateKey"))
	var shareKey struct{ Site struct{ ShareKey string } }
	if err := json.Unmarshal(owner.GraphQL(`query($o: ID!, $s: ID!) { site(organizationId: $o, id: $s) { shareKey } }`,
		map[string]any{"o": org, "s": site}).Data, &shareKey); err != nil || shareKey.Site.ShareKey == "" {
		t.Fatalf("the site's share key: %v", err)
	}
	madeSecret("siteShareKey", shareKey.Site.ShareKey)
	// A redirect of the site, which only those who manage it read, and the
	// site's visitors by its source (Site.redirect).
	redirectSource := "/" + secret("redirectSource")
	redirect := do("POST", sitePath+"/redirects", map[string]any{"source": redirectSource,
		"destination": map[string]any{"kind": "url", "url": "https://" + strings.ToLower(secret("redirectURL")) + ".example/new"}},
		http.StatusCreated).String("id")

	do("PATCH", "/v1/spaces/"+space, map[string]any{"title": secret("spaceTitle"), "defaultLevel": nil}, http.StatusOK)
	do("PATCH", "/v1/collections/"+collection, map[string]any{"title": secret("collectionTitle"), "description": secret("collectionDescription"),
		"defaultLevel": nil}, http.StatusOK)
	do("PATCH", "/v1/spaces/"+collSpace, map[string]any{"title": secret("collectionSpaceTitle")}, http.StatusOK)

	// The private space's content: a file, a page, a change request,
	// comments and replies on both, a review.
	fileName := secret("fileName") + ".txt"
	file := uploadedFile(t, owner, space, "", fileName, []byte("private"))
	createPage(t, owner, space, "Appendix", "Nothing to see.")
	// A page whose slug changed: its old path, a redirect to it
	// (Space.pageRedirect), is the space's readers' and its visitors'.
	movedPath := "moved-" + strings.ToLower(secret("movedPagePath"))
	var moved struct{ CreatePage struct{ ID string } }
	if err := json.Unmarshal(owner.GraphQL(createPageDocument, map[string]any{"s": space,
		"in": map[string]any{"title": "Roadmap", "slug": movedPath, "markdown": "Later."}}).Data, &moved); err != nil || moved.CreatePage.ID == "" {
		t.Fatalf("the moved page: %v", err)
	}
	if out := owner.GraphQL(`mutation($s: ID!, $p: ID!) { updatePage(spaceId: $s, pageId: $p, input: {slug: "roadmap"}) { id } }`,
		map[string]any{"s": space, "p": moved.CreatePage.ID}); len(out.Errors) > 0 {
		t.Fatalf("moving the page: %+v", out.Errors)
	}
	// The page links to the other page and to the file, for backlinks.
	page, pagePath, revision := createPage(t, owner, space, secret("pageTitle"),
		"Zanzibar plans: "+secret("pageMarkdown")+". See [the appendix](appendix.md) and [the file](.gitbook/assets/"+fileName+").")
	cr := openChangeRequest(t, owner, space, secret("crSubject"), page)
	do("PATCH", "/v1/spaces/"+space+"/change-requests/"+cr, map[string]any{"description": paragraph(secret("crDescription"))}, http.StatusOK)
	thread := func(base, comment, reply string) (string, string) {
		c := do("POST", base+"/comments", map[string]any{"body": map[string]any{"markdown": secret(comment)}}, http.StatusOK).String("id")
		r := do("POST", base+"/comments/"+c+"/replies", map[string]any{"body": map[string]any{"markdown": secret(reply)}}, http.StatusOK).String("id")
		return c, r
	}
	comment, reply := thread("/v1/spaces/"+space, "spaceComment", "spaceReply")
	crBase := "/v1/spaces/" + space + "/change-requests/" + cr
	crComment, crReply := thread(crBase, "crComment", "crReply")
	do("PUT", "/v1/spaces/"+space+"/comments/"+comment, `{"addedReactions":["+1"]}`, http.StatusOK)
	do("PUT", crBase+"/comments/"+crComment, `{"addedReactions":["+1"]}`, http.StatusOK)
	review := do("POST", crBase+"/reviews", map[string]any{"status": "approved", "comment": paragraph(secret("reviewComment"))}, http.StatusCreated).String("id")
	do("POST", crBase+"/requested-reviewers", map[string]any{"users": []string{owner.ID}}, http.StatusOK)

	// Organization-wide objects.
	team := do("PUT", "/v1/orgs/"+org+"/teams", map[string]any{"title": internal("teamTitle")}, http.StatusCreated).String("id")
	do("POST", "/v1/spaces/"+space+"/permissions", `{"role":"read","teams":["`+team+`"]}`, http.StatusNoContent)
	do("POST", "/v1/collections/"+collection+"/permissions", `{"role":"edit","teams":["`+team+`"]}`, http.StatusNoContent)
	do("PUT", "/v1/orgs/"+org+"/agent-instructions", map[string]any{"instructions": paragraph(internal("agentInstructions"))}, http.StatusOK)
	do("PATCH", "/v1/orgs/"+org, `{"inviteLinks":true}`, http.StatusOK)
	invite := do("POST", "/v1/orgs/"+org+"/link-invites", `{"role":"read"}`, http.StatusCreated).String("id")
	do("PATCH", "/v1/orgs/"+org, `{"inviteLinks":false}`, http.StatusOK)
	translation := do("POST", "/v1/orgs/"+org+"/translations", map[string]any{"source": map[string]any{"space": space, "language": "en"},
		"language": "fr", "instructions": paragraph(internal("translationInstructions"))}, http.StatusCreated).String("id")
	samlProvider := do("POST", "/v1/orgs/"+org+"/saml", map[string]any{"label": secret("samlLabel"), "ssoURL": "https://idp.example/sso"},
		http.StatusCreated).String("id")
	specSrc := newSpecSource(t)
	specPath := "/" + internal("specSourceURL") + "/openapi.json"
	specSrc.set(specPath, strings.Replace(petstore30, `"title": "Petstore"`, `"title": "`+internal("specContent")+`"`, 1))
	specSlug, specVersion := processedSpec(t, env, owner, org, specSrc.URL+specPath)

	// A conversation, and the issue found in it.
	conv := conversation("walk-conv", internal("conversationSubject"), "I cannot log in: "+internal("conversationMessage")+" is rejected.", env.Clock.Now())
	do("POST", "/v1/orgs/"+org+"/conversations", conv, http.StatusNoContent)
	if err := env.Server.Resolver.ProcessConversations(context.Background(), org); err != nil {
		t.Fatal(err)
	}
	issues := do("GET", "/v1/orgs/"+org+"/conversations-issues", nil, http.StatusOK).JSON()["items"].([]any)
	if len(issues) != 1 {
		t.Fatalf("fixture issues: %v", issues)
	}
	issueObj := issues[0].(map[string]any)["issue"].(map[string]any)
	issue, cluster := issueObj["id"].(string), issueObj["cluster"].(string)

	// A private integration of the organization, installed on it, on the
	// private space and on the site; and a public one, whose owner is the
	// organization, for everyone to find.
	privateInt, publicInt := "walk-private", "walk-public"
	do("POST", "/v1/integrations/"+privateInt, publishBody(org, map[string]any{"visibility": "private", "title": internal("integrationTitle"),
		"description": internal("integrationDescription"), "secrets": map[string]string{"K": "v"}}), http.StatusOK)
	intBase := "/v1/integrations/" + privateInt
	inst := do("POST", intBase+"/installations", `{"organization":"`+org+`"}`, http.StatusCreated).String("id")
	do("PATCH", intBase+"/installations/"+inst, map[string]any{"configuration": map[string]any{"channel": internal("installationConfiguration")}}, http.StatusOK)
	do("POST", intBase+"/installations/"+inst+"/spaces", `{"space":"`+space+`"}`, http.StatusCreated)
	do("POST", intBase+"/installations/"+inst+"/sites", `{"site":"`+site+`"}`, http.StatusCreated)
	event := do("GET", intBase+"/events", nil, http.StatusOK).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)
	do("POST", "/v1/integrations/"+publicInt, publishBody(org, map[string]any{"visibility": "public",
		"blocks":         []any{map[string]any{"id": "msg", "title": "Message", "markdown": map[string]any{"codeblock": "msg", "body": "Hello"}}},
		"contentSources": []any{map[string]any{"id": "src", "title": "Source", "configuration": map[string]any{"componentId": "cfg"}}}}), http.StatusOK)
	pubBase := "/v1/integrations/" + publicInt
	pubInst := do("POST", pubBase+"/installations", `{"organization":"`+org+`"}`, http.StatusCreated).String("id")
	do("POST", pubBase+"/installations/"+pubInst+"/spaces", `{"space":"`+space+`"}`, http.StatusCreated)
	pubEvent := do("GET", pubBase+"/events", nil, http.StatusOK).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)

	// The fixture is what it claims: the reader cannot read the private
	// content directly.
	for _, p := range []string{"/v1/spaces/" + space, "/v1/spaces/" + collSpace, "/v1/collections/" + collection} {
		reader.Do("GET", p, nil).Expect(http.StatusNotFound)
	}

	f.ids = map[string]string{
		"organizationId": org, "spaceId": space, "siteId": site, "siteSectionId": sectionID,
		"siteSectionGroupId": group, "siteSpaceId": siteSpaceID, "userId": owner.ID, "teamId": team, "inviteId": invite, "collectionId": collection,
		"emailDomain": "example.com", "pageId": page, "pagePath": pagePath, "revisionId": revision, "changeRequestId": cr, "fileId": file,
		"commentId": comment, "commentReplyId": reply, "crCommentId": crComment, "crCommentReplyId": crReply,
		"specSlug": specSlug, "versionId": specVersion, "translationId": translation, "samlProviderId": samlProvider,
		"reviewId": review, "integrationName": privateInt, "installationId": inst, "eventId": event,
		"conversationId": "walk-conv", "issueId": issue, "clusterId": cluster, "shareLinkId": link.String("id"),
		"siteRedirectId": redirect,
		"publishedURL":   publishedURLOf(t, owner, org, site),
	}
	f.queries = map[string]string{"getSiteRedirectBySource": "?source=" + redirectSource}
	one := func(label, value string) []walkArg {
		lit, _ := json.Marshal(value)
		return []walkArg{{label, string(lit)}}
	}
	two := func(l1, v1, l2, v2 string) []walkArg { return append(one(l1, v1), one(l2, v2)...) }
	three := func(l1, v1, l2, v2, l3, v3 string) []walkArg { return append(two(l1, v1, l2, v2), one(l3, v3)...) }
	f.args = map[string][]walkArg{
		// By argument name.
		"organizationId": one("org", org), "spaceId": one("space", space), "siteId": one("site", site), "userId": one("owner", owner.ID),
		"teamId": one("team", team), "changeRequestId": one("cr", cr), "commentId": one("comment", comment), "pageId": one("page", page),
		"collectionId": one("collection", collection), "translationId": one("translation", translation), "path": one("pagePath", pagePath),
		"slug": one("spec", specSlug), "emailDomain": one("domain", "example.com"), "query": one("query", "Zanzibar"),
		// By field, where the name says too little.
		"Query.organization.id":                one("org", org),
		"Query.space.id":                       three("privateSpace", space, "collectionSpace", collSpace, "publicSpace", public),
		"Query.site.id":                        one("site", site),
		"Site.siteSpace.id":                    one("siteSpace", siteSpaceID),
		"Query.collection.id":                  one("collection", collection),
		"Query.organizationInvite.id":          one("invite", invite),
		"Query.integration.name":               two("privateIntegration", privateInt, "publicIntegration", publicInt),
		"Organization.member.userId":           one("owner", owner.ID),
		"Organization.team.id":                 one("team", team),
		"Organization.translation.id":          one("translation", translation),
		"Organization.conversation.id":         one("conversation", "walk-conv"),
		"Organization.conversationIssue.id":    one("issue", issue),
		"Organization.conversationsCluster.id": one("cluster", cluster),
		"Organization.samlProvider.id":         one("saml", samlProvider),
		"Integration.installation.id":          two("installation", inst, "publicInstallation", pubInst),
		"Integration.event.id":                 two("event", event, "publicEvent", pubEvent),
		"OpenAPISpec.version.id":               one("version", specVersion),
		"Revision.file.id":                     one("file", file),
		"Revision.page.id":                     two("page", page, "publicPage", publicPage),
		"Space.revisionById.id":                one("revision", revision),
		"Space.changeRequest.id":               two("cr", cr, "publicCR", publicCR),
		"Space.comment.id":                     two("comment", comment, "publicComment", publicComment),
		"ChangeRequest.comment.id":             one("crComment", crComment),
		"ChangeRequest.review.id":              one("review", review),
		"Comment.reply.id":                     two("reply", reply, "crReply", crReply),
		"Site.search.input":                    {{"siteSearch", `{query: "Zanzibar", scope: {mode: "all"}}`}},
		"Site.redirect.source":                 one("redirectSource", redirectSource),
		"Space.pageRedirect.path":              one("movedPagePath", movedPath),
		// The published site's address: what it shows its visitor, with
		// a token (a page's address would hold its path, a marker).
		"Query.publishedContentByUrl.input": {{"publishedSite", `{url: ` + string(mustLiteral(f.ids["publishedURL"])) + `}`}},
	}
	// node and nodes: the objects of every kind above that have a global id.
	var nodeArgs []walkArg
	var nodeIDs []string
	for _, a := range []struct{ label, id string }{
		{"org", org}, {"privateSpace", space}, {"collectionSpace", collSpace}, {"collection", collection}, {"site", site},
		{"team", team}, {"invite", invite}, {"revision", revision}, {"cr", cr}, {"comment", comment}, {"reply", reply},
		{"crComment", crComment}, {"translation", translation}, {"issue", issue}, {"cluster", cluster},
		{"saml", samlProvider}, {"installation", inst}, {"event", event}, {"siteSpace", siteSpaceID},
		{"siteSection", sectionID}, {"siteSectionGroup", group},
	} {
		nodeArgs = append(nodeArgs, one(a.label, a.id)...)
		nodeIDs = append(nodeIDs, a.id)
	}
	f.args["Query.node.id"] = nodeArgs
	all, _ := json.Marshal(nodeIDs)
	f.args["Query.nodes.ids"] = []walkArg{{"allNodes", string(all)}}
	return f
}

// queryOf is the query string route needs with ids: the fixture's own (a
// redirect's source), or every fixture's (requiredQuery).
func (f *walkFixture) queryOf(route rest.Route, ids map[string]string) string {
	if q, ok := f.queries[route.Operation]; ok {
		return q
	}
	return requiredQueryOf(route.Operation, ids)
}

// mustLiteral is s as a GraphQL string literal (a JSON string is one).
func mustLiteral(s string) []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return b
}

// restIDs are the path parameters to call route with: the private space's
// ids, and for routes of a space alone, the collection's space too.
func (f *walkFixture) restIDs(route rest.Route) []map[string]string {
	ids := threadIDs(route, f.ids)
	out := []map[string]string{ids}
	if params := strings.Count(route.Path, "{"); params == 1 && strings.Contains(route.Path, "{spaceId}") {
		out = append(out, map[string]string{"spaceId": f.collSpace})
	}
	return out
}

// The schema, as introspection tells it.

type walkSchema struct {
	query string
	types map[string]*introType
	// reachable are the fields (Type.field) of the types reachable from
	// Query.
	reachable map[string]bool
}

type introType struct {
	Kind          string       `json:"kind"`
	Name          string       `json:"name"`
	Fields        []introField `json:"fields"`
	PossibleTypes []struct {
		Name string `json:"name"`
	} `json:"possibleTypes"`
}

type introField struct {
	Name string       `json:"name"`
	Args []introArg   `json:"args"`
	Type introTypeRef `json:"type"`
}

type introArg struct {
	Name         string       `json:"name"`
	Type         introTypeRef `json:"type"`
	DefaultValue *string      `json:"defaultValue"`
}

type introTypeRef struct {
	Kind   string        `json:"kind"`
	Name   *string       `json:"name"`
	OfType *introTypeRef `json:"ofType"`
}

func (r introTypeRef) named() string {
	for r.OfType != nil {
		r = *r.OfType
	}
	if r.Name == nil {
		return ""
	}
	return *r.Name
}

// introspectionQuery is GraphiQL's introspection query.
const introspectionQuery = `query IntrospectionQuery {
  __schema {
    queryType { name }
    mutationType { name }
    subscriptionType { name }
    types { ...FullType }
    directives { name description locations args { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type {
  kind name
  ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } }
}`

func introspectSchema(t *testing.T, env *servertest.Env) *walkSchema {
	t.Helper()
	res := env.Do("POST", "/graphql", "", map[string]any{"query": introspectionQuery}).Expect(http.StatusOK)
	var out struct {
		Data struct {
			Schema struct {
				QueryType struct{ Name string } `json:"queryType"`
				Types     []*introType          `json:"types"`
			} `json:"__schema"`
		} `json:"data"`
	}
	res.Decode(&out)
	s := &walkSchema{query: out.Data.Schema.QueryType.Name, types: map[string]*introType{}, reachable: map[string]bool{}}
	for _, typ := range out.Data.Schema.Types {
		s.types[typ.Name] = typ
	}
	if s.types[s.query] == nil || len(s.types) < 50 {
		t.Fatalf("introspection: no schema: %.500s", res.Body)
	}
	seen := map[string]bool{}
	var reach func(name string)
	reach = func(name string) {
		typ := s.types[name]
		if seen[name] || typ == nil || strings.HasPrefix(name, "__") {
			return
		}
		seen[name] = true
		for _, p := range typ.PossibleTypes {
			reach(p.Name)
		}
		if typ.Kind != "OBJECT" {
			return
		}
		for _, fd := range typ.Fields {
			s.reachable[name+"."+fd.Name] = true
			reach(fd.Type.named())
		}
	}
	reach(s.query)
	return s
}

func (s *walkSchema) composite(name string) bool {
	switch s.types[name].Kind {
	case "OBJECT", "INTERFACE", "UNION":
		return true
	}
	return false
}

func (s *walkSchema) abstract(name string) bool {
	k := s.types[name].Kind
	return k == "INTERFACE" || k == "UNION"
}

// concrete lists the object types a value of type name may be.
func (s *walkSchema) concrete(name string) []*introType {
	typ := s.types[name]
	if !s.abstract(name) {
		return []*introType{typ}
	}
	var out []*introType
	for _, p := range typ.PossibleTypes {
		out = append(out, s.types[p.Name])
	}
	return out
}

// The walk.

// walkStep is one field of a path: field of type parent (inside "... on
// parent" when the value is of an abstract type), with its arguments.
type walkStep struct {
	on     bool
	parent string
	field  string
	args   string
	label  string // the argument values' labels, when the field is walked with several
	typ    string // the field's named type
}

// text renders the step under alias (none when empty) with body as its
// selection set.
func (s walkStep) text(alias, body string) string {
	sel := s.field + s.args + " " + body
	if alias != "" {
		sel = alias + ": " + sel
	}
	if s.on {
		sel = "... on " + s.parent + " { " + sel + " }"
	}
	return sel
}

// walkPath is a chain of fields from the root, and the leaves it selects at
// its end (nil: every scalar field of the types its end may be).
type walkPath struct {
	steps  []walkStep
	leaves []walkLeaf
	// of is the path a single-leaf variant stands for.
	of *walkPath
}

type walkLeaf struct {
	text, field string // field: Type.field, "" for __typename
}

func (p *walkPath) last() walkStep { return p.steps[len(p.steps)-1] }

func (p *walkPath) String() string {
	var b strings.Builder
	for i, s := range p.steps {
		if i > 0 {
			b.WriteByte('.')
		}
		if s.on {
			b.WriteString(s.parent + ".")
		}
		b.WriteString(s.field)
		if s.label != "" {
			b.WriteString("(" + s.label + ")")
		}
	}
	return b.String()
}

// onPath reports whether the path already takes field of type parent.
func (p *walkPath) onPath(parent, field string) bool {
	for _, s := range p.steps {
		if s.parent == parent && s.field == field {
			return true
		}
	}
	return false
}

// chain renders p's fields, the first without its alias, with body as the
// selection set of the last.
func (p *walkPath) chain(body string) string {
	for i := len(p.steps) - 1; i >= 1; i-- {
		body = "{ " + p.steps[i].text("", body) + " }"
	}
	return p.steps[0].text("", body)
}

// walkGroup is a path the walk goes on from, and the paths one field longer:
// queried together, as one chain to the group's end with each child under an
// alias of its own (c0, c1...), they cost the server one resolution of the
// chain. A group whose answer has an error that may have nulled more than
// the field that failed (a field that cannot be null nulls its parent) is
// queried again path by path.
type walkGroup struct {
	parent   *walkPath
	children []*walkPath
	text     string
}

type walker struct {
	t    *testing.T
	env  *servertest.Env
	user *servertest.User
	// send, when set, runs a document in the place of a POST with the
	// user's token (the visitor's walk).
	send   func(doc string) (int, []byte, error)
	schema *walkSchema
	f      *walkFixture
	// leafCache holds the leaves of each type.
	leafCache map[string][]walkLeaf

	visited  map[string]bool
	paths    int // distinct paths queried
	queries  int // paths in requests, again when a path is queried again
	live     int
	mu       sync.Mutex
	found    map[string][]walkHit // marker kind → where
	failures []string             // requests the walk could not make sense of
	requests int
	// lists are live paths that end at a list with a totalCount, listsOf
	// how many of each list field (checkTotals).
	lists   []*walkPath
	listsOf map[string]int
}

// visitorReads are the markers a visitor of the fixture's published site
// reads: the site's structure and the settings in effect, the spaces it
// publishes (the private space and the private collection's space are
// published by it: publishing is what opens them), their live pages and
// files. Never their change requests, comments, reviews, collections, the
// organization's people, settings and other objects, nor the keys that
// open the site.
var visitorReads = map[string]bool{
	"siteTitle": true, "sectionTitle": true, "sectionDescription": true, "groupTitle": true,
	"siteCustomization": true, "siteSpaceCustomization": true, "spaceTitle": true, "collectionSpaceTitle": true,
	"pageTitle": true, "pageMarkdown": true, "fileName": true,
	// The redirects it follows: its site's (by source), and those of the
	// pages of the spaces it reads.
	"redirectSource": true, "redirectURL": true, "movedPagePath": true,
}

// resolvedToken is the visitor API token owner's resolution of published
// address u hands out: of u's anonymous visitor.
func resolvedToken(t *testing.T, owner *servertest.User, u string) string {
	t.Helper()
	token := owner.Do("POST", "/v1/urls/published", map[string]any{"url": u}).Expect(http.StatusOK).String("apiToken")
	if !graph.IsVisitorToken(token) {
		t.Fatalf("resolving %s handed out no visitor API token: %q", u, token)
	}
	return token
}

// visitorSender runs a walk's documents as a visitor of site of orgID,
// in-process: a visitor has no token for /graphql.
func visitorSender(env *servertest.Env, orgID, site string) func(doc string) (int, []byte, error) {
	res := env.Server.Resolver
	eng := res.Engine(false)
	return func(doc string) (int, []byte, error) {
		ctx := graph.WithLoaders(context.Background(), graph.NewLoaders(env.DB))
		v, err := res.AdmitVisitor(ctx, graph.VisitorRequest{OrganizationID: orgID, SiteName: site})
		if err != nil {
			return 0, nil, err
		}
		body, err := json.Marshal(eng.RunServerDocument(graph.WithVisitor(ctx, v), doc, "", nil))
		return http.StatusOK, body, err
	}
}

func newWalker(t *testing.T, env *servertest.Env, u *servertest.User, s *walkSchema, f *walkFixture) *walker {
	return &walker{t: t, env: env, user: u, schema: s, f: f, leafCache: map[string][]walkLeaf{},
		visited: map[string]bool{}, found: map[string][]walkHit{}}
}

func (w *walker) walk() {
	query := w.schema.types[w.schema.query]
	var roots []*walkPath
	var scalars []string
	for _, fd := range query.Fields {
		if strings.HasPrefix(fd.Name, "__") {
			continue
		}
		if !w.schema.composite(fd.Type.named()) {
			scalars = append(scalars, fd.Name+w.argSets(query.Name, fd)[0].args)
			w.visited[query.Name+"."+fd.Name] = true
			continue
		}
		for _, a := range w.argSets(query.Name, fd) {
			roots = append(roots, &walkPath{steps: []walkStep{{parent: query.Name, field: fd.Name, args: a.args, label: a.label, typ: fd.Type.named()}}})
		}
	}
	if len(scalars) > 0 {
		w.runBatch("{ "+strings.Join(scalars, " ")+" }", nil)
	}
	w.paths += len(roots)
	live := w.run(roots)
	w.live += len(live)
	w.keepLists(live)
	for depth := 2; depth <= walkDepth && len(live) > 0; depth++ {
		var groups []*walkGroup
		for _, p := range live {
			if children := w.children(p); len(children) > 0 {
				groups = append(groups, &walkGroup{parent: p, children: children})
				w.paths += len(children)
			}
		}
		live = w.runGroups(groups)
		w.live += len(live)
		w.keepLists(live)
	}
	if len(w.failures) > 0 {
		w.t.Fatalf("%d requests failed:\n%s", len(w.failures), strings.Join(firstN(w.failures, 10), "\n"))
	}
}

// argSet is a rendering of a field's arguments.
type argSet struct{ args, label string }

// argSets renders the arguments of field fd of type parent: each required
// argument from the fixture (one set per combination of values), limit at 5,
// nothing else.
func (w *walker) argSets(parent string, fd introField) []argSet {
	sets := []argSet{{}}
	var parts [][]walkArg
	var names []string
	for _, a := range fd.Args {
		if a.Name == "limit" && a.Type.named() == "Int" {
			parts = append(parts, []walkArg{{"", "5"}})
			names = append(names, a.Name)
			continue
		}
		if a.Type.Kind != "NON_NULL" || a.DefaultValue != nil {
			continue
		}
		vals, ok := w.f.args[parent+"."+fd.Name+"."+a.Name]
		if !ok {
			vals, ok = w.f.args[a.Name]
		}
		if !ok {
			w.t.Fatalf("no value for the required argument %s of %s.%s: add one to the fixture's args", a.Name, parent, fd.Name)
		}
		parts = append(parts, vals)
		names = append(names, a.Name)
	}
	for i, vals := range parts {
		var next []argSet
		for _, s := range sets {
			for _, v := range vals {
				n := argSet{args: s.args, label: s.label}
				if n.args != "" {
					n.args += ", "
				}
				n.args += names[i] + ": " + v.literal
				if len(vals) > 1 {
					if n.label != "" {
						n.label += ","
					}
					n.label += v.label
				}
				next = append(next, n)
			}
		}
		sets = next
	}
	for i := range sets {
		if sets[i].args != "" {
			sets[i].args = "(" + sets[i].args + ")"
		}
	}
	return sets
}

// children are the paths one field longer than p: every composite field of
// every type its end may be, but for those already on p.
func (w *walker) children(p *walkPath) []*walkPath {
	end := p.last().typ
	var out []*walkPath
	for _, typ := range w.schema.concrete(end) {
		for _, fd := range typ.Fields {
			if strings.HasPrefix(fd.Name, "__") || !w.schema.composite(fd.Type.named()) || p.onPath(typ.Name, fd.Name) {
				continue
			}
			for _, a := range w.argSets(typ.Name, fd) {
				steps := append(slices.Clip(p.steps), walkStep{on: w.schema.abstract(end), parent: typ.Name, field: fd.Name,
					args: a.args, label: a.label, typ: fd.Type.named()})
				out = append(out, &walkPath{steps: steps})
			}
		}
	}
	return out
}

// leaves are the fields a path selects at its end: __typename, and every
// scalar and enum field of every type its end may be.
func (w *walker) leaves(p *walkPath) []walkLeaf {
	if p.leaves != nil {
		return p.leaves
	}
	end := p.last().typ
	if l, ok := w.leafCache[end]; ok {
		return l
	}
	abstract := w.schema.abstract(end)
	out := []walkLeaf{{text: "__typename"}}
	for _, typ := range w.schema.concrete(end) {
		for _, fd := range typ.Fields {
			if strings.HasPrefix(fd.Name, "__") || w.schema.composite(fd.Type.named()) {
				continue
			}
			for _, a := range w.argSets(typ.Name, fd) {
				text := fd.Name + a.args
				if abstract {
					// Aliased: fields of one name may differ in type
					// between the types of a union.
					text = "... on " + typ.Name + " { " + typ.Name + "__" + fd.Name + ": " + text + " }"
				}
				out = append(out, walkLeaf{text: text, field: typ.Name + "." + fd.Name})
			}
		}
	}
	w.leafCache[end] = out
	return out
}

// body renders p's leaves as a selection set, and counts them and p's last
// field visited.
func (w *walker) body(p *walkPath) string {
	s := p.last()
	w.visited[s.parent+"."+s.field] = true
	var texts []string
	for _, l := range w.leaves(p) {
		texts = append(texts, l.text)
		if l.field != "" {
			w.visited[l.field] = true
		}
	}
	return "{ " + strings.Join(texts, " ") + " }"
}

// pack splits items into requests of at most walkTokens tokens and
// walkAliases items.
func pack[T any](items []T, tokens func(T) int) [][]T {
	var out [][]T
	var batch []T
	n := 0
	for _, it := range items {
		k := tokens(it) + 2
		if len(batch) > 0 && (n+k > walkTokens || len(batch) >= walkAliases) {
			out = append(out, batch)
			batch, n = nil, 0
		}
		batch = append(batch, it)
		n += k
	}
	if len(batch) > 0 {
		out = append(out, batch)
	}
	return out
}

// parallel runs f on each batch, walkWorkers at a time.
func parallel[T, R any](batches [][]T, f func([]T) R) []R {
	out := make([]R, len(batches))
	var wg sync.WaitGroup
	sem := make(chan struct{}, walkWorkers)
	for i, b := range batches {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = f(b)
		}()
	}
	wg.Wait()
	return out
}

// runGroups queries groups and returns their children whose end is not
// null.
func (w *walker) runGroups(groups []*walkGroup) []*walkPath {
	var fallback []*walkPath
	var fit []*walkGroup
	for _, g := range groups {
		var sels []string
		for j, c := range g.children {
			sels = append(sels, c.last().text(fmt.Sprintf("c%d", j), w.body(c)))
		}
		// A line per child: a group over the complexity limit (searches
		// cost the rows they rank, below nested lists) is then a request
		// of several paths, queried again path by path (runBatch).
		g.text = g.parent.chain("{ " + strings.Join(sels, "\n") + " }")
		if countTokens(g.text) > walkTokens/2 {
			fallback = append(fallback, g.children...)
			continue
		}
		w.queries += len(g.children)
		fit = append(fit, g)
	}
	results := parallel(pack(fit, func(g *walkGroup) int { return countTokens(g.text) }), w.runGroupBatch)
	all := map[*walkGroup]groupResult{}
	for _, r := range results {
		for g, res := range r {
			all[g] = res
		}
	}
	var live []*walkPath
	for _, g := range fit {
		res, ok := all[g]
		if !ok {
			continue // the request failed, which the walk reports
		}
		if res.failed {
			fallback = append(fallback, g.children...)
			continue
		}
		for j, c := range g.children {
			if res.live[j] {
				live = append(live, c)
			}
		}
	}
	return append(live, w.run(fallback)...)
}

type groupResult struct {
	failed bool
	live   []bool
}

// runGroupBatch queries groups in one request, or, when one of them makes
// the whole response null, in halves.
func (w *walker) runGroupBatch(groups []*walkGroup) map[*walkGroup]groupResult {
	var b strings.Builder
	b.WriteString("{\n")
	byAlias := map[string]*walkGroup{}
	for i, g := range groups {
		alias := fmt.Sprintf("g%d", i)
		byAlias[alias] = g
		fmt.Fprintf(&b, "%s: %s\n", alias, g.text)
	}
	b.WriteString("}")
	data, errs, ok := w.runBatch(b.String(), func(alias string, v any) []located {
		g := byAlias[alias]
		if g == nil {
			return nil
		}
		var out []located
		ends := ends(v, g.parent.steps[1:])
		for j, c := range g.children {
			var vals []any
			for _, e := range ends {
				if m, ok := e.(map[string]any); ok {
					vals = flatten(m[fmt.Sprintf("c%d", j)], vals)
				}
			}
			out = append(out, located{c, vals})
		}
		return out
	})
	if !ok {
		return nil
	}
	if data == nil && len(groups) > 1 {
		out := map[*walkGroup]groupResult{}
		for g, r := range w.runGroupBatch(groups[:len(groups)/2]) {
			out[g] = r
		}
		for g, r := range w.runGroupBatch(groups[len(groups)/2:]) {
			out[g] = r
		}
		return out
	}
	out := map[*walkGroup]groupResult{}
	for i, g := range groups {
		alias := fmt.Sprintf("g%d", i)
		r := groupResult{live: make([]bool, len(g.children))}
		for _, e := range errs {
			// An error nulls its field, and, when the field cannot be
			// null, the object holding it too, and so on up: only an
			// error below the chain whose object is still there took
			// nothing but its own field.
			if len(e.Path) == 0 {
				r.failed = true
			} else if e.Path[0] == alias && (pathNames(e.Path) <= len(g.parent.steps) || !isObject(lookup(data, e.Path[:len(e.Path)-1]))) {
				r.failed = true
			}
		}
		if data == nil {
			r.failed = true
		}
		if !r.failed {
			for _, e := range ends(data[alias], g.parent.steps[1:]) {
				m, _ := e.(map[string]any)
				for j := range g.children {
					if m != nil && hasObject(m[fmt.Sprintf("c%d", j)]) {
						r.live[j] = true
					}
				}
			}
		}
		out[g] = r
	}
	return out
}

// run queries paths, each under an alias of its own, and returns those
// whose end is not null. A path whose end is null because one of its leaves
// failed is queried again one leaf at a time.
func (w *walker) run(paths []*walkPath) []*walkPath {
	texts := map[*walkPath]string{}
	for _, p := range paths {
		texts[p] = p.chain(w.body(p))
	}
	w.queries += len(paths)
	results := parallel(pack(paths, func(p *walkPath) int { return countTokens(texts[p]) }), func(b []*walkPath) map[*walkPath]pathResult {
		return w.runPaths(b, texts)
	})
	all := map[*walkPath]pathResult{}
	for _, r := range results {
		for p, res := range r {
			all[p] = res
		}
	}
	var live, retry []*walkPath
	for _, p := range paths {
		res := all[p]
		switch {
		case res.live:
			live = append(live, p)
		case res.leafFailed && p.leaves == nil:
			for _, l := range w.leaves(p)[1:] {
				retry = append(retry, &walkPath{steps: p.steps, leaves: []walkLeaf{{text: "__typename"}, l}, of: p})
			}
		}
	}
	if len(retry) > 0 {
		seen := map[*walkPath]bool{}
		for _, v := range w.run(retry) {
			if !seen[v.of] {
				seen[v.of] = true
				live = append(live, v.of)
			}
		}
	}
	return live
}

type pathResult struct{ live, leafFailed bool }

// runPaths queries paths in one request, or, when one of them makes the
// whole response null, in halves.
func (w *walker) runPaths(paths []*walkPath, texts map[*walkPath]string) map[*walkPath]pathResult {
	var b strings.Builder
	b.WriteString("{\n")
	byAlias := map[string]*walkPath{}
	for i, p := range paths {
		alias := fmt.Sprintf("a%d", i)
		byAlias[alias] = p
		fmt.Fprintf(&b, "%s: %s\n", alias, texts[p])
	}
	b.WriteString("}")
	data, errs, ok := w.runBatch(b.String(), func(alias string, v any) []located {
		if p := byAlias[alias]; p != nil {
			return []located{{p, ends(v, p.steps[1:])}}
		}
		return nil
	})
	if !ok {
		return nil
	}
	if data == nil && len(paths) > 1 {
		out := map[*walkPath]pathResult{}
		for p, r := range w.runPaths(paths[:len(paths)/2], texts) {
			out[p] = r
		}
		for p, r := range w.runPaths(paths[len(paths)/2:], texts) {
			out[p] = r
		}
		return out
	}
	out := map[*walkPath]pathResult{}
	for i, p := range paths {
		alias := fmt.Sprintf("a%d", i)
		var r pathResult
		if data != nil {
			r.live = hasObject(ends(data[alias], p.steps[1:]))
		}
		for _, e := range errs {
			if len(e.Path) == 0 || e.Path[0] != alias {
				continue
			}
			if pathNames(e.Path) == len(p.steps)+1 {
				r.leafFailed = true
			}
		}
		out[p] = r
	}
	return out
}

// pathNames counts the names of an error's path, list indices left out.
func pathNames(path []any) int {
	n := 0
	for _, x := range path {
		if _, ok := x.(string); ok {
			n++
		}
	}
	return n
}

// lookup returns the value at path in data.
func lookup(data map[string]any, path []any) any {
	var v any = data
	for _, x := range path {
		switch x := x.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[x]
		case float64:
			l, _ := v.([]any)
			if int(x) < 0 || int(x) >= len(l) {
				return nil
			}
			v = l[int(x)]
		default:
			return nil
		}
	}
	return v
}

func isObject(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

// ends returns the values at the end of steps below v, the answer of a
// path's first field: lists flattened, nulls left out.
func ends(v any, steps []walkStep) []any {
	vals := flatten(v, nil)
	for _, s := range steps {
		var next []any
		for _, x := range vals {
			if m, ok := x.(map[string]any); ok {
				next = flatten(m[s.field], next)
			}
		}
		vals = next
	}
	return vals
}

func flatten(v any, out []any) []any {
	switch v := v.(type) {
	case nil:
	case []any:
		for _, x := range v {
			out = flatten(x, out)
		}
	default:
		out = append(out, v)
	}
	return out
}

// hasObject reports whether v holds an object, in lists or not.
func hasObject(v any) bool {
	for _, x := range flatten(v, nil) {
		if _, ok := x.(map[string]any); ok {
			return true
		}
	}
	return false
}

type walkError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// located are the values a path ends at in a response.
type located struct {
	path *walkPath
	vals []any
}

// runBatch sends a document and records the markers of its response, which
// locate finds the paths of: it returns the values of a root field's alias
// at the ends of its paths. It returns the response's data (nil when null)
// and errors; ok is false when the request failed as a whole, which is
// recorded as a failure of the walk.
func (w *walker) runBatch(doc string, locate func(alias string, v any) []located) (data map[string]any, errs []walkError, ok bool) {
	status, body, err := w.post(doc)
	w.mu.Lock()
	w.requests++
	w.mu.Unlock()
	if err != nil {
		w.fail(fmt.Sprintf("request: %v", err))
		return nil, nil, false
	}
	var out struct {
		Data   map[string]any `json:"data"`
		Errors []walkError    `json:"errors"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		w.fail(fmt.Sprintf("status %d, not a GraphQL response: %.300s", status, body))
		return nil, nil, false
	}
	w.scan(body, out.Data, out.Errors, locate)
	for _, e := range out.Errors {
		// An internal error is a server fault, or (the server runs in
		// strict mode) a resolver that returned an object the caller may
		// not read and left it to the authorizer to withhold.
		if code, _ := e.Extensions["code"].(string); code == "INTERNAL" {
			w.fail(fmt.Sprintf("status %d: internal error at %v: %s", status, e.Path, e.Message))
		}
	}
	if out.Data == nil {
		if len(out.Errors) == 0 {
			w.fail(fmt.Sprintf("status %d: no data and no error: %.300s", status, body))
			return nil, nil, false
		}
		for _, e := range out.Errors {
			// A request of several paths over the complexity limit (lists
			// cost their page size, limit: 5, nested) is queried again in
			// halves, as one whose data is null; a single path over it
			// (a search, which costs the rows it ranks, below nested
			// lists) is refused before anything runs: it is null, and
			// cannot leak.
			if code, _ := e.Extensions["code"].(string); code == "COMPLEXITY_LIMIT_EXCEEDED" {
				return nil, out.Errors, true
			}
			// Errors of the document itself (validation, limits) are
			// the walk's own failures; a root refused to a visitor API
			// token (UNAUTHENTICATED: it is no member) is null, and
			// cannot leak.
			if code, _ := e.Extensions["code"].(string); e.Path == nil && code != "NOT_FOUND" && code != "FORBIDDEN" && code != "BAD_REQUEST" &&
				code != "UNAUTHENTICATED" {
				w.fail(fmt.Sprintf("status %d: %s (%s) for %.600s", status, e.Message, code, doc))
				return nil, nil, false
			}
		}
	}
	return out.Data, out.Errors, true
}

func (w *walker) fail(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failures = append(w.failures, msg)
}

func (w *walker) post(doc string) (int, []byte, error) {
	if w.send != nil {
		return w.send(doc)
	}
	raw, err := json.Marshal(map[string]any{"query": doc})
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequest("POST", w.env.URL+"/graphql", bytes.NewReader(raw))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+w.user.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// scan records where the markers of the fixture are in a response: the
// path from the root to the field holding one (a leaf, or a member of a JSON
// value), or the error mentioning one.
func (w *walker) scan(body []byte, data map[string]any, errs []walkError, locate func(alias string, v any) []located) {
	lower := bytes.ToLower(body)
	var present []walkMarker
	for _, m := range w.f.markers {
		if bytes.Contains(lower, []byte(strings.ToLower(m.text))) {
			present = append(present, m)
		}
	}
	if len(present) == 0 {
		return
	}
	where := map[string][]walkHit{}
	if locate != nil {
		for alias, v := range data {
			for _, l := range locate(alias, v) {
				for _, m := range present {
					text := strings.ToLower(m.text)
					for _, keys := range findText(l.vals, text, nil, nil) {
						for j, k := range keys {
							keys[j] = strings.Replace(k, "__", ".", 1)
						}
						where[m.kind] = append(where[m.kind], walkHit{l.path.String(), strings.Join(keys, "."), l.path.last().parent + "." + l.path.last().field})
					}
				}
			}
		}
	}
	for _, e := range errs {
		for _, m := range present {
			if strings.Contains(strings.ToLower(e.Message), strings.ToLower(m.text)) {
				where[m.kind] = append(where[m.kind], walkHit{node: fmt.Sprintf("an error at %v: %q", e.Path, e.Message)})
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range present {
		if len(where[m.kind]) == 0 {
			where[m.kind] = []walkHit{{node: fmt.Sprintf("elsewhere in a response: %.300s", body)}}
		}
		w.found[m.kind] = append(w.found[m.kind], where[m.kind]...)
	}
}

// findText returns the key paths (list indices left out) of v's strings
// and keys holding text.
func findText(v any, text string, keys []string, out [][]string) [][]string {
	switch v := v.(type) {
	case string:
		if strings.Contains(strings.ToLower(v), text) {
			out = append(out, slices.Clone(keys))
		}
	case []any:
		for _, x := range v {
			out = findText(x, text, keys, out)
		}
	case map[string]any:
		for k, x := range v {
			if strings.Contains(strings.ToLower(k), text) {
				out = append(out, append(slices.Clone(keys), k))
			}
			out = findText(x, text, append(slices.Clip(keys), k), out)
		}
	}
	return out
}

// countTokens counts a document's tokens as GraphQL's lexer does (commas
// and white space are none), near enough to stay under the server's limit.
func countTokens(doc string) int {
	n := 0
	for i := 0; i < len(doc); {
		c := rune(doc[i])
		switch {
		case c == ' ' || c == '\n' || c == '\t' || c == ',':
			i++
			continue
		case c == '"':
			i++
			for i < len(doc) && doc[i] != '"' {
				if doc[i] == '\\' {
					i++
				}
				i++
			}
			i++
		case strings.HasPrefix(doc[i:], "..."):
			i += 3
		case unicode.IsLetter(c) || unicode.IsDigit(c) || c == '_' || c == '-':
			for i < len(doc) && (unicode.IsLetter(rune(doc[i])) || unicode.IsDigit(rune(doc[i])) || doc[i] == '_' || doc[i] == '-' || doc[i] == '.') {
				i++
			}
		default:
			i++
		}
		n++
	}
	return n
}
