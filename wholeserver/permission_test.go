package wholeserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi/graph/engine"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/rest"
	"github.com/docsapi/docsapi/store"
)

// personas, from least to most powerful in an organization.
var personas = []string{"outsider", "other-org", "guest", "read", "comment", "edit", "review", "create", "admin"}

// routeNeeds is the least persona each route allows, on content with the
// default levels (inherit everywhere): "anyone" is any authenticated user,
// "member" any member including guests, else an organization role. A route
// without an entry fails TestPermissionMatrix.
var routeNeeds = map[string]string{
	"getAuthenticatedUser": "anyone", "listOrganizationsForAuthenticatedUser": "anyone", "createOrganization": "anyone",
	"getOrganizationsForEmailDomain": "anyone", "getOrganizationInviteLink": "anyone", "joinOrganizationWithInvite": "anyone",

	"getOrganizationById": "member", "joinOrganization": "member", "updateOrganizationMemberLastSeenAt": "member",
	"getOrganizationAgentInstructions": "member", "listSpacesInOrganizationById": "member", "listSites": "member",
	"listCollectionsInOrganizationById": "member",
	"updateOrganizationById":            "admin", "updateOrganizationAgentInstructions": "admin",

	"listMembersInOrganizationById": "read", "getMemberInOrganizationById": "read", "listSpacesForOrganizationMember": "read",
	"listTeamsForOrganizationMember": "read", "updateMemberInOrganizationById": "admin", "removeMemberFromOrganizationById": "admin",
	"setUserAsSSOMemberForOrganization": "admin",

	"listTeamsInOrganizationById": "read", "getTeamInOrganizationById": "read", "listTeamMembersInOrganizationById": "read",
	"createOrganizationTeam": "admin", "updateTeamInOrganizationById": "admin", "removeTeamFromOrganizationById": "admin",
	"addMemberToOrganizationTeamById": "admin", "deleteMemberFromOrganizationTeamById": "admin", "updateMembersInOrganizationTeam": "admin",

	"listOrganizationInviteLinks": "admin", "createOrganizationInvite": "admin", "updateOrganizationInviteById": "admin",
	"deleteOrganizationInviteById": "admin",

	"getCurrentRevision": "read", "listPages": "read", "getPageById": "read", "getPageByPath": "read",
	"applyTemplateToSpace": "edit", "getRevisionById": "read", "listPagesInRevisionById": "read", "getPageInRevisionById": "read", "getPageInRevisionByPath": "read",

	"listChangeRequestsForSpace": "read", "getChangeRequestById": "read", "getRevisionOfChangeRequestById": "read",
	"listPagesInChangeRequest": "read", "getPageInChangeRequestById": "read", "getPageInChangeRequestByPath": "read",
	"listFiles": "read", "getFileById": "read", "listFilesInChangeRequestById": "read", "getFileInChangeRequestById": "read",
	"listFilesInRevisionById": "read", "getFileInRevisionById": "read",
	"listChangeRequestsForOrganization": "member", "getSpaceGitInfo": "read", "getChangeRequestPDF": "read",
	"listCommentsInSpace": "read", "getCommentInSpace": "read", "listCommentRepliesInSpace": "read", "getCommentReplyInSpace": "read",
	"postCommentInSpace": "comment", "updateCommentInSpace": "comment", "postCommentReplyInSpace": "comment", "updateCommentReplyInSpace": "comment",
	"deleteCommentInSpace": "admin", "deleteCommentReplyInSpace": "admin",
	"listCommentsInChangeRequest": "read", "getCommentInChangeRequest": "read", "listCommentRepliesInChangeRequest": "read",
	"getCommentReplyInChangeRequest": "read", "postCommentInChangeRequest": "comment", "updateCommentInChangeRequest": "comment",
	"postCommentReplyInChangeRequest": "comment", "updateCommentReplyInChangeRequest": "comment",
	"deleteCommentInChangeRequest": "admin", "deleteCommentReplyInChangeRequest": "admin",
	"listSpaceLinks": "read", "listPageLinksInSpace": "read", "listSpacePageBacklinks": "read", "listSpaceFileBacklinks": "read",
	"listPageLinksInChangeRequest": "read", "listChangeRequestFileBacklinks": "read", "importGitRepository": "edit", "exportToGitRepository": "edit", "searchSpaceContent": "read", "searchOrganizationContent": "member", "createChangeRequest": "edit", "updateChangeRequestById": "edit",
	"mergeChangeRequest": "edit", "updateChangeRequest": "edit",
	"getReviewsByChangeRequestId": "read", "getChangeRequestReviewById": "read", "submitChangeRequestReview": "review",
	"getRequestedReviewersByChangeRequestId": "read", "requestReviewersForChangeRequest": "edit",
	"removeRequestedReviewerFromChangeRequest": "edit",

	"createSpace": "create", "getSpaceById": "read", "updateSpaceById": "admin", "deleteSpaceById": "admin",
	"duplicateSpace": "create", "restoreSpace": "admin", "moveSpace": "admin", "transferSpace": "admin",

	"createCollection": "create", "getCollectionById": "read", "listSpacesInCollectionById": "read",
	"updateCollectionById": "admin", "deleteCollectionById": "admin", "moveCollection": "admin", "transferCollection": "admin",

	"inviteToSpace": "admin", "listUserPermissionsInSpace": "admin", "updateUserPermissionInSpace": "admin",
	"removeUserFromSpace": "admin", "listTeamPermissionsInSpace": "admin", "updateTeamPermissionInSpace": "admin",
	"removeTeamFromSpace": "admin", "listPermissionsAggregateInSpace": "admin",
	"inviteToCollection": "admin", "listUserPermissionsInCollection": "admin", "updateUserPermissionInCollection": "admin",
	"removeUserFromCollection": "admin", "listTeamPermissionsInCollection": "admin", "updateTeamPermissionInCollection": "admin",
	"removeTeamFromCollection": "admin", "listPermissionsAggregateInCollection": "admin",

	"createSite": "create", "getSiteById": "read", "updateSiteById": "create", "deleteSiteById": "admin",
	"publishSite": "create", "unpublishSite": "create", "getSiteAdaptiveSchema": "read", "updateSiteAdaptiveSchema": "create",
	"listSiteAdaptiveTemplateConditions": "read", "getPublishedContentSite": "read", "searchSiteContent": "read", "getSiteStructure": "read",
	"sortSiteStructure": "create", "listSiteSectionGroups": "read", "addSectionGroupToSite": "create",
	"updateSiteSectionGroupById": "create", "deleteSiteSectionGroupById": "create", "moveSiteSectionGroup": "create",
	"addSectionToGroup": "create", "removeSectionFromGroup": "create", "listSiteSections": "read", "addSectionToSite": "create",
	"updateSiteSectionById": "create", "deleteSiteSectionById": "create", "moveSiteSection": "create",
	"listSiteSpaces": "read", "addSpaceToSite": "create", "updateSiteSpaceById": "create", "deleteSiteSpaceById": "create",
	"moveSiteSpace": "create", "getSiteCustomizationById": "admin", "updateSiteCustomizationById": "admin",
	"getSiteSpaceCustomizationById": "admin", "overrideSiteSpaceCustomizationById": "admin", "deleteSiteSpaceCustomizationById": "admin",
	"resolvePublishedContentByUrl": "read", "getPublishedContentByUrl": "read", "getPageDocumentInRevisionById": "read",
	"listSiteShareLinks": "create", "createSiteShareLink": "create", "updateSiteShareLinkById": "create", "deleteSiteShareLinkById": "create",
	"getSitePublishingAuthById": "create", "updateSitePublishingAuthById": "create", "regenerateSitePublishingAuthById": "create",
	"listSiteRedirects": "create", "createSiteRedirect": "create", "updateSiteRedirectById": "create", "deleteSiteRedirectById": "create",
	"getSiteRedirectBySource": "create",

	"listOpenAPISpecs": "read", "getOpenAPISpecBySlug": "read", "listOpenAPISpecVersions": "read",
	"getLatestOpenAPISpecVersion": "read", "getLatestOpenAPISpecVersionContent": "read", "getOpenAPISpecVersionById": "read",
	"getOpenAPISpecVersionContentById": "read", "createOpenAPISpec": "create", "createOrUpdateOpenAPISpecBySlug": "create",
	"updateOpenAPISpecBySlug": "create", "deleteOpenAPISpecBySlug": "create",
	"listTranslations": "read", "getTranslation": "read", "createTranslation": "create", "updateTranslation": "create",
	"deleteTranslation": "create", "runTranslation": "create",
	"listSAMLProvidersInOrganizationById": "admin", "createOrganizationSAMLProvider": "admin",
	"getOrganizationSAMLProviderById": "admin", "updateOrganizationSAMLProvider": "admin",
	"deleteOrganizationSAMLProvider": "admin", "listSSOProviderLoginsInOrganization": "member",
	"listConversations": "read", "ingestConversation": "admin", "getConversationById": "read",
	"listConversationsIssues": "read", "getConversationIssueById": "read",
	"listConversationsIssuesClusters": "read", "getConversationsIssuesCluster": "read",
	"listIntegrations": "anyone", "getIntegrationByName": "member", "publishIntegration": "admin", "unpublishIntegration": "admin",
	"listIntegrationInstallations": "member", "installIntegration": "admin", "getIntegrationInstallationById": "admin",
	"updateIntegrationInstallation": "admin", "uninstallIntegration": "admin",
	"listIntegrationInstallationSpaces": "admin", "installIntegrationOnSpace": "admin", "getIntegrationSpaceInstallation": "admin",
	"updateIntegrationSpaceInstallation": "admin", "uninstallIntegrationFromSpace": "admin",
	"listIntegrationInstallationSites": "admin", "installIntegrationOnSite": "admin", "getIntegrationSiteInstallation": "admin",
	"updateIntegrationSiteInstallation": "admin", "uninstallIntegrationFromSite": "admin",
	"listIntegrationSpaceInstallations": "member", "listIntegrationSiteInstallations": "member", "listIntegrationEvents": "member",
	"getIntegrationEvent": "admin", "setIntegrationDevelopmentMode": "admin", "disableIntegrationDevelopmentMode": "admin",
}

// matrixFixture is an organization with content of every kind and a user of
// every persona, made afresh for each route.
type matrixFixture struct {
	ids    map[string]string
	bodies map[string]string
	users  map[string]*servertest.User
}

func newMatrixFixture(t *testing.T, env *servertest.Env) *matrixFixture {
	t.Helper()
	users := map[string]*servertest.User{}
	for _, p := range personas {
		users[p] = env.NewUser(p)
	}
	owner := env.NewUser("Owner")
	org := owner.NewOrg("Acme")
	users["other-org"].NewOrg("Elsewhere")
	for _, p := range personas[2:] {
		role := store.MemberRole(p)
		if p == "guest" {
			role = ""
		}
		users[p].Join(org, role)
	}
	// Everyone administers a second organization, the destination of transfers.
	dest := owner.NewOrg("Destination")
	for _, p := range personas {
		if p != "outsider" {
			users[p].Join(dest, store.RoleAdmin)
		}
	}
	target := env.NewUser("Target")
	target.Join(org, store.RoleRead)

	do := func(method, path, body string, status int) *servertest.Response {
		t.Helper()
		return owner.Do(method, path, body).Expect(status)
	}
	space := do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Docs"}`, http.StatusCreated).String("id")
	published := do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Published"}`, http.StatusCreated).String("id")
	other := do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Other"}`, http.StatusCreated).String("id")
	collection := do("POST", "/v1/orgs/"+org+"/collections", `{"title":"Handbooks"}`, http.StatusCreated).String("id")
	sitePath := "/v1/orgs/" + org + "/sites/"
	site := do("POST", "/v1/orgs/"+org+"/sites", `{"title":"Site","spaces":["`+published+`"]}`, http.StatusCreated).String("id")
	sitePath += site
	sec := do("POST", sitePath+"/sections", `{"spaceId":"`+other+`","title":"Guides"}`, http.StatusCreated)
	section := sec.String("id")
	siteSpace := sec.JSON()["siteSpaces"].([]any)[0].(map[string]any)["id"].(string)
	sec2 := do("POST", sitePath+"/sections", `{"spaceId":"`+published+`","title":"More"}`, http.StatusCreated).String("id")
	group := do("POST", sitePath+"/section-groups", `{"title":"Group","sections":["`+section+`"]}`, http.StatusCreated).String("id")
	do("PUT", sitePath+"/adaptive-schema", `{"jsonSchema":{"type":"object","properties":{"beta":{"type":"boolean","description":"b"}},"additionalProperties":false}}`, http.StatusOK)
	do("POST", sitePath+"/publish", "", http.StatusOK)
	publishedURL := publishedURLOf(t, users["admin"], org, site)
	shareLink := do("POST", sitePath+"/share-links", `{"name":"Partners"}`, http.StatusCreated).String("id")
	redirect := do("POST", sitePath+"/redirects", `{"source":"/old-page","destination":{"kind":"site-space","siteSpaceId":"`+siteSpace+`"}}`,
		http.StatusCreated).String("id")
	team := do("PUT", "/v1/orgs/"+org+"/teams", `{"title":"Core","members":["`+target.ID+`"]}`, http.StatusCreated).String("id")
	do("POST", "/v1/spaces/"+space+"/permissions", `{"role":"read","users":["`+target.ID+`"],"teams":["`+team+`"]}`, http.StatusNoContent)
	do("POST", "/v1/collections/"+collection+"/permissions", `{"role":"read","users":["`+target.ID+`"],"teams":["`+team+`"]}`, http.StatusNoContent)
	invite := do("POST", "/v1/orgs/"+org+"/link-invites", `{"role":"read"}`, http.StatusCreated).String("id")
	file := uploadedFile(t, owner, space, "", "notes.txt", []byte("notes"))
	repo := bareRepo(t)
	pushFiles(t, repo, map[string]string{"README.md": "# Hello\n", "SUMMARY.md": "* [Hello](README.md)\n"})
	page, pagePath, revision := createPage(t, owner, space, "Getting started", "# Hello")
	cr := openChangeRequest(t, owner, space, "Edit the intro", page)
	comment, reply := postThread(t, owner, space, "")
	crComment, crReply := postThread(t, owner, space, cr)
	specSrc := newSpecSource(t)
	specSlug, specVersion := processedSpec(t, env, owner, org, specSrc.URL+"/v30/openapi.json")
	translation := do("POST", "/v1/orgs/"+org+"/translations", `{"source":{"space":"`+space+`","language":"en"},"language":"fr"}`, http.StatusCreated).String("id")
	samlProvider := do("POST", "/v1/orgs/"+org+"/saml", `{"label":"Corp IdP"}`, http.StatusCreated).String("id")
	review := do("POST", "/v1/spaces/"+space+"/change-requests/"+cr+"/reviews", `{"status":"approved"}`, http.StatusCreated).String("id")
	conversation, issue, cluster := ingestedConversation(t, env, owner, org)
	// A private integration of the organization, installed on it, on the
	// space and on the site (names are global: one per fixture).
	integration := "int-" + org
	do("POST", "/v1/integrations/"+integration, mustJSON(t, publishBody(org, map[string]any{"visibility": "private"})), http.StatusOK)
	inst := do("POST", "/v1/integrations/"+integration+"/installations", `{"organization":"`+org+`"}`, http.StatusCreated).String("id")
	do("POST", "/v1/integrations/"+integration+"/installations/"+inst+"/spaces", `{"space":"`+space+`"}`, http.StatusCreated)
	do("POST", "/v1/integrations/"+integration+"/installations/"+inst+"/sites", `{"site":"`+site+`"}`, http.StatusCreated)
	event := do("GET", "/v1/integrations/"+integration+"/events", "", http.StatusOK).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)

	return &matrixFixture{
		users: users,
		ids: map[string]string{
			"organizationId": org, "spaceId": space, "siteId": site, "siteSectionId": section, "siteSectionGroupId": group,
			"siteSpaceId": siteSpace, "userId": target.ID, "teamId": team, "inviteId": invite, "collectionId": collection,
			"emailDomain": "example.com", "pageId": page, "pagePath": pagePath, "revisionId": revision, "changeRequestId": cr, "fileId": file,
			"commentId": comment, "commentReplyId": reply, "crCommentId": crComment, "crCommentReplyId": crReply,
			"specSlug": specSlug, "versionId": specVersion, "translationId": translation, "samlProviderId": samlProvider,
			"reviewId": review, "integrationName": integration, "installationId": inst, "eventId": event,
			"conversationId": conversation, "issueId": issue, "clusterId": cluster, "shareLinkId": shareLink, "siteRedirectId": redirect,
			"publishedURL": publishedURL,
		},
		bodies: map[string]string{
			"resolvePublishedContentByUrl":        `{"url":"` + publishedURL + `"}`,
			"createTranslation":                   `{"source":{"space":"` + space + `","language":"en"},"language":"de"}`,
			"updateTranslation":                   `{"instructions":{"object":"document","data":{},"nodes":[]}}`,
			"createOrganizationSAMLProvider":      `{"label":"New"}`,
			"updateOrganizationSAMLProvider":      `{"label":"Renamed"}`,
			"ingestConversation":                  `[{"id":"conv-2","parts":[{"type":"message","role":"user","body":"Why?"}]}]`,
			"publishIntegration":                  mustJSON(t, publishBody(org, map[string]any{"visibility": "private"})),
			"installIntegration":                  `{"organization":"` + org + `"}`,
			"updateIntegrationInstallation":       `{"configuration":{"channel":"x"}}`,
			"installIntegrationOnSpace":           `{"space":"` + other + `"}`,
			"updateIntegrationSpaceInstallation":  `{"externalIds":["a"]}`,
			"installIntegrationOnSite":            `{"siteId":"` + site + `"}`,
			"updateIntegrationSiteInstallation":   `{"configuration":{}}`,
			"setIntegrationDevelopmentMode":       `{"tunnelUrl":"https://example.com/hook"}`,
			"createOrganization":                  `{"title":"Mine"}`,
			"createChangeRequest":                 `{"subject":"More"}`,
			"postCommentInSpace":                  `{"body":{"markdown":"Mine"}}`,
			"postCommentInChangeRequest":          `{"body":{"markdown":"Mine"}}`,
			"updateCommentInSpace":                `{"addedReactions":["+1"]}`,
			"updateCommentInChangeRequest":        `{"addedReactions":["+1"]}`,
			"postCommentReplyInSpace":             `{"body":{"markdown":"Mine"}}`,
			"postCommentReplyInChangeRequest":     `{"body":{"markdown":"Mine"}}`,
			"updateCommentReplyInSpace":           `{"addedReactions":["+1"]}`,
			"updateCommentReplyInChangeRequest":   `{"addedReactions":["+1"]}`,
			"importGitRepository":                 `{"url":"` + repo + `","ref":"refs/heads/main"}`,
			"exportToGitRepository":               `{"url":"` + bareRepo(t) + `","ref":"refs/heads/main","commitMessage":"Export"}`,
			"updateChangeRequestById":             `{"subject":"Renamed"}`,
			"updateOrganizationById":              `{"title":"Renamed"}`,
			"updateOrganizationAgentInstructions": `{"instructions":{"object":"document","data":{},"nodes":[]}}`,
			"updateMemberInOrganizationById":      `{"role":"edit"}`,
			"createOrganizationTeam":              `{"title":"New"}`,
			"updateTeamInOrganizationById":        `{"title":"Renamed"}`,
			"addMemberToOrganizationTeamById":     `{"role":"owner"}`,
			"updateMembersInOrganizationTeam":     `{"memberships":{"` + target.ID + `":{"role":"owner"}}}`,
			"createOrganizationInvite":            `{"role":"read"}`,
			"updateOrganizationInviteById":        `{"role":"comment"}`,
			"createSpace":                         `{"title":"New"}`,
			"updateSpaceById":                     `{"title":"Renamed"}`,
			"moveSpace":                           `{"parent":"` + collection + `"}`,
			"transferSpace":                       `{"organization":"` + dest + `"}`,
			"createCollection":                    `{"title":"New"}`,
			"updateCollectionById":                `{"title":"Renamed"}`,
			"moveCollection":                      `{"parent":null,"position":{"before":{"type":"space","space":"` + space + `"}}}`,
			"transferCollection":                  `{"organization":"` + dest + `"}`,
			"inviteToSpace":                       `{"role":"edit","users":["` + target.ID + `"]}`,
			"updateUserPermissionInSpace":         `{"role":"edit"}`,
			"updateTeamPermissionInSpace":         `{"role":"edit"}`,
			"inviteToCollection":                  `{"role":"edit","users":["` + target.ID + `"]}`,
			"updateUserPermissionInCollection":    `{"role":"edit"}`,
			"updateTeamPermissionInCollection":    `{"role":"edit"}`,
			"createSite":                          `{"title":"New"}`,
			"updateSiteById":                      `{"title":"Renamed"}`,
			"updateSiteAdaptiveSchema":            `{"jsonSchema":{"type":"object","properties":{},"additionalProperties":false}}`,
			"sortSiteStructure":                   `{"item":{"type":"site-section","id":"` + sec2 + `"},"position":{"before":{"type":"site-section-group","id":"` + group + `"}}}`,
			"addSectionGroupToSite":               `{"title":"New"}`,
			"updateSiteSectionGroupById":          `{"title":"Renamed"}`,
			"moveSiteSectionGroup":                `{"position":{"after":{"type":"site-section","id":"` + sec2 + `"}}}`,
			"addSectionToGroup":                   `{"sectionId":"` + sec2 + `"}`,
			"addSectionToSite":                    `{"spaceId":"` + space + `","title":"New"}`,
			"updateSiteSectionById":               `{"title":"Renamed"}`,
			"moveSiteSection":                     `{"position":{"after":{"type":"site-section","siteSection":"` + sec2 + `"}}}`,
			"addSpaceToSite":                      `{"spaceId":"` + space + `","sectionId":"` + section + `"}`,
			"updateSiteSpaceById":                 `{"path":"renamed"}`,
			"moveSiteSpace":                       `{}`,
			"updateSiteCustomizationById":         siteCustomizationBody,
			"overrideSiteSpaceCustomizationById":  siteSpaceOverrideBody,
			"createSiteShareLink":                 `{"name":"Press"}`,
			"searchSiteContent":                   `{"query":"hello","scope":{"mode":"default"}}`,
			"updateSiteShareLinkById":             `{"active":false}`,
			"createSiteRedirect":                  `{"source":"/press","destination":{"kind":"site-section","siteSectionId":"` + section + `"}}`,
			"updateSiteRedirectById":              `{"destination":{"kind":"site-section","siteSectionId":"` + section + `"}}`,
			"updateSitePublishingAuthById":        `{"backend":"custom","fallbackURL":"https://login.example.com/docs"}`,
			"createOpenAPISpec":                   `{"slug":"new-spec","source":{"url":"` + specSrc.URL + `/v30/openapi.json"}}`,
			"createOrUpdateOpenAPISpecBySlug":     `{"source":{"url":"` + specSrc.URL + `/v31/openapi.yaml"}}`,
			"updateOpenAPISpecBySlug":             `{"visibility":"public"}`,
			"submitChangeRequestReview":           `{"status":"changes-requested"}`,
			"applyTemplateToSpace":                `{"id":"api-reference"}`,
			"requestReviewersForChangeRequest":    `{"users":["` + users["review"].ID + `"]}`,
		},
	}
}

// For each route, the personas below its threshold are refused (404 for
// those outside the organization, 403 or 404 for members; a deletion of
// what they may not read answers as one of nothing, 204), and the persona
// at the threshold succeeds. Every route gets a fresh organization.
//
// The server runs trusted documents and a rate budget: the REST surface
// works the same under both (its documents are the server's own; the
// budget, never reached here, only adds headers to every answer).
func TestPermissionMatrix(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{TrustedDocuments: fixtureDocuments(t), RateLimit: 1 << 40, RateWindow: time.Hour})
	for _, route := range rest.Routes {
		t.Run(route.Operation, func(t *testing.T) {
			t.Parallel()
			need, ok := routeNeeds[route.Operation]
			if !ok {
				t.Fatalf("no permission matrix entry for %s: add one to routeNeeds", route.Operation)
			}
			threshold := slices.Index(personas, need)
			switch need {
			case "anyone":
				threshold = 0
			case "member":
				threshold = slices.Index(personas, "guest")
			}
			f := newMatrixFixture(t, env)
			path := strings.ReplaceAll(route.Path, "...}", "}") // wildcards take a value like any parameter
			for name, id := range threadIDs(route, f.ids) {
				path = strings.ReplaceAll(path, "{"+name+"}", id)
			}
			path += requiredQueryOf(route.Operation, f.ids)
			var body any
			if route.Method != "GET" && route.Method != "DELETE" {
				if b, ok := f.bodies[route.Operation]; ok {
					body = b
				} else if strings.Contains(operationSource(t, route.Operation), "$input") {
					t.Fatalf("no body for %s: add one to the fixture", route.Operation)
				}
			}
			for i, p := range personas[:threshold+1] {
				res := f.users[p].Do(route.Method, path, body)
				if res.Header.Get("X-RateLimit-Remaining") == "" {
					t.Errorf("%s to %s: %d without X-RateLimit-Remaining", route.Operation, p, res.Status)
				}
				switch {
				case i == threshold:
					if res.Status >= 300 {
						t.Errorf("%s (needs %s) refused to %s: %d %s", route.Operation, need, p, res.Status, res.Body)
					}
				case route.Method == "DELETE" && res.Status == http.StatusNoContent:
					// A deletion of what the persona may not read answers
					// as one of nothing (204); it deleted nothing.
					if f.users["admin"].Do("GET", path, nil).Status != http.StatusOK {
						t.Errorf("%s (needs %s) to %s: 204, and the object is gone", route.Operation, need, p)
					}
				case i < 2: // outside the organization
					if res.Status != http.StatusNotFound {
						t.Errorf("%s (needs %s) to %s: %d, want 404: %s", route.Operation, need, p, res.Status, res.Body)
					}
				default:
					if res.Status != http.StatusForbidden && res.Status != http.StatusNotFound {
						t.Errorf("%s (needs %s) to %s: %d, want 403 or 404: %s", route.Operation, need, p, res.Status, res.Body)
					}
				}
			}
		})
	}
}

// Default levels and grants decide who may do what with content, and a
// change to them is seen by the very next request.
func TestInheritanceAndGrants(t *testing.T) {
	t.Parallel()
	env := servertest.New(t)
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	bob, gus, carol := env.NewUser("Bob"), env.NewUser("Gus"), env.NewUser("Carol")
	bob.Join(org, store.RoleEdit)
	gus.Join(org, "")
	carol.Join(org, store.RoleRead)
	coll := alice.Do("POST", "/v1/orgs/"+org+"/collections", `{"title":"Handbook"}`).Expect(http.StatusCreated).String("id")
	alice.Do("PATCH", "/v1/collections/"+coll, `{"defaultLevel":"read"}`).Expect(http.StatusOK)
	space := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Policies","parent":"`+coll+`"}`).Expect(http.StatusCreated).String("id")
	perms := func(u *servertest.User) map[string]any {
		t.Helper()
		return u.Do("GET", "/v1/spaces/"+space, nil).Expect(http.StatusOK).JSON()["permissions"].(map[string]any)
	}
	// Readable by a guest; writable by nobody without a grant, not even an
	// organization editor.
	for _, u := range []*servertest.User{gus, bob, carol} {
		if p := perms(u); p["view"] != true || p["edit"] != false {
			t.Errorf("%s's permissions under a read default: %v", u.Email, p)
		}
	}
	if p := perms(alice); p["admin"] != true {
		t.Errorf("the admin's permissions: %v", p)
	}

	// A team grant of edit lets its members edit; leaving the team takes it
	// away on the next request.
	team := alice.Do("PUT", "/v1/orgs/"+org+"/teams", `{"title":"Writers","members":["`+carol.ID+`"]}`).Expect(http.StatusCreated).String("id")
	alice.Do("POST", "/v1/spaces/"+space+"/permissions", `{"role":"edit","teams":["`+team+`"]}`).Expect(http.StatusNoContent)
	if p := perms(carol); p["edit"] != true {
		t.Errorf("a team member after an edit grant: %v", p)
	}
	alice.Do("DELETE", "/v1/orgs/"+org+"/teams/"+team+"/members/"+carol.ID, nil).Expect(http.StatusResetContent)
	if p := perms(carol); p["edit"] != false {
		t.Errorf("after leaving the team: %v", p)
	}
	alice.Do("DELETE", "/v1/orgs/"+org+"/teams/"+team+"/members/"+carol.ID, nil).Expect(http.StatusNoContent)

	// A guest level hides the content from everyone but admins and grantees.
	alice.Do("PATCH", "/v1/collections/"+coll, `{"defaultLevel":null}`).Expect(http.StatusOK)
	for _, u := range []*servertest.User{gus, bob, carol} {
		u.Do("GET", "/v1/spaces/"+space, nil).Expect(http.StatusNotFound)
		u.Do("GET", "/v1/collections/"+coll, nil).Expect(http.StatusNotFound)
		if n := u.Do("GET", "/v1/orgs/"+org+"/spaces", nil).Expect(http.StatusOK).JSON()["count"]; n != 0.0 {
			t.Errorf("%s lists %v hidden spaces", u.Email, n)
		}
	}
	// A grant on the collection reaches the space in it.
	alice.Do("POST", "/v1/collections/"+coll+"/permissions", `{"role":"comment","users":["`+gus.ID+`"]}`).Expect(http.StatusNoContent)
	if p := perms(gus); p["comment"] != true || p["edit"] != false {
		t.Errorf("a guest with a comment grant on the collection: %v", p)
	}
	var agg struct {
		Items []struct {
			Permission string
			User       struct{ ID string }
		}
	}
	alice.Do("GET", "/v1/spaces/"+space+"/permissions/aggregate", nil).Expect(http.StatusOK).Decode(&agg)
	got := map[string]string{}
	for _, it := range agg.Items {
		got[it.User.ID] = it.Permission
	}
	if len(got) != 2 || got[alice.ID] != "admin" || got[gus.ID] != "comment" {
		t.Errorf("everyone with a role: %v", got)
	}

	// Bad grants change nothing.
	for _, body := range []string{`{"users":["` + bob.ID + `"]}`, `{"role":null,"users":["` + bob.ID + `"]}`, `{"role":"read"}`, `{"role":"owner","users":["` + bob.ID + `"]}`} {
		alice.Do("POST", "/v1/spaces/"+space+"/permissions", body).Expect(http.StatusBadRequest).ErrorMessage()
	}
	alice.Do("POST", "/v1/spaces/"+space+"/permissions", `{"role":"read","users":["nobody"]}`).Expect(http.StatusNotFound).ErrorMessage()
	alice.Do("PATCH", "/v1/spaces/"+space+"/permissions/users/"+bob.ID, `{"role":"read"}`).Expect(http.StatusNotFound).ErrorMessage()
	bob.Do("GET", "/v1/spaces/"+space, nil).Expect(http.StatusNotFound)

	// An in-collection space is readable by whoever can read its collection,
	// whatever its own level. (No API sets this visibility yet: the row is
	// changed directly.)
	open := alice.Do("POST", "/v1/orgs/"+org+"/collections", `{"title":"Open"}`).Expect(http.StatusCreated).String("id")
	alice.Do("PATCH", "/v1/collections/"+open, `{"defaultLevel":"read"}`).Expect(http.StatusOK)
	closed := alice.Do("POST", "/v1/orgs/"+org+"/spaces", `{"title":"Closed","parent":"`+open+`"}`).Expect(http.StatusCreated).String("id")
	alice.Do("PATCH", "/v1/spaces/"+closed, `{"defaultLevel":null}`).Expect(http.StatusOK)
	bob.Do("GET", "/v1/spaces/"+closed, nil).Expect(http.StatusNotFound)
	if _, err := env.DB.NewUpdate().Table("spaces").Set("visibility = 'in-collection'").Where("id = ?", closed).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p := bob.Do("GET", "/v1/spaces/"+closed, nil).Expect(http.StatusOK).JSON()["permissions"].(map[string]any); p["view"] != true || p["edit"] != false {
		t.Errorf("an in-collection space: %v", p)
	}

	// Grants are listed, changed and removed.
	alice.Do("PATCH", "/v1/collections/"+coll+"/permissions/users/"+gus.ID, `{"role":"edit"}`).Expect(http.StatusNoContent)
	var users struct {
		Items []struct{ Permission string }
	}
	alice.Do("GET", "/v1/collections/"+coll+"/permissions/users", nil).Expect(http.StatusOK).Decode(&users)
	if len(users.Items) != 1 || users.Items[0].Permission != "edit" {
		t.Errorf("user grants: %+v", users)
	}
	alice.Do("DELETE", "/v1/collections/"+coll+"/permissions/users/"+gus.ID, nil).Expect(http.StatusResetContent)
	alice.Do("DELETE", "/v1/collections/"+coll+"/permissions/users/"+gus.ID, nil).Expect(http.StatusNoContent)
	gus.Do("GET", "/v1/spaces/"+space, nil).Expect(http.StatusNotFound)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The GraphQL documents of the fixtures' helpers: a test front end's, which
// the tests run under trusted documents register (fixtureDocuments).
const (
	createPageDocument = `mutation($s: ID!, $in: CreatePageInput!) { createPage(spaceId: $s, input: $in) { id path } }`
	updatePageDocument = `mutation($s: ID!, $cr: ID, $p: ID!) { updatePage(spaceId: $s, changeRequestId: $cr, pageId: $p, input: {markdown: "# Hello, edited"}) { id } }`
)

// fixtureDocuments writes a manifest (GraphQL Code Generator's shape) of
// the fixtures' GraphQL documents, for a server running trusted documents.
func fixtureDocuments(t *testing.T) string {
	t.Helper()
	docs := map[string]string{}
	for _, doc := range []string{createPageDocument, updatePageDocument, uploadFileDocument} {
		docs[engine.DocumentHash(doc)] = doc
	}
	path := filepath.Join(t.TempDir(), "persisted-documents.json")
	if err := os.WriteFile(path, []byte(mustJSON(t, docs)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// createPage adds a page to a space through GraphQL and returns its id,
// path and the space's new revision.
func createPage(t *testing.T, u *servertest.User, space, title, markdown string) (id, path, revision string) {
	t.Helper()
	out := u.GraphQL(createPageDocument,
		map[string]any{"s": space, "in": map[string]any{"title": title, "markdown": markdown}})
	if len(out.Errors) > 0 {
		t.Fatalf("createPage: %+v", out.Errors)
	}
	var data struct {
		CreatePage struct{ ID, Path string }
	}
	if err := json.Unmarshal(out.Data, &data); err != nil {
		t.Fatal(err)
	}
	revision = u.Do("GET", "/v1/spaces/"+space+"/content", nil).Expect(http.StatusOK).String("id")
	return data.CreatePage.ID, data.CreatePage.Path, revision
}

// openChangeRequest opens a change request on a space that edits page, and
// returns its id.
func openChangeRequest(t *testing.T, u *servertest.User, space, subject, page string) string {
	t.Helper()
	id := u.Do("POST", "/v1/spaces/"+space+"/change-requests", map[string]any{"subject": subject}).Expect(http.StatusCreated).String("id")
	out := u.GraphQL(updatePageDocument,
		map[string]any{"s": space, "cr": id, "p": page})
	if len(out.Errors) > 0 {
		t.Fatalf("updatePage in a change request: %+v", out.Errors)
	}
	return id
}
