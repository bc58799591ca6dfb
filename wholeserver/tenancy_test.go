package wholeserver_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/rest"
)

// Every route of the table, called by a member of another organization with
// the ids of the victim's resources: reads answer 404, writes 404 or 403, and
// the victim's data is unchanged afterwards. A route added to the table
// without an entry here fails the test.
func TestCrossTenantAccess(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	victim, eve := env.NewUser("Victim"), env.NewUser("Eve")
	eveOrg := eve.NewOrg("Eve Corp")
	f := newTenantFixture(t, env, victim, "victim-tool", eve, eveOrg)
	ids, bodies := f.ids, f.bodies
	before := f.snapshot()

	for _, route := range rest.Routes {
		t.Run(route.Operation, func(t *testing.T) {
			if ownData[route.Operation] {
				return
			}
			path := strings.ReplaceAll(route.Path, "...}", "}") // wildcards take a value like any parameter
			for name, id := range threadIDs(route, ids) {
				path = strings.ReplaceAll(path, "{"+name+"}", id)
			}
			path += requiredQueryOf(route.Operation, ids)
			if strings.Contains(path, "{") {
				t.Fatalf("no id for a parameter of %s", route.Path)
			}
			var body any
			if route.Method != "GET" && route.Method != "DELETE" {
				b, ok := bodies[route.Operation]
				if !ok && strings.Contains(operationSource(t, route.Operation), "$input") {
					t.Fatalf("no body for %s: add one to the table of this test", route.Operation)
				}
				body = b
			}
			res := eve.Do(route.Method, path, body)
			switch {
			case route.Method == "GET" && res.Status == http.StatusNotFound:
			case route.Method != "GET" && (res.Status == http.StatusNotFound || res.Status == http.StatusForbidden):
			case route.Method == "DELETE" && res.Status == http.StatusNoContent:
				// What a deletion of nothing answers: the snapshot below
				// tells that nothing was.
				return
			default:
				t.Fatalf("%s %s by another tenant: %d %s", route.Method, path, res.Status, res.Body)
			}
			res.ErrorMessage()
		})
	}
	if after := f.snapshot(); after != before {
		t.Fatal("another tenant's requests changed the victim's data")
	}
}

// tenantFixture is an organization of victim's filled with one object of
// every kind the routes name, the ids of those objects by path parameter,
// bodies valid for their owner by operation (naming eve and eveOrg where a
// body names a user or another organization), and a snapshot of what victim
// reads of them, to tell whether anything changed.
type tenantFixture struct {
	org      string
	ids      map[string]string
	bodies   map[string]string
	snapshot func() string
}

// newTenantFixture fills a new organization of victim's; integration names
// the private integration it publishes (names are global).
func newTenantFixture(t *testing.T, env *servertest.Env, victim *servertest.User, integration string, eve *servertest.User, eveOrg string) *tenantFixture {
	t.Helper()
	org := victim.NewOrg(victim.Email + " Inc")
	space := victim.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Secret"}`).Expect(http.StatusCreated).String("id")
	space2 := victim.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Other"}`).Expect(http.StatusCreated).String("id")
	siteBody := victim.Do("POST", "/v1/orgs/"+org+"/sites", map[string]any{"title": "Private docs", "spaces": []string{space}}).Expect(http.StatusCreated)
	site := siteBody.String("id")
	sitePath := "/v1/orgs/" + org + "/sites/" + site
	section := victim.Do("POST", sitePath+"/sections", map[string]any{"spaceId": space2, "title": "Guides"}).Expect(http.StatusCreated)
	sectionID := section.String("id")
	siteSpaceID := section.JSON()["siteSpaces"].([]any)[0].(map[string]any)["id"].(string)
	group := victim.Do("POST", sitePath+"/section-groups", map[string]any{"title": "Group", "sections": []string{sectionID}}).Expect(http.StatusCreated).String("id")
	victim.Do("PUT", sitePath+"/adaptive-schema", `{"jsonSchema":{"type":"object","properties":{"beta":{"type":"boolean","description":"b"}},"additionalProperties":false}}`).
		Expect(http.StatusOK)
	victim.Do("POST", sitePath+"/publish", nil).Expect(http.StatusOK)
	publishedURL := publishedURLOf(t, victim, org, site)
	shareLink := victim.Do("POST", sitePath+"/share-links", `{"name":"Partners"}`).Expect(http.StatusCreated).String("id")
	redirect := victim.Do("POST", sitePath+"/redirects", map[string]any{"source": "/old-page",
		"destination": map[string]any{"kind": "site-space", "siteSpaceId": siteSpaceID}}).Expect(http.StatusCreated).String("id")
	file := uploadedFile(t, victim, space, "", "secret.txt", []byte("secret"))
	page, pagePath, revision := createPage(t, victim, space, "Secret plans", "Do not read")
	cr := openChangeRequest(t, victim, space, "Secret edit", page)
	comment, reply := postThread(t, victim, space, "")
	crComment, crReply := postThread(t, victim, space, cr)
	review := victim.Do("POST", "/v1/spaces/"+space+"/change-requests/"+cr+"/reviews", `{"status":"approved"}`).Expect(http.StatusCreated).String("id")
	victim.Do("POST", "/v1/spaces/"+space+"/change-requests/"+cr+"/requested-reviewers", `{"users":["`+victim.ID+`"]}`).Expect(http.StatusOK)
	collection := victim.Do("POST", "/v1/orgs/"+org+"/collections", `{"title":"Handbooks"}`).Expect(http.StatusCreated).String("id")
	team := victim.Do("PUT", "/v1/orgs/"+org+"/teams", `{"title":"Core"}`).Expect(http.StatusCreated).String("id")
	victim.Do("POST", "/v1/spaces/"+space+"/permissions", `{"role":"read","teams":["`+team+`"]}`).Expect(http.StatusNoContent)
	victim.Do("POST", "/v1/collections/"+collection+"/permissions", `{"role":"edit","teams":["`+team+`"]}`).Expect(http.StatusNoContent)
	// An invite link's id is its secret: whoever holds it may join while the
	// organization accepts links. This one leaked, but links are off.
	victim.Do("PATCH", "/v1/orgs/"+org, `{"inviteLinks":true}`).Expect(http.StatusOK)
	invite := victim.Do("POST", "/v1/orgs/"+org+"/link-invites", `{"role":"read"}`).Expect(http.StatusCreated).String("id")
	victim.Do("PATCH", "/v1/orgs/"+org, `{"inviteLinks":false}`).Expect(http.StatusOK)
	specSrc := newSpecSource(t)
	specSlug, specVersion := processedSpec(t, env, victim, org, specSrc.URL+"/v30/openapi.json")
	translation := victim.Do("POST", "/v1/orgs/"+org+"/translations", `{"source":{"space":"`+space+`","language":"en"},"language":"fr"}`).
		Expect(http.StatusCreated).String("id")
	samlProvider := victim.Do("POST", "/v1/orgs/"+org+"/saml", `{"label":"Corp IdP","ssoURL":"https://idp.example/sso"}`).
		Expect(http.StatusCreated).String("id")
	conversation, issue, cluster := ingestedConversation(t, env, victim, org)
	// A private integration of the victim's, installed on its organization,
	// space and site.
	intBase := "/v1/integrations/" + integration
	victim.Do("POST", intBase, publishBody(org, map[string]any{"visibility": "private", "secrets": map[string]string{"K": "v"}})).Expect(http.StatusOK)
	inst := victim.Do("POST", intBase+"/installations", `{"organization":"`+org+`"}`).Expect(http.StatusCreated).String("id")
	victim.Do("POST", intBase+"/installations/"+inst+"/spaces", `{"space":"`+space+`"}`).Expect(http.StatusCreated)
	victim.Do("POST", intBase+"/installations/"+inst+"/sites", `{"site":"`+site+`"}`).Expect(http.StatusCreated)
	event := victim.Do("GET", intBase+"/events", nil).Expect(http.StatusOK).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)

	ids := map[string]string{
		"organizationId": org, "spaceId": space, "siteId": site, "siteSectionId": sectionID,
		"siteSectionGroupId": group, "siteSpaceId": siteSpaceID, "userId": victim.ID, "teamId": team, "inviteId": invite, "collectionId": collection,
		"pageId": page, "pagePath": pagePath, "revisionId": revision, "changeRequestId": cr, "fileId": file,
		"commentId": comment, "commentReplyId": reply, "crCommentId": crComment, "crCommentReplyId": crReply,
		"specSlug": specSlug, "versionId": specVersion, "translationId": translation, "samlProviderId": samlProvider,
		"reviewId": review, "integrationName": integration, "installationId": inst, "eventId": event,
		"conversationId": conversation, "issueId": issue, "clusterId": cluster, "shareLinkId": shareLink, "siteRedirectId": redirect,
		"publishedURL": publishedURL,
	}
	// Bodies that would be valid for the victim, so a 400 cannot hide a leak.
	bodies := map[string]string{
		"resolvePublishedContentByUrl":        `{"url":"` + publishedURL + `/` + pagePath + `"}`,
		"updateOrganizationById":              `{"title":"Pwned"}`,
		"updateOrganizationAgentInstructions": `{"instructions":{"object":"document","data":{},"nodes":[]}}`,
		"createSpace":                         `{"title":"Planted"}`,
		"updateSpaceById":                     `{"title":"Pwned"}`,
		"createSite":                          `{"title":"Planted"}`,
		"updateSiteById":                      `{"title":"Pwned"}`,
		"updateSiteAdaptiveSchema":            `{"jsonSchema":{"type":"object","properties":{},"additionalProperties":false}}`,
		"sortSiteStructure":                   `{"item":{"type":"site-section","id":"` + sectionID + `"}}`,
		"addSectionGroupToSite":               `{"title":"Planted"}`,
		"updateSiteSectionGroupById":          `{"title":"Pwned"}`,
		"moveSiteSectionGroup":                `{}`,
		"addSectionToGroup":                   `{"sectionId":"` + sectionID + `"}`,
		"addSectionToSite":                    `{"spaceId":"` + space + `","title":"Planted"}`,
		"updateSiteSectionById":               `{"title":"Pwned"}`,
		"moveSiteSection":                     `{}`,
		"addSpaceToSite":                      `{"spaceId":"` + space + `"}`,
		"updateSiteSpaceById":                 `{"path":"pwned"}`,
		"moveSiteSpace":                       `{}`,
		"updateSiteCustomizationById":         siteCustomizationBody,
		"overrideSiteSpaceCustomizationById":  siteSpaceOverrideBody,
		"createSiteShareLink":                 `{"name":"Planted"}`,
		"searchSiteContent":                   `{"query":"hello","scope":{"mode":"all"}}`,
		"updateSiteShareLinkById":             `{"active":false}`,
		"createSiteRedirect":                  `{"source":"/planted","destination":{"kind":"url","url":"https://eve.example/"}}`,
		"updateSiteRedirectById":              `{"destination":{"kind":"url","url":"https://eve.example/"}}`,
		"updateSitePublishingAuthById":        `{"backend":"custom","fallbackURL":"https://eve.example/login"}`,
		"updateMemberInOrganizationById":      `{"role":"read"}`,
		"createOrganizationTeam":              `{"title":"Planted"}`,
		"updateTeamInOrganizationById":        `{"title":"Pwned"}`,
		"createOrganizationInvite":            `{"role":"admin"}`,
		"createCollection":                    `{"title":"Planted"}`,
		"createChangeRequest":                 `{"subject":"Planted"}`,
		"postCommentInSpace":                  `{"body":{"markdown":"Planted"}}`,
		"postCommentInChangeRequest":          `{"body":{"markdown":"Planted"}}`,
		"updateCommentInSpace":                `{"resolved":true}`,
		"updateCommentInChangeRequest":        `{"resolved":true}`,
		"postCommentReplyInSpace":             `{"body":{"markdown":"Planted"}}`,
		"postCommentReplyInChangeRequest":     `{"body":{"markdown":"Planted"}}`,
		"updateCommentReplyInSpace":           `{"body":{"markdown":"Pwned"}}`,
		"updateCommentReplyInChangeRequest":   `{"body":{"markdown":"Pwned"}}`,
		"importGitRepository":                 `{"url":"file:///tmp/planted.git","ref":"refs/heads/main"}`,
		"exportToGitRepository":               `{"url":"file:///tmp/stolen.git","ref":"refs/heads/main","commitMessage":"Stolen"}`,
		"updateChangeRequestById":             `{"subject":"Pwned"}`,
		"updateCollectionById":                `{"title":"Pwned"}`,
		"moveCollection":                      `{"parent":null,"position":{"before":{"type":"space","space":"` + space + `"}}}`,
		"transferCollection":                  `{"organization":"` + eveOrg + `"}`,
		"moveSpace":                           `{"parent":"` + collection + `"}`,
		"inviteToSpace":                       `{"role":"admin","users":["` + eve.ID + `"]}`,
		"inviteToCollection":                  `{"role":"admin","users":["` + eve.ID + `"]}`,
		"updateUserPermissionInSpace":         `{"role":"admin"}`,
		"updateTeamPermissionInSpace":         `{"role":"admin"}`,
		"updateUserPermissionInCollection":    `{"role":"admin"}`,
		"updateTeamPermissionInCollection":    `{"role":"admin"}`,
		"addMemberToOrganizationTeamById":     `{"role":"owner"}`,
		"updateMembersInOrganizationTeam":     `{"add":["` + eve.ID + `"]}`,
		"transferSpace":                       `{"organization":"` + eveOrg + `"}`,
		"updateOrganizationInviteById":        `{"role":"admin"}`,
		"createOpenAPISpec":                   `{"slug":"planted","source":{"url":"` + specSrc.URL + `/v30/openapi.json"}}`,
		"createTranslation":                   `{"source":{"space":"` + space + `","language":"en"},"language":"de"}`,
		"updateTranslation":                   `{"instructions":{"object":"document","data":{},"nodes":[]}}`,
		"createOrganizationSAMLProvider":      `{"label":"Planted","ssoURL":"https://evil.example/sso"}`,
		"updateOrganizationSAMLProvider":      `{"ssoURL":"https://evil.example/sso"}`,
		"ingestConversation":                  `{"id":"conv-1","subject":"Pwned","parts":[]}`,
		"createOrUpdateOpenAPISpecBySlug":     `{"source":{"url":"` + specSrc.URL + `/v31/openapi.yaml"}}`,
		"updateOpenAPISpecBySlug":             `{"visibility":"public"}`,
		"submitChangeRequestReview":           `{"status":"approved"}`,
		"applyTemplateToSpace":                `{"id":"api-reference","changeRequestId":"` + cr + `"}`,
		"requestReviewersForChangeRequest":    `{"users":["` + victim.ID + `"]}`,
		"publishIntegration":                  `{"title":"Pwned","description":"x","script":"x","scopes":[],"organization":"` + eveOrg + `"}`,
		"installIntegration":                  `{"organization":"` + eveOrg + `"}`,
		"updateIntegrationInstallation":       `{"configuration":{"pwned":true}}`,
		"installIntegrationOnSpace":           `{"space":"` + space2 + `"}`,
		"updateIntegrationSpaceInstallation":  `{"configuration":{"pwned":true}}`,
		"installIntegrationOnSite":            `{"site":"` + site + `"}`,
		"updateIntegrationSiteInstallation":   `{"configuration":{"pwned":true}}`,
		"setIntegrationDevelopmentMode":       `{"tunnelUrl":"https://eve.example/hook","all":true}`,
	}
	snapshot := func() string {
		var b strings.Builder
		for _, p := range []string{"/v1/orgs/" + org, "/v1/orgs/" + org + "/agent-instructions", "/v1/orgs/" + org + "/spaces",
			"/v1/spaces/" + space, "/v1/orgs/" + org + "/sites", sitePath + "/published", sitePath + "/adaptive-schema",
			sitePath + "/section-groups", sitePath + "/sections", sitePath + "/site-spaces",
			sitePath + "/share-links", sitePath + "/publishing/auth", sitePath + "/redirects", sitePath + "/redirect?source=/old-page",
			"/v1/orgs/" + org + "/members", "/v1/orgs/" + org + "/teams", "/v1/orgs/" + org + "/link-invites",
			"/v1/orgs/" + org + "/collections", "/v1/collections/" + collection + "/spaces",
			"/v1/spaces/" + space + "/permissions/teams", "/v1/collections/" + collection + "/permissions/teams",
			"/v1/spaces/" + space + "/permissions/aggregate", "/v1/spaces/" + space + "/content",
			"/v1/spaces/" + space + "/change-requests/" + cr, "/v1/spaces/" + space + "/change-requests/" + cr + "/content",
			"/v1/spaces/" + space + "/comments/" + comment, "/v1/spaces/" + space + "/change-requests/" + cr + "/comments/" + crComment, "/v1/orgs/" + org + "/teams/" + team + "/members",
			"/v1/orgs/" + org + "/saml", "/v1/orgs/" + org + "/sso",
			"/v1/orgs/" + org + "/openapi", "/v1/orgs/" + org + "/openapi/" + specSlug + "/versions/latest/content",
			"/v1/spaces/" + space + "/change-requests/" + cr + "/reviews", "/v1/spaces/" + space + "/change-requests/" + cr + "/requested-reviewers",
			intBase, intBase + "/installations/" + inst, intBase + "/spaces", intBase + "/sites", intBase + "/events",
			"/v1/orgs/" + org + "/conversations/" + conversation, "/v1/orgs/" + org + "/conversations-clusters/" + cluster} {
			b.Write(victim.Do("GET", p, nil).Expect(http.StatusOK).Body)
		}
		return b.String()
	}
	return &tenantFixture{org: org, ids: ids, bodies: bodies, snapshot: snapshot}
}

// ownData are the routes that act on the caller's own data, not on a
// resource named by id.
var ownData = map[string]bool{
	"getAuthenticatedUser": true, "listOrganizationsForAuthenticatedUser": true, "createOrganization": true,
	"getOrganizationsForEmailDomain": true, "listIntegrations": true,
}

func operationSource(t *testing.T, name string) string {
	t.Helper()
	b, err := restFile("operations/" + name + ".graphql")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// requiredQuery holds the query strings operations cannot do without; a
// {name} in one is the fixture's id of that name (requiredQueryOf).
var requiredQuery = map[string]string{
	"searchSpaceContent":        "?query=hello",
	"searchOrganizationContent": "?query=hello",
	// Every fixture's site redirects from /old-page.
	"getSiteRedirectBySource":  "?source=/old-page",
	"getPublishedContentByUrl": "?url={publishedURL}",
}

// requiredQueryOf is the query string operation op cannot do without, with
// the fixture's ids in it.
func requiredQueryOf(op string, ids map[string]string) string {
	q := requiredQuery[op]
	for name, id := range ids {
		q = strings.ReplaceAll(q, "{"+name+"}", url.QueryEscape(id))
	}
	return q
}

// publishedURLOf is the published address of site of org, as u reads it:
// where its visitors read it (the fixtures' publishedURL).
func publishedURLOf(t *testing.T, u *servertest.User, org, site string) string {
	t.Helper()
	urls := u.Do("GET", "/v1/orgs/"+org+"/sites/"+site, nil).Expect(http.StatusOK).JSON()["urls"].(map[string]any)
	published, _ := urls["published"].(string)
	if published == "" {
		t.Fatalf("site %s has no published address: %v", site, urls)
	}
	return published
}

// postThread posts a comment with a reply on a space (or, with cr, on a
// change request) and returns their ids.
func postThread(t *testing.T, u *servertest.User, space, cr string) (comment, reply string) {
	t.Helper()
	base := "/v1/spaces/" + space
	if cr != "" {
		base += "/change-requests/" + cr
	}
	comment = u.Do("POST", base+"/comments", `{"body":{"markdown":"A thought"}}`).Expect(http.StatusOK).String("id")
	reply = u.Do("POST", base+"/comments/"+comment+"/replies", `{"body":{"markdown":"A reply"}}`).Expect(http.StatusOK).String("id")
	return comment, reply
}

// threadIDs swaps in the change request's comment and reply ids for routes
// under a change request's comments.
func threadIDs(route rest.Route, ids map[string]string) map[string]string {
	if !strings.Contains(route.Path, "change-requests/{changeRequestId}/comments") {
		return ids
	}
	out := map[string]string{}
	for k, v := range ids {
		out[k] = v
	}
	out["commentId"], out["commentReplyId"] = ids["crCommentId"], ids["crCommentReplyId"]
	return out
}
