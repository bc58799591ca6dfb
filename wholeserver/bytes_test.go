package wholeserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/rest"
)

// Every route of the table with a path parameter, a query parameter or a
// body, sent what the database cannot store or the reference's schema
// refuses, by the admin of everything it names: a NUL and invalid UTF-8 in
// each path and query parameter, a NUL in each string of a valid body,
// invalid UTF-8 in the body, each member of the body of another JSON type,
// the body of another type, each array of the body huge. Each answers 4xx,
// never 5xx (the byte cases exactly 400, naming the parameter), and nothing
// is stored: the data reads the same afterwards.
func TestEveryRouteRefusesBadBytesAndBodies(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	owner, outsider := env.NewUser("Owner"), env.NewUser("Outsider")
	outsider.NewOrg("Elsewhere")
	fx := newRouteFixture(t, env, owner)
	before := fx.snapshot()

	pathParam := regexp.MustCompile(`\{(\w+)(\.\.\.)?\}`)
	variable := regexp.MustCompile(`\$(\w+)\s*:`)
	badParams := []struct{ name, value, problem string }{
		{"a NUL", "x%00y", "NUL"},
		{"invalid UTF-8", "x%FFy", "UTF-8"},
		{"an invalid UTF-8 sequence", "%C3%28", "UTF-8"},
	}
	requests, refused := 0, map[int]int{}
	send := func(t *testing.T, what, method, path string, body []byte, want func(status int) bool) *servertest.Response {
		t.Helper()
		requests++
		var b any
		if body != nil {
			b = body
		}
		res := owner.Do(method, path, b)
		refused[res.Status]++
		if !want(res.Status) {
			t.Errorf("%s: %s %s: %d %.300s", what, method, path, res.Status, res.Body)
		}
		if res.Status >= 400 {
			res.ErrorMessage()
		}
		return res
	}
	is400 := func(status int) bool { return status == http.StatusBadRequest }
	is4xx := func(status int) bool { return status >= 400 && status < 500 }

	for _, route := range rest.Routes {
		source := operationSource(t, route.Operation)
		hasBody := strings.Contains(source, "$input")
		params := pathParam.FindAllStringSubmatch(route.Path, -1)
		var query []string
		for _, m := range variable.FindAllStringSubmatch(source, -1) {
			if name := m[1]; name != "input" && !strings.Contains(route.Path, "{"+name+"}") && !strings.Contains(route.Path, "{"+name+"...}") {
				query = append(query, name)
			}
		}
		if len(params) == 0 && len(query) == 0 && !hasBody {
			continue
		}
		t.Run(route.Operation, func(t *testing.T) {
			path := fx.path(t, route)
			var valid []byte
			if hasBody {
				b, ok := fx.bodies[route.Operation]
				if !ok {
					t.Fatalf("no valid body for %s: add one to newRouteFixture", route.Operation)
				}
				valid = []byte(b)
				// The body is valid: an outsider is refused it for who
				// they are (the body is checked first).
				if route.Operation != "createOrganization" {
					res := outsider.Do(route.Method, path, valid)
					if res.Status != http.StatusNotFound && res.Status != http.StatusForbidden {
						t.Fatalf("the valid body of %s, sent by an outsider: %d %s", route.Operation, res.Status, res.Body)
					}
				}
			}

			// Path and query parameters.
			for _, p := range params {
				for _, bad := range badParams {
					bad := bad
					badPath := fx.pathWith(t, route, p[1], bad.value)
					res := send(t, bad.name+" in path parameter "+p[1], route.Method, badPath, valid, is400)
					if res.Status == http.StatusBadRequest {
						if msg := res.ErrorMessage(); !strings.Contains(msg, p[1]) || !strings.Contains(msg, bad.problem) {
							t.Errorf("%s in %s: message %q", bad.name, p[1], msg)
						}
					}
				}
			}
			for _, name := range query {
				for _, bad := range badParams {
					sep := "?"
					if strings.Contains(path, "?") {
						sep = "&"
					}
					res := send(t, bad.name+" in query parameter "+name, route.Method, path+sep+name+"="+bad.value, valid, is400)
					if msg := res.ErrorMessage(); res.Status == http.StatusBadRequest && !strings.Contains(msg, name) {
						t.Errorf("%s in ?%s: message %q", bad.name, name, msg)
					}
				}
			}
			if !hasBody {
				return
			}

			var decoded any
			if err := json.Unmarshal(valid, &decoded); err != nil {
				t.Fatalf("the valid body of %s: %v", route.Operation, err)
			}
			// A NUL in each string of the body (a member's name too).
			for _, body := range variants(decoded, func(v any) (any, bool) {
				s, ok := v.(string)
				return s + "\x00", ok
			}) {
				send(t, "a NUL in "+body.at, route.Method, path, body.raw, is400)
			}
			if obj, ok := decoded.(map[string]any); ok && len(obj) > 0 {
				keys := sortedKeys(obj)
				withKey := map[string]any{}
				for k, v := range obj {
					withKey[k] = v
				}
				withKey[keys[0]+"\x00"] = withKey[keys[0]]
				delete(withKey, keys[0])
				raw, _ := json.Marshal(withKey)
				send(t, "a NUL in the name of "+keys[0], route.Method, path, raw, is400)
			}
			// Invalid UTF-8: raw bytes in the first string, and as the
			// whole body.
			if i := bytes.Index(valid, []byte(`":"`)); i >= 0 {
				raw := append(append(append([]byte{}, valid[:i+3]...), 0xff, 0xfe), valid[i+3:]...)
				res := send(t, "invalid UTF-8 in a string", route.Method, path, raw, is400)
				if msg := res.ErrorMessage(); res.Status == http.StatusBadRequest && !strings.Contains(msg, "UTF-8") {
					t.Errorf("invalid UTF-8: message %q", msg)
				}
			}
			send(t, "invalid UTF-8 as the body", route.Method, path, []byte{'"', 0xc3, 0x28, '"'}, is400)
			// Each member of another JSON type (but within free-form
			// objects); the body of another type.
			for _, body := range variants(decoded, otherType) {
				if strings.HasPrefix(body.at, "configuration.") || strings.HasPrefix(body.at, unsignedClaimsAt) {
					continue
				}
				send(t, "another type for "+body.at, route.Method, path, body.raw, is4xx)
			}
			for _, raw := range []string{`"body"`, `42`, `true`, `[[1]]`} {
				send(t, "a body of another type: "+raw, route.Method, path, []byte(raw), is4xx)
			}
			// Each array huge (its first item again and again); a body with
			// no array gets one.
			arrays := variants(decoded, func(v any) (any, bool) {
				list, ok := v.([]any)
				if !ok {
					return nil, false
				}
				var item any = "x"
				if len(list) > 0 {
					item = list[0]
				}
				// More than the server takes (10,000), fitting in its body
				// limit when the items are small.
				raw, _ := json.Marshal(item)
				n := max(10_001, min(100_000, 900_000/(len(raw)+1)))
				huge := make([]any, n)
				for i := range huge {
					huge[i] = item
				}
				return huge, true
			})
			if len(arrays) == 0 {
				if obj, ok := decoded.(map[string]any); ok && len(obj) > 0 {
					k := sortedKeys(obj)[0]
					huge := make([]any, 100_000)
					for i := range huge {
						huge[i] = obj[k]
					}
					raw, _ := json.Marshal(map[string]any{k: huge})
					arrays = append(arrays, bodyVariant{at: k, raw: raw})
				}
			}
			for _, body := range arrays {
				send(t, "a huge array at "+body.at, route.Method, path, body.raw, is4xx)
			}
		})
	}
	statuses := make([]string, 0, len(refused))
	for status, n := range refused {
		statuses = append(statuses, fmt.Sprintf("%d×%d", n, status))
	}
	sort.Strings(statuses)
	t.Logf("%d requests: %s", requests, strings.Join(statuses, " "))
	if after := fx.snapshot(); after != before {
		t.Fatal("refused requests changed the data")
	}
}

// bodyVariant is a body changed at one place.
type bodyVariant struct {
	at  string
	raw []byte
}

// variants are the bodies v becomes when change, answering true, replaces
// one of its values (each in turn, the body itself excepted).
func variants(v any, change func(any) (any, bool)) []bodyVariant {
	var out []bodyVariant
	var walk func(cur any, path string, set func(any))
	walk = func(cur any, path string, set func(any)) {
		if path != "" {
			if changed, ok := change(cur); ok {
				set(changed)
				raw, _ := json.Marshal(v)
				set(cur)
				out = append(out, bodyVariant{at: path, raw: raw})
			}
		}
		switch c := cur.(type) {
		case map[string]any:
			for _, k := range sortedKeys(c) {
				walk(c[k], strings.TrimPrefix(path+"."+k, "."), func(x any) { c[k] = x })
			}
		case []any:
			for i := range c {
				walk(c[i], fmt.Sprintf("%s[%d]", path, i), func(x any) { c[i] = x })
			}
		}
	}
	walk(v, "", nil)
	return out
}

// otherType is a value of another JSON type than v.
func otherType(v any) (any, bool) {
	switch v.(type) {
	case string:
		return 42, true
	case float64:
		return "42", true
	case bool:
		return "true", true
	case map[string]any:
		return []any{"x"}, true
	case []any:
		return map[string]any{"x": 1}, true
	}
	return nil, false // null: any type may clear a member
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// routeFixture is one organization with every kind of object the routes
// name, its ids by path parameter, and a valid body for each route.
type routeFixture struct {
	t        *testing.T
	u        *servertest.User
	ids      map[string]string
	bodies   map[string]string
	snapshot func() string
}

// path is route's path with the fixture's ids (and the query parameters
// the operation cannot do without).
func (f *routeFixture) path(t *testing.T, route rest.Route) string {
	return f.pathWith(t, route, "", "")
}

// pathWith is path with value, as it is, for the parameter name.
func (f *routeFixture) pathWith(t *testing.T, route rest.Route, name, value string) string {
	t.Helper()
	path := strings.ReplaceAll(route.Path, "...}", "}")
	if name != "" {
		path = strings.ReplaceAll(path, "{"+name+"}", value)
	}
	for k, id := range threadIDs(route, f.ids) {
		path = strings.ReplaceAll(path, "{"+k+"}", id)
	}
	if strings.Contains(path, "{") {
		t.Fatalf("no id for a parameter of %s", route.Path)
	}
	return path + requiredQueryOf(route.Operation, f.ids)
}

func newRouteFixture(t *testing.T, env *servertest.Env, u *servertest.User) *routeFixture {
	t.Helper()
	org := u.NewOrg("Acme")
	other := u.NewOrg("Other")
	space := u.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	space2 := u.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Guides"}`).Expect(http.StatusCreated).String("id")
	site := u.Do("POST", "/v1/orgs/"+org+"/sites", map[string]any{"title": "Docs", "spaces": []string{space}}).Expect(http.StatusCreated).String("id")
	sitePath := "/v1/orgs/" + org + "/sites/" + site
	section := u.Do("POST", sitePath+"/sections", map[string]any{"spaceId": space2, "title": "Guides"}).Expect(http.StatusCreated)
	sectionID := section.String("id")
	siteSpaceID := section.JSON()["siteSpaces"].([]any)[0].(map[string]any)["id"].(string)
	group := u.Do("POST", sitePath+"/section-groups", map[string]any{"title": "Group", "sections": []string{sectionID}}).Expect(http.StatusCreated).String("id")
	u.Do("PUT", sitePath+"/adaptive-schema", `{"jsonSchema":{"type":"object","properties":{"beta":{"type":"boolean","description":"b"}},"additionalProperties":false}}`).
		Expect(http.StatusOK)
	shareLink := u.Do("POST", sitePath+"/share-links", `{"name":"Partners"}`).Expect(http.StatusCreated).String("id")
	redirect := u.Do("POST", sitePath+"/redirects", map[string]any{"source": "/old-page",
		"destination": map[string]any{"kind": "site-space", "siteSpaceId": siteSpaceID}}).Expect(http.StatusCreated).String("id")
	u.Do("POST", sitePath+"/publish", nil).Expect(http.StatusOK)
	publishedURL := publishedURLOf(t, u, org, site)
	file := uploadedFile(t, u, space, "", "notes.txt", []byte("notes"))
	page, pagePath, revision := createPage(t, u, space, "Plans", "Read me")
	cr := openChangeRequest(t, u, space, "An edit", page)
	comment, reply := postThread(t, u, space, "")
	crComment, crReply := postThread(t, u, space, cr)
	review := u.Do("POST", "/v1/spaces/"+space+"/change-requests/"+cr+"/reviews", `{"status":"approved"}`).Expect(http.StatusCreated).String("id")
	collection := u.Do("POST", "/v1/orgs/"+org+"/collections", `{"title":"Handbooks"}`).Expect(http.StatusCreated).String("id")
	team := u.Do("PUT", "/v1/orgs/"+org+"/teams", `{"title":"Core"}`).Expect(http.StatusCreated).String("id")
	u.Do("POST", "/v1/spaces/"+space+"/permissions", `{"role":"read","teams":["`+team+`"]}`).Expect(http.StatusNoContent)
	u.Do("PATCH", "/v1/orgs/"+org, `{"inviteLinks":true}`).Expect(http.StatusOK)
	invite := u.Do("POST", "/v1/orgs/"+org+"/link-invites", `{"role":"read"}`).Expect(http.StatusCreated).String("id")
	specSrc := newSpecSource(t)
	specSlug, specVersion := processedSpec(t, env, u, org, specSrc.URL+"/v30/openapi.json")
	translation := u.Do("POST", "/v1/orgs/"+org+"/translations", `{"source":{"space":"`+space+`","language":"en"},"language":"fr"}`).
		Expect(http.StatusCreated).String("id")
	samlProvider := u.Do("POST", "/v1/orgs/"+org+"/saml", `{"label":"Corp IdP","ssoURL":"https://idp.example/sso"}`).
		Expect(http.StatusCreated).String("id")
	conversation, issue, cluster := ingestedConversation(t, env, u, org)
	intBase := "/v1/integrations/tool"
	u.Do("POST", intBase, publishBody(org, map[string]any{"visibility": "private"})).Expect(http.StatusOK)
	inst := u.Do("POST", intBase+"/installations", `{"organization":"`+org+`"}`).Expect(http.StatusCreated).String("id")
	u.Do("POST", intBase+"/installations/"+inst+"/spaces", `{"space":"`+space+`"}`).Expect(http.StatusCreated)
	u.Do("POST", intBase+"/installations/"+inst+"/sites", `{"siteId":"`+site+`"}`).Expect(http.StatusCreated)
	event := u.Do("GET", intBase+"/events", nil).Expect(http.StatusOK).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)

	f := &routeFixture{t: t, u: u}
	f.ids = map[string]string{
		"organizationId": org, "spaceId": space, "siteId": site, "siteSectionId": sectionID, "emailDomain": "example.com",
		"siteSectionGroupId": group, "siteSpaceId": siteSpaceID, "userId": u.ID, "teamId": team, "inviteId": invite, "collectionId": collection,
		"pageId": page, "pagePath": pagePath, "revisionId": revision, "changeRequestId": cr, "fileId": file,
		"commentId": comment, "commentReplyId": reply, "crCommentId": crComment, "crCommentReplyId": crReply,
		"specSlug": specSlug, "versionId": specVersion, "translationId": translation, "samlProviderId": samlProvider,
		"reviewId": review, "integrationName": "tool", "installationId": inst, "eventId": event,
		"conversationId": conversation, "issueId": issue, "clusterId": cluster, "shareLinkId": shareLink, "siteRedirectId": redirect,
		"publishedURL": publishedURL,
	}
	doc := `{"object":"document","data":{},"nodes":[{"object":"block","type":"paragraph","nodes":[{"object":"text","leaves":[{"object":"leaf","text":"Hi","marks":[]}]}]}]}`
	f.bodies = map[string]string{
		"createOrganization":                  `{"title":"Planted"}`,
		"updateOrganizationById":              `{"title":"Renamed","inviteLinks":false}`,
		"updateOrganizationAgentInstructions": `{"instructions":` + doc + `}`,
		"createSpace":                         `{"title":"Planted","parent":"` + collection + `"}`,
		"updateSpaceById":                     `{"title":"Renamed","emoji":"1f600","visibility":"public"}`,
		"createSite":                          `{"title":"Planted","spaces":["` + space + `"]}`,
		"updateSiteById":                      `{"title":"Renamed","hostname":"docs.acme.example"}`,
		"updateSiteAdaptiveSchema":            `{"jsonSchema":{"type":"object","properties":{},"additionalProperties":false}}`,
		"sortSiteStructure":                   `{"item":{"type":"site-section","id":"` + sectionID + `"},"position":{"before":{"type":"site-section-group","id":"` + group + `"}}}`,
		"addSectionGroupToSite":               `{"title":"Planted","sections":["` + sectionID + `"]}`,
		"updateSiteSectionGroupById":          `{"title":"Renamed"}`,
		"moveSiteSectionGroup":                `{"position":{"after":{"type":"site-section","id":"` + sectionID + `"}}}`,
		"addSectionToGroup":                   `{"sectionId":"` + sectionID + `"}`,
		"addSectionToSite":                    `{"spaceId":"` + space + `","title":"Planted"}`,
		"updateSiteSectionById":               `{"title":"Renamed"}`,
		"moveSiteSection":                     `{"position":{"before":{"type":"site-section","siteSection":"` + sectionID + `"}}}`,
		"addSpaceToSite":                      `{"spaceId":"` + space + `"}`,
		"updateSiteSpaceById":                 `{"path":"renamed"}`,
		"moveSiteSpace":                       `{"position":{"before":{"type":"site-space","siteSpace":"` + siteSpaceID + `"}}}`,
		"updateSiteCustomizationById":         siteCustomizationBody,
		"overrideSiteSpaceCustomizationById":  siteSpaceOverrideBody,
		"createSiteShareLink":                 `{"name":"Planted"}`,
		"searchSiteContent":                   `{"query":"hello","scope":{"mode":"all"}}`,
		"updateSiteShareLinkById":             `{"active":false,"name":"Renamed"}`,
		"createSiteRedirect":                  `{"source":"/planted","destination":{"kind":"site-section","siteSectionId":"` + sectionID + `"}}`,
		"updateSiteRedirectById":              `{"destination":{"kind":"site-section","siteSectionId":"` + sectionID + `"}}`,
		"resolvePublishedContentByUrl":        `{"url":"` + publishedURL + `/` + pagePath + `","redirectOnError":true,"visitor":{"unsignedClaims":{"beta":true}}}`,
		"updateSitePublishingAuthById":        `{"backend":"custom","fallbackURL":"https://login.example.com/docs"}`,
		"updateMemberInOrganizationById":      `{"role":"admin"}`,
		"createOrganizationTeam":              `{"title":"Planted","members":["` + u.ID + `"]}`,
		"updateTeamInOrganizationById":        `{"title":"Renamed"}`,
		"updateMembersInOrganizationTeam":     `{"add":["` + u.ID + `"],"remove":[]}`,
		"addMemberToOrganizationTeamById":     `{"role":"owner"}`,
		"createOrganizationInvite":            `{"role":"admin"}`,
		"updateOrganizationInviteById":        `{"role":"admin"}`,
		"createCollection":                    `{"title":"Planted"}`,
		"updateCollectionById":                `{"title":"Renamed"}`,
		"moveCollection":                      `{"parent":null,"position":{"before":{"type":"space","space":"` + space + `"}}}`,
		"transferCollection":                  `{"organization":"` + other + `"}`,
		"moveSpace":                           `{"parent":"` + collection + `"}`,
		"transferSpace":                       `{"organization":"` + other + `"}`,
		"createChangeRequest":                 `{"subject":"Planted","description":` + doc + `}`,
		"updateChangeRequestById":             `{"subject":"Renamed","status":"draft"}`,
		"submitChangeRequestReview":           `{"status":"approved","comment":` + doc + `}`,
		"requestReviewersForChangeRequest":    `{"users":["` + u.ID + `"],"subject":"Please"}`,
		"applyTemplateToSpace":                `{"id":"api-reference","changeRequestId":"` + cr + `"}`,
		"postCommentInSpace":                  `{"body":{"markdown":"Planted"}}`,
		"postCommentInChangeRequest":          `{"body":{"markdown":"Planted"}}`,
		"updateCommentInSpace":                `{"resolved":true,"body":{"markdown":"Edited"}}`,
		"updateCommentInChangeRequest":        `{"resolved":true}`,
		"postCommentReplyInSpace":             `{"body":{"markdown":"Planted"}}`,
		"postCommentReplyInChangeRequest":     `{"body":{"markdown":"Planted"}}`,
		"updateCommentReplyInSpace":           `{"body":{"markdown":"Edited"}}`,
		"updateCommentReplyInChangeRequest":   `{"body":{"markdown":"Edited"}}`,
		"importGitRepository":                 `{"url":"file:///tmp/planted.git","ref":"refs/heads/main"}`,
		"exportToGitRepository":               `{"url":"file:///tmp/planted.git","ref":"refs/heads/main","commitMessage":"Planted"}`,
		"inviteToSpace":                       `{"role":"admin","users":["` + u.ID + `"],"teams":["` + team + `"]}`,
		"inviteToCollection":                  `{"role":"admin","teams":["` + team + `"]}`,
		"updateUserPermissionInSpace":         `{"role":"admin"}`,
		"updateTeamPermissionInSpace":         `{"role":"admin"}`,
		"updateUserPermissionInCollection":    `{"role":"admin"}`,
		"updateTeamPermissionInCollection":    `{"role":"admin"}`,
		"createOpenAPISpec":                   `{"slug":"planted","source":{"url":"` + specSrc.URL + `/v30/openapi.json"}}`,
		"createOrUpdateOpenAPISpecBySlug":     `{"source":{"url":"` + specSrc.URL + `/v31/openapi.yaml"}}`,
		"updateOpenAPISpecBySlug":             `{"visibility":"public"}`,
		"createTranslation":                   `{"source":{"space":"` + space + `","language":"en"},"language":"de","instructions":` + doc + `}`,
		"updateTranslation":                   `{"instructions":` + doc + `}`,
		"createOrganizationSAMLProvider":      `{"label":"Planted","ssoURL":"https://idp.example/sso"}`,
		"updateOrganizationSAMLProvider":      `{"label":"Renamed","ssoURL":"https://idp.example/sso"}`,
		"ingestConversation":                  `[{"id":"conv-2","subject":"Planted","metadata":{"url":"https://support.example/c/2","attributes":{},"createdAt":"2026-01-01T00:00:00Z"},"parts":[{"type":"message","role":"user","body":"Hi"}]}]`,
		"publishIntegration":                  `{"title":"Renamed","description":"x","script":"x","scopes":["space:content:read"],"organization":"` + org + `"}`,
		"installIntegration":                  `{"organization":"` + other + `"}`,
		"updateIntegrationInstallation":       `{"configuration":{"k":true},"externalIds":["a"]}`,
		"installIntegrationOnSpace":           `{"space":"` + space2 + `"}`,
		"updateIntegrationSpaceInstallation":  `{"configuration":{"k":true}}`,
		"installIntegrationOnSite":            `{"siteId":"` + site + `"}`,
		"updateIntegrationSiteInstallation":   `{"configuration":{"k":true}}`,
		"setIntegrationDevelopmentMode":       `{"tunnelUrl":"https://hook.example/events","all":true}`,
	}
	paths := []string{"/v1/orgs", "/v1/orgs/" + org, "/v1/orgs/" + org + "/agent-instructions", "/v1/orgs/" + org + "/spaces",
		"/v1/orgs/" + other + "/spaces", "/v1/orgs/" + other + "/collections",
		"/v1/spaces/" + space, "/v1/spaces/" + space2, "/v1/orgs/" + org + "/sites", sitePath, sitePath + "/adaptive-schema",
		sitePath + "/section-groups", sitePath + "/sections", sitePath + "/site-spaces", sitePath + "/structure",
		"/v1/orgs/" + org + "/members", "/v1/orgs/" + org + "/teams", "/v1/orgs/" + org + "/teams/" + team + "/members",
		"/v1/orgs/" + org + "/link-invites", "/v1/orgs/" + org + "/collections", "/v1/collections/" + collection,
		"/v1/collections/" + collection + "/spaces", "/v1/spaces/" + space + "/permissions/aggregate",
		"/v1/collections/" + collection + "/permissions/aggregate", "/v1/spaces/" + space + "/content/pages",
		"/v1/spaces/" + space + "/change-requests", "/v1/spaces/" + space + "/change-requests/" + cr,
		"/v1/spaces/" + space + "/change-requests/" + cr + "/content/pages", "/v1/spaces/" + space + "/comments",
		"/v1/spaces/" + space + "/comments/" + comment + "/replies", "/v1/spaces/" + space + "/change-requests/" + cr + "/comments",
		"/v1/spaces/" + space + "/change-requests/" + cr + "/reviews", "/v1/spaces/" + space + "/change-requests/" + cr + "/requested-reviewers",
		"/v1/spaces/" + space + "/git/info", "/v1/orgs/" + org + "/saml", "/v1/orgs/" + org + "/translations",
		"/v1/orgs/" + org + "/openapi", "/v1/orgs/" + org + "/conversations",
		intBase, intBase + "/installations", intBase + "/installations/" + inst, intBase + "/spaces", intBase + "/sites"}
	f.snapshot = func() string {
		var b strings.Builder
		for _, p := range paths {
			b.WriteString(p + " ")
			b.Write(u.Do("GET", p, nil).Expect(http.StatusOK).Body)
		}
		return b.String()
	}
	return f
}

// Request bodies follow the reference's schema of them: a translation's
// instructions are a JSON document, development mode needs its
// tunnelUrl. The message names the member at fault.
func TestBodiesFollowTheReference(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	base := "/v1/orgs/" + org + "/translations"
	id := alice.Do("POST", base, `{"source":{"space":"`+space+`","language":"en"},"language":"fr"}`).Expect(http.StatusCreated).String("id")
	alice.Do("POST", "/v1/integrations/tool", publishBody(org, nil)).Expect(http.StatusOK)
	before := string(alice.Do("GET", base, nil).Expect(http.StatusOK).Body) +
		string(alice.GraphQL(`{ integration(name: "tool") { development { url } } }`, nil).Data)

	manyNodes := `{"object":"document","data":{},"nodes":[` + strings.TrimSuffix(strings.Repeat(`{},`, 100_000), ",") + `]}`
	source := `"source":{"space":"` + space + `","language":"en"},"language":"de",`
	for _, tc := range []struct{ method, path, body, message string }{
		{"POST", base, `{` + source + `"instructions":{"object":5,"data":{},"nodes":[]}}`, "instructions.object: expected a string, got a number"},
		{"POST", base, `{` + source + `"instructions":{"object":"document","data":{},"nodes":{}}}`, "instructions.nodes: expected an array, got an object"},
		{"POST", base, `{` + source + `"instructions":` + manyNodes + `}`, "instructions.nodes: must have at most 10000 items"},
		{"POST", base, `{` + source + `"instructions":{"object":"document","data":{},"nodes":[{"object":"block","type":"nope","nodes":[]}]}}`, "instructions.nodes[0].type: must be one of"},
		{"POST", base, `{` + source + `"instructions":{"object":"document","data":{},"nodes":[{"object":"block","type":"paragraph","nodes":[{"object":"text","leaves":[{"object":"leaf","text":5,"marks":[]}]}]}]}}`,
			"instructions.nodes[0].nodes[0].leaves[0].text: expected a string, got a number"},
		{"PUT", base + "/" + id, `{"instructions":{"object":5,"data":{},"nodes":[]}}`, "instructions.object: expected a string, got a number"},
		{"PUT", base + "/" + id, `{"instructions":{"object":"document","data":{},"nodes":{}}}`, "instructions.nodes: expected an array, got an object"},
		{"PUT", base + "/" + id, `{"instructions":` + manyNodes + `}`, "instructions.nodes: must have at most 10000 items"},
		{"PUT", base + "/" + id, `{}`, "instructions: is required"},
		{"PUT", "/v1/integrations/tool/dev", `{"url":"https://hook.example/"}`, "tunnelUrl: is required"},
		{"PUT", "/v1/integrations/tool/dev", `{"all":true}`, "tunnelUrl: is required"},
		{"PUT", "/v1/integrations/tool/dev", `{"tunnelUrl":""}`, "tunnelUrl: must not be empty"},
		{"PUT", "/v1/integrations/tool/dev", `{"tunnelUrl":"https://hook.example/","all":"yes"}`, "all: expected a boolean, got a string"},
	} {
		msg := alice.Do(tc.method, tc.path, tc.body).Expect(http.StatusBadRequest).ErrorMessage()
		if !strings.HasPrefix(msg, tc.message) {
			t.Errorf("%s %s %.80s: message %q, want %q", tc.method, tc.path, tc.body, msg, tc.message)
		}
	}
	after := string(alice.Do("GET", base, nil).Expect(http.StatusOK).Body) +
		string(alice.GraphQL(`{ integration(name: "tool") { development { url } } }`, nil).Data)
	if after != before {
		t.Fatalf("refused bodies changed the data:\n%s\n%s", before, after)
	}

	// The reference's body is taken, with this server's documented
	// extensions of it: the site of an installation by siteId (or site),
	// development mode's URL by tunnelUrl (with url, the same).
	alice.Do("PUT", "/v1/integrations/tool/dev", `{"tunnelUrl":"https://hook.example/","url":"https://hook.example/","all":true}`).Expect(http.StatusNoContent)
	site := alice.Do("POST", "/v1/orgs/"+org+"/sites", `{"title":"Docs"}`).Expect(http.StatusCreated).String("id")
	inst := alice.Do("POST", "/v1/integrations/tool/installations", `{"organization":"`+org+`"}`).Expect(http.StatusCreated).String("id")
	sites := "/v1/integrations/tool/installations/" + inst + "/sites"
	if msg := alice.Do("POST", sites, `{"siteId":"`+site+`","site":"other"}`).Expect(http.StatusBadRequest).ErrorMessage(); !strings.HasPrefix(msg, "site: ") {
		t.Errorf("siteId and site differ: %q", msg)
	}
	alice.Do("POST", sites, `{"siteId":"`+site+`"}`).Expect(http.StatusCreated)
	alice.Do("POST", sites, `{"site":"`+site+`"}`).Expect(http.StatusCreated)
	alice.Do("PATCH", "/v1/spaces/"+space, `{"visibility":"public","emoji":"1f600"}`).Expect(http.StatusOK)
	if msg := alice.Do("PATCH", "/v1/spaces/"+space, `{"emoji":"1f600","icon":"https://acme.example/i.png"}`).Expect(http.StatusBadRequest).ErrorMessage(); !strings.HasPrefix(msg, "body: matches more than one") {
		t.Errorf("an emoji and an icon: %q", msg)
	}
}
