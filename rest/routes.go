// Package rest serves GitBook's /v1 REST surface as an adapter over the
// GraphQL schema, and assembles the HTTP server around both.
//
// REST is data here, not code: each route names a GraphQL operation
// (rest/operations/<operationId>.graphql) that one generic handler runs
// in-process with the path parameters, query parameters and JSON body as its
// variables. So a REST call runs exactly the resolvers, permission checks and
// loaders a GraphQL query does. The same table generates /v1/openapi.json and
// docs/api-coverage.md.
package rest

import (
	"net/http"
	"strings"
)

// Route is one REST operation.
type Route struct {
	Method string
	// Path is a net/http pattern path: "/v1/spaces/{spaceId}".
	Path string
	// Operation is the reference operationId, which names the GraphQL
	// operation and its document.
	Operation string
	// Status is the success status. 204 writes no body.
	Status int
	// Result is the dotted path of the response inside the operation's data;
	// empty means the root field.
	Result string
	// Summary is a one-line description for the OpenAPI document.
	Summary string
	// Tag groups operations in the OpenAPI document.
	Tag string
}

// DocumentedPath is Path as OpenAPI writes it: a net/http wildcard
// ("{pagePath...}", the rest of the path) is a plain parameter there.
func (r Route) DocumentedPath() string { return strings.ReplaceAll(r.Path, "...}", "}") }

// Routes is the REST surface: every route the server answers under /v1.
var Routes = []Route{
	// Users
	{Method: "GET", Path: "/v1/user", Operation: "getAuthenticatedUser", Status: http.StatusOK, Tag: "users",
		Summary: "Get the authenticated user"},

	// Organizations (spec 4.11)
	{Method: "GET", Path: "/v1/orgs", Operation: "listOrganizationsForAuthenticatedUser", Status: http.StatusOK, Tag: "organizations",
		Summary: "List the organizations of the authenticated user"},
	{Method: "POST", Path: "/v1/orgs", Operation: "createOrganization", Status: http.StatusCreated, Tag: "organizations",
		Summary: "Create an organization; the caller becomes its admin"},
	{Method: "GET", Path: "/v1/orgs/{organizationId}", Operation: "getOrganizationById", Status: http.StatusOK, Tag: "organizations",
		Summary: "Get an organization"},
	{Method: "PATCH", Path: "/v1/orgs/{organizationId}", Operation: "updateOrganizationById", Status: http.StatusOK, Tag: "organizations",
		Summary: "Update an organization"},
	{Method: "GET", Path: "/v1/orgs/{organizationId}/agent-instructions", Operation: "getOrganizationAgentInstructions", Status: http.StatusOK,
		Result: "organization.agentInstructions", Tag: "organizations", Summary: "Get the docs agent instructions of an organization"},
	{Method: "PUT", Path: "/v1/orgs/{organizationId}/agent-instructions", Operation: "updateOrganizationAgentInstructions", Status: http.StatusOK,
		Tag: "organizations", Summary: "Replace the docs agent instructions of an organization"},

	// Joining: email domains and invite links (spec 4.11 and the reference)
	{Method: "POST", Path: "/v1/orgs/{organizationId}/join", Operation: "joinOrganization", Status: http.StatusNoContent,
		Tag: "organizations", Summary: "Join an organization that admits the caller's email domain"},
	{Method: "GET", Path: "/v1/email-domains/{emailDomain}/orgs", Operation: "getOrganizationsForEmailDomain", Status: http.StatusOK,
		Result: "organizationsForEmailDomain", Tag: "organizations", Summary: "List the organizations the caller's email domain may join"},
	{Method: "GET", Path: "/v1/orgs/{organizationId}/link-invites", Operation: "listOrganizationInviteLinks", Status: http.StatusOK,
		Result: "organization.invites", Tag: "invites", Summary: "List the invite links of an organization"},
	{Method: "POST", Path: "/v1/orgs/{organizationId}/link-invites", Operation: "createOrganizationInvite", Status: http.StatusCreated,
		Tag: "invites", Summary: "Create an invite link"},
	{Method: "GET", Path: "/v1/orgs/{organizationId}/link-invites/{inviteId}", Operation: "getOrganizationInviteLink", Status: http.StatusOK,
		Tag: "invites", Summary: "Get an invite link"},
	{Method: "PATCH", Path: "/v1/orgs/{organizationId}/link-invites/{inviteId}", Operation: "updateOrganizationInviteById", Status: http.StatusOK,
		Tag: "invites", Summary: "Change the role an invite link gives"},
	{Method: "DELETE", Path: "/v1/orgs/{organizationId}/link-invites/{inviteId}", Operation: "deleteOrganizationInviteById", Status: http.StatusNoContent,
		Tag: "invites", Summary: "Delete an invite link (204 also when there was none)"},
	{Method: "POST", Path: "/v1/orgs/{organizationId}/invites/{inviteId}", Operation: "joinOrganizationWithInvite", Status: http.StatusOK,
		Tag: "invites", Summary: "Join an organization with an invite link"},

	// Members and teams (spec 4.12)
	{Method: "GET", Path: "/v1/orgs/{organizationId}/members", Operation: "listMembersInOrganizationById", Status: http.StatusOK,
		Result: "organization.members", Tag: "members", Summary: "List the members of an organization"},
	{Method: "GET", Path: "/v1/orgs/{organizationId}/members/{userId}", Operation: "getMemberInOrganizationById", Status: http.StatusOK,
		Result: "organization.member", Tag: "members", Summary: "Get a member of an organization"},
	{Method: "PATCH", Path: "/v1/orgs/{organizationId}/members/{userId}", Operation: "updateMemberInOrganizationById", Status: http.StatusOK,
		Tag: "members", Summary: "Change a member's role (an organization keeps at least one admin)"},
	{Method: "DELETE", Path: "/v1/orgs/{organizationId}/members/{userId}", Operation: "removeMemberFromOrganizationById", Status: http.StatusNoContent,
		Tag: "members", Summary: "Remove a member, or leave the organization"},
	{Method: "POST", Path: "/v1/orgs/{organizationId}/ping", Operation: "updateOrganizationMemberLastSeenAt", Status: http.StatusOK,
		Tag: "members", Summary: "Record the caller's activity in an organization"},
	{Method: "POST", Path: "/v1/orgs/{organizationId}/members/{userId}/sso", Operation: "setUserAsSSOMemberForOrganization", Status: http.StatusOK,
		Tag: "members", Summary: "Mark a member as signing in with SSO"},
	{Method: "GET", Path: "/v1/orgs/{organizationId}/members/{userId}/spaces", Operation: "listSpacesForOrganizationMember", Status: http.StatusOK,
		Result: "organization.member.contentPermissions", Tag: "members", Summary: "List the spaces a member can access"},
	{Method: "GET", Path: "/v1/orgs/{organizationId}/members/{userId}/teams", Operation: "listTeamsForOrganizationMember", Status: http.StatusOK,
		Result: "organization.member.teamMemberships", Tag: "members", Summary: "List the teams of a member"},
	{Method: "GET", Path: "/v1/orgs/{organizationId}/teams", Operation: "listTeamsInOrganizationById", Status: http.StatusOK,
		Result: "organization.teams", Tag: "teams", Summary: "List the teams of an organization"},
	{Method: "PUT", Path: "/v1/orgs/{organizationId}/teams", Operation: "createOrganizationTeam", Status: http.StatusCreated,
		Tag: "teams", Summary: "Create a team"},
	{Method: "GET", Path: "/v1/orgs/{organizationId}/teams/{teamId}", Operation: "getTeamInOrganizationById", Status: http.StatusOK,
		Result: "organization.team", Tag: "teams", Summary: "Get a team"},
	{Method: "PATCH", Path: "/v1/orgs/{organizationId}/teams/{teamId}", Operation: "updateTeamInOrganizationById", Status: http.StatusOK,
		Tag: "teams", Summary: "Rename a team"},
	{Method: "GET", Path: "/v1/orgs/{organizationId}/teams/{teamId}/members", Operation: "listTeamMembersInOrganizationById", Status: http.StatusOK,
		Result: "organization.team.teamMembers", Tag: "teams", Summary: "List the members of a team"},
	{Method: "PUT", Path: "/v1/orgs/{organizationId}/teams/{teamId}/members", Operation: "updateMembersInOrganizationTeam", Status: http.StatusNoContent,
		Tag: "teams", Summary: "Add, remove and set the roles of a team's members"},
	{Method: "PUT", Path: "/v1/orgs/{organizationId}/teams/{teamId}/members/{userId}", Operation: "addMemberToOrganizationTeamById", Status: http.StatusNoContent,
		Tag: "teams", Summary: "Add a member to a team, or change their team role"},
	{Method: "DELETE", Path: "/v1/orgs/{organizationId}/teams/{teamId}/members/{userId}", Operation: "deleteMemberFromOrganizationTeamById", Status: http.StatusResetContent,
		Tag: "teams", Summary: "Take a member out of a team (205; 204 when they were not in it)"},
	{Method: "DELETE", Path: "/v1/orgs/{organizationId}/teams/{teamId}", Operation: "removeTeamFromOrganizationById", Status: http.StatusResetContent,
		Tag: "teams", Summary: "Delete a team (205; 204 when there was none)"},

	// Spaces (spec 4.3, and creating and listing from the reference)
	{Method: "GET", Path: "/v1/orgs/{organizationId}/spaces", Operation: "listSpacesInOrganizationById", Status: http.StatusOK,
		Result: "organization.spaces", Tag: "spaces", Summary: "List the spaces of an organization"},
	{Method: "POST", Path: "/v1/orgs/{organizationId}/spaces", Operation: "createSpace", Status: http.StatusCreated, Tag: "spaces",
		Summary: "Create a space"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}", Operation: "getSpaceById", Status: http.StatusOK, Tag: "spaces",
		Summary: "Get a space"},
	{Method: "PATCH", Path: "/v1/spaces/{spaceId}", Operation: "updateSpaceById", Status: http.StatusOK, Tag: "spaces",
		Summary: "Update a space"},
	{Method: "DELETE", Path: "/v1/spaces/{spaceId}", Operation: "deleteSpaceById", Status: http.StatusNoContent, Tag: "spaces",
		Summary: "Delete a space (restorable for 7 days)"},
	{Method: "POST", Path: "/v1/spaces/{spaceId}/duplicate", Operation: "duplicateSpace", Status: http.StatusCreated, Tag: "spaces",
		Summary: "Duplicate a space"},
	{Method: "POST", Path: "/v1/spaces/{spaceId}/restore", Operation: "restoreSpace", Status: http.StatusOK, Tag: "spaces",
		Summary: "Restore a deleted space"},
	{Method: "POST", Path: "/v1/spaces/{spaceId}/move", Operation: "moveSpace", Status: http.StatusOK, Tag: "spaces",
		Summary: "Move a space to another collection and/or position"},
	{Method: "POST", Path: "/v1/spaces/{spaceId}/transfer", Operation: "transferSpace", Status: http.StatusOK, Tag: "spaces",
		Summary: "Give a space to another organization"},

	// Space content (spec 4.4) and revisions (the reference)
	{Method: "GET", Path: "/v1/spaces/{spaceId}/content", Operation: "getCurrentRevision", Status: http.StatusOK,
		Result: "space.content", Tag: "content", Summary: "Get the current revision of a space"},
	{Method: "POST", Path: "/v1/spaces/{spaceId}/content/template", Operation: "applyTemplateToSpace", Status: http.StatusNoContent,
		Tag: "content", Summary: "Add a template's pages to a space's content, or a change request's"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/content/pages", Operation: "listPages", Status: http.StatusOK,
		Result: "space.content", Tag: "content", Summary: "List the pages of a space, nested"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/content/page/{pageId}", Operation: "getPageById", Status: http.StatusOK,
		Result: "space.content.page", Tag: "content", Summary: "Get a page, with its body as a document or markdown"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/content/path/{pagePath...}", Operation: "getPageByPath", Status: http.StatusOK,
		Result: "space.content.pageByPath", Tag: "content", Summary: "Get a page by its path"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/revisions/{revisionId}", Operation: "getRevisionById", Status: http.StatusOK,
		Result: "space.revisionById", Tag: "content", Summary: "Get a revision of a space"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/revisions/{revisionId}/pages", Operation: "listPagesInRevisionById", Status: http.StatusOK,
		Result: "space.revisionById", Tag: "content", Summary: "List the pages of a revision, nested"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/revisions/{revisionId}/page/{pageId}", Operation: "getPageInRevisionById", Status: http.StatusOK,
		Result: "space.revisionById.page", Tag: "content", Summary: "Get a page of a revision"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/revisions/{revisionId}/path/{pagePath...}", Operation: "getPageInRevisionByPath", Status: http.StatusOK,
		Result: "space.revisionById.pageByPath", Tag: "content", Summary: "Get a page of a revision by its path"},

	// Files (spec 4.4, 4.5 and the reference's revisions)
	{Method: "GET", Path: "/v1/spaces/{spaceId}/content/files", Operation: "listFiles", Status: http.StatusOK,
		Result: "space.content.fileList", Tag: "content", Summary: "List the files of a space"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/content/files/{fileId}", Operation: "getFileById", Status: http.StatusOK,
		Result: "space.content.file", Tag: "content", Summary: "Get a file of a space, with a signed download address"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/files", Operation: "listFilesInChangeRequestById", Status: http.StatusOK,
		Result: "space.changeRequest.content.fileList", Tag: "change-requests", Summary: "List the files of a change request"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/files/{fileId}", Operation: "getFileInChangeRequestById", Status: http.StatusOK,
		Result: "space.changeRequest.content.file", Tag: "change-requests", Summary: "Get a file of a change request"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/revisions/{revisionId}/files", Operation: "listFilesInRevisionById", Status: http.StatusOK,
		Result: "space.revisionById.fileList", Tag: "content", Summary: "List the files of a revision"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/revisions/{revisionId}/files/{fileId}", Operation: "getFileInRevisionById", Status: http.StatusOK,
		Result: "space.revisionById.file", Tag: "content", Summary: "Get a file of a revision"},

	// Comments (spec 4.1, 4.2, and the reference's reply operations)
	{Method: "GET", Path: "/v1/spaces/{spaceId}/comments", Operation: "listCommentsInSpace", Status: http.StatusOK, Result: "space.commentList", Tag: "comments",
		Summary: "List the comments of a space"},
	{Method: "POST", Path: "/v1/spaces/{spaceId}/comments", Operation: "postCommentInSpace", Status: http.StatusOK, Tag: "comments",
		Summary: "Comment on a space"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/comments/{commentId}", Operation: "getCommentInSpace", Status: http.StatusOK, Result: "space.comment", Tag: "comments",
		Summary: "Get a comment"},
	{Method: "PUT", Path: "/v1/spaces/{spaceId}/comments/{commentId}", Operation: "updateCommentInSpace", Status: http.StatusOK, Tag: "comments",
		Summary: "Edit, resolve, reopen or react to a comment"},
	{Method: "DELETE", Path: "/v1/spaces/{spaceId}/comments/{commentId}", Operation: "deleteCommentInSpace", Status: http.StatusNoContent, Tag: "comments",
		Summary: "Delete a comment and its replies"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/comments/{commentId}/replies", Operation: "listCommentRepliesInSpace", Status: http.StatusOK, Result: "space.comment.replyList", Tag: "comments",
		Summary: "List the replies to a comment"},
	{Method: "POST", Path: "/v1/spaces/{spaceId}/comments/{commentId}/replies", Operation: "postCommentReplyInSpace", Status: http.StatusOK, Tag: "comments",
		Summary: "Reply to a comment"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/comments/{commentId}/replies/{commentReplyId}", Operation: "getCommentReplyInSpace", Status: http.StatusOK, Result: "space.comment.reply", Tag: "comments",
		Summary: "Get a reply"},
	{Method: "PUT", Path: "/v1/spaces/{spaceId}/comments/{commentId}/replies/{commentReplyId}", Operation: "updateCommentReplyInSpace", Status: http.StatusOK, Tag: "comments",
		Summary: "Edit or react to a reply"},
	{Method: "DELETE", Path: "/v1/spaces/{spaceId}/comments/{commentId}/replies/{commentReplyId}", Operation: "deleteCommentReplyInSpace", Status: http.StatusNoContent, Tag: "comments",
		Summary: "Delete a reply"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments", Operation: "listCommentsInChangeRequest", Status: http.StatusOK, Result: "space.changeRequest.commentList", Tag: "comments",
		Summary: "List the comments of a change request"},
	{Method: "POST", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments", Operation: "postCommentInChangeRequest", Status: http.StatusOK, Tag: "comments",
		Summary: "Comment on a change request"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}", Operation: "getCommentInChangeRequest", Status: http.StatusOK, Result: "space.changeRequest.comment", Tag: "comments",
		Summary: "Get a comment"},
	{Method: "PUT", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}", Operation: "updateCommentInChangeRequest", Status: http.StatusOK, Tag: "comments",
		Summary: "Edit, resolve, reopen or react to a comment"},
	{Method: "DELETE", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}", Operation: "deleteCommentInChangeRequest", Status: http.StatusNoContent, Tag: "comments",
		Summary: "Delete a comment and its replies"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}/replies", Operation: "listCommentRepliesInChangeRequest", Status: http.StatusOK, Result: "space.changeRequest.comment.replyList", Tag: "comments",
		Summary: "List the replies to a comment"},
	{Method: "POST", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}/replies", Operation: "postCommentReplyInChangeRequest", Status: http.StatusOK, Tag: "comments",
		Summary: "Reply to a comment"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}/replies/{commentReplyId}", Operation: "getCommentReplyInChangeRequest", Status: http.StatusOK, Result: "space.changeRequest.comment.reply", Tag: "comments",
		Summary: "Get a reply"},
	{Method: "PUT", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}/replies/{commentReplyId}", Operation: "updateCommentReplyInChangeRequest", Status: http.StatusOK, Tag: "comments",
		Summary: "Edit or react to a reply"},
	{Method: "DELETE", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}/replies/{commentReplyId}", Operation: "deleteCommentReplyInChangeRequest", Status: http.StatusNoContent, Tag: "comments",
		Summary: "Delete a reply"},

	// Links and backlinks (spec 4.3, 4.4, 4.5)
	{Method: "GET", Path: "/v1/spaces/{spaceId}/links", Operation: "listSpaceLinks", Status: http.StatusOK,
		Result: "space.links", Tag: "content", Summary: "List the links of a space's content, with stats"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/content/page/{pageId}/links", Operation: "listPageLinksInSpace", Status: http.StatusOK,
		Result: "space.content.page.links", Tag: "content", Summary: "List the links of a page"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/content/page/{pageId}/backlinks", Operation: "listSpacePageBacklinks", Status: http.StatusOK,
		Result: "space.content.page.backlinks", Tag: "content", Summary: "List the pages linking to a page"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/content/files/{fileId}/backlinks", Operation: "listSpaceFileBacklinks", Status: http.StatusOK,
		Result: "space.content.file.backlinks", Tag: "content", Summary: "List the pages linking to a file"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/page/{pageId}/links", Operation: "listPageLinksInChangeRequest", Status: http.StatusOK,
		Result: "space.changeRequest.content.page.links", Tag: "change-requests", Summary: "List the links of a page of a change request"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/files/{fileId}/backlinks", Operation: "listChangeRequestFileBacklinks", Status: http.StatusOK,
		Result: "space.changeRequest.content.file.backlinks", Tag: "change-requests", Summary: "List the pages of a change request linking to a file"},

	// Git sync (the reference)
	{Method: "POST", Path: "/v1/spaces/{spaceId}/git/import", Operation: "importGitRepository", Status: http.StatusNoContent,
		Tag: "git", Summary: "Import a git repository in GitBook's layout into a space"},
	{Method: "POST", Path: "/v1/spaces/{spaceId}/git/export", Operation: "exportToGitRepository", Status: http.StatusNoContent,
		Tag: "git", Summary: "Export a space's content to a git repository"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/git/info", Operation: "getSpaceGitInfo", Status: http.StatusOK,
		Result: "space.gitInfo", Tag: "git", Summary: "Get a space's git sync"},

	// Search (spec 4.4, 4.11)
	{Method: "GET", Path: "/v1/spaces/{spaceId}/search", Operation: "searchSpaceContent", Status: http.StatusOK,
		Result: "space.search", Tag: "search", Summary: "Search the content of a space"},
	{Method: "GET", Path: "/v1/orgs/{organizationId}/search", Operation: "searchOrganizationContent", Status: http.StatusOK,
		Result: "organization.search", Tag: "search", Summary: "Search the content of an organization's spaces"},

	// Change requests (spec 4.6) and their content (spec 4.5)
	{Method: "GET", Path: "/v1/spaces/{spaceId}/change-requests", Operation: "listChangeRequestsForSpace", Status: http.StatusOK,
		Result: "space.changeRequestList", Tag: "change-requests", Summary: "List the change requests of a space"},
	{Method: "POST", Path: "/v1/spaces/{spaceId}/change-requests", Operation: "createChangeRequest", Status: http.StatusCreated,
		Tag: "change-requests", Summary: "Open a change request"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}", Operation: "getChangeRequestById", Status: http.StatusOK,
		Result: "space.changeRequest", Tag: "change-requests", Summary: "Get a change request, by id or number"},
	{Method: "PATCH", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}", Operation: "updateChangeRequestById", Status: http.StatusOK,
		Tag: "change-requests", Summary: "Change a change request's subject, description or status"},
	{Method: "POST", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/merge", Operation: "mergeChangeRequest", Status: http.StatusOK,
		Tag: "change-requests", Summary: "Merge a change request into the space's content"},
	{Method: "POST", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/update", Operation: "updateChangeRequest", Status: http.StatusOK,
		Tag: "change-requests", Summary: "Bring a change request up to date with the space's content"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/pdf", Operation: "getChangeRequestPDF", Status: http.StatusOK,
		Result: "space.changeRequest.pdf", Tag: "change-requests", Summary: "Get the address of a PDF of a change request's content"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/reviews", Operation: "getReviewsByChangeRequestId", Status: http.StatusOK,
		Result: "space.changeRequest.reviewList", Tag: "change-requests", Summary: "List the reviews of a change request, newest first"},
	{Method: "POST", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/reviews", Operation: "submitChangeRequestReview", Status: http.StatusCreated,
		Tag: "change-requests", Summary: "Review a change request at its current revision"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/reviews/{reviewId}", Operation: "getChangeRequestReviewById", Status: http.StatusOK,
		Result: "space.changeRequest.review", Tag: "change-requests", Summary: "Get a review of a change request"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/requested-reviewers", Operation: "getRequestedReviewersByChangeRequestId", Status: http.StatusOK,
		Result: "space.changeRequest.requestedReviewerList", Tag: "change-requests", Summary: "List the users asked to review a change request"},
	{Method: "POST", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/requested-reviewers", Operation: "requestReviewersForChangeRequest", Status: http.StatusOK,
		Tag: "change-requests", Summary: "Ask users to review a change request"},
	{Method: "DELETE", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/requested-reviewers/{userId}", Operation: "removeRequestedReviewerFromChangeRequest", Status: http.StatusResetContent,
		Tag: "change-requests", Summary: "Withdraw a request for a review (205; 204 when there was none)"},
	{Method: "GET", Path: "/v1/orgs/{organizationId}/change-requests", Operation: "listChangeRequestsForOrganization", Status: http.StatusOK,
		Result: "organization.changeRequests", Tag: "change-requests", Summary: "List the change requests of an organization's spaces"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content", Operation: "getRevisionOfChangeRequestById", Status: http.StatusOK,
		Result: "space.changeRequest.content", Tag: "change-requests", Summary: "Get the revision of a change request"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/pages", Operation: "listPagesInChangeRequest", Status: http.StatusOK,
		Result: "space.changeRequest.content", Tag: "change-requests", Summary: "List the pages of a change request, nested"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/page/{pageId}", Operation: "getPageInChangeRequestById", Status: http.StatusOK,
		Result: "space.changeRequest.content.page", Tag: "change-requests", Summary: "Get a page of a change request"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/path/{pagePath...}", Operation: "getPageInChangeRequestByPath", Status: http.StatusOK,
		Result: "space.changeRequest.content.pageByPath", Tag: "change-requests", Summary: "Get a page of a change request by its path"},

	// Collections (spec 4.13)
	{Method: "GET", Path: "/v1/orgs/{organizationId}/collections", Operation: "listCollectionsInOrganizationById", Status: http.StatusOK,
		Result: "organization.collections", Tag: "collections", Summary: "List the collections of an organization"},
	{Method: "POST", Path: "/v1/orgs/{organizationId}/collections", Operation: "createCollection", Status: http.StatusCreated,
		Tag: "collections", Summary: "Create a collection"},
	{Method: "GET", Path: "/v1/collections/{collectionId}", Operation: "getCollectionById", Status: http.StatusOK,
		Tag: "collections", Summary: "Get a collection"},
	{Method: "PATCH", Path: "/v1/collections/{collectionId}", Operation: "updateCollectionById", Status: http.StatusOK,
		Tag: "collections", Summary: "Update a collection"},
	{Method: "DELETE", Path: "/v1/collections/{collectionId}", Operation: "deleteCollectionById", Status: http.StatusResetContent,
		Tag: "collections", Summary: "Delete a collection; its content takes its place (205; 204 when there was none)"},
	{Method: "GET", Path: "/v1/collections/{collectionId}/spaces", Operation: "listSpacesInCollectionById", Status: http.StatusOK,
		Result: "collection.spaces", Tag: "collections", Summary: "List the spaces of a collection"},
	{Method: "POST", Path: "/v1/collections/{collectionId}/move", Operation: "moveCollection", Status: http.StatusOK,
		Tag: "collections", Summary: "Move a collection to another parent and/or position"},
	{Method: "POST", Path: "/v1/collections/{collectionId}/transfer", Operation: "transferCollection", Status: http.StatusOK,
		Tag: "collections", Summary: "Give a collection, with its content, to another organization"},

	// Grants on spaces (the reference's space permission operations)
	{Method: "POST", Path: "/v1/spaces/{spaceId}/permissions", Operation: "inviteToSpace", Status: http.StatusNoContent,
		Tag: "permissions", Summary: "Grant a role on a space to users and teams"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/permissions/users", Operation: "listUserPermissionsInSpace", Status: http.StatusOK,
		Result: "space.userPermissions", Tag: "permissions", Summary: "List the users granted a role on a space"},
	{Method: "PATCH", Path: "/v1/spaces/{spaceId}/permissions/users/{userId}", Operation: "updateUserPermissionInSpace", Status: http.StatusNoContent,
		Tag: "permissions", Summary: "Change a user's granted role on a space"},
	{Method: "DELETE", Path: "/v1/spaces/{spaceId}/permissions/users/{userId}", Operation: "removeUserFromSpace", Status: http.StatusResetContent,
		Tag: "permissions", Summary: "Remove a user's grant on a space (205; 204 when there was none)"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/permissions/teams", Operation: "listTeamPermissionsInSpace", Status: http.StatusOK,
		Result: "space.teamPermissions", Tag: "permissions", Summary: "List the teams granted a role on a space"},
	{Method: "PATCH", Path: "/v1/spaces/{spaceId}/permissions/teams/{teamId}", Operation: "updateTeamPermissionInSpace", Status: http.StatusNoContent,
		Tag: "permissions", Summary: "Change a team's granted role on a space"},
	{Method: "DELETE", Path: "/v1/spaces/{spaceId}/permissions/teams/{teamId}", Operation: "removeTeamFromSpace", Status: http.StatusResetContent,
		Tag: "permissions", Summary: "Remove a team's grant on a space (205; 204 when there was none)"},
	{Method: "GET", Path: "/v1/spaces/{spaceId}/permissions/aggregate", Operation: "listPermissionsAggregateInSpace", Status: http.StatusOK,
		Result: "space.permissionsAggregate", Tag: "permissions", Summary: "List everyone with a role on a space"},

	// Grants on collections (the reference's collection permission operations)
	{Method: "POST", Path: "/v1/collections/{collectionId}/permissions", Operation: "inviteToCollection", Status: http.StatusNoContent,
		Tag: "permissions", Summary: "Grant a role on a collection to users and teams"},
	{Method: "GET", Path: "/v1/collections/{collectionId}/permissions/users", Operation: "listUserPermissionsInCollection", Status: http.StatusOK,
		Result: "collection.userPermissions", Tag: "permissions", Summary: "List the users granted a role on a collection"},
	{Method: "PATCH", Path: "/v1/collections/{collectionId}/permissions/users/{userId}", Operation: "updateUserPermissionInCollection", Status: http.StatusNoContent,
		Tag: "permissions", Summary: "Change a user's granted role on a collection"},
	{Method: "DELETE", Path: "/v1/collections/{collectionId}/permissions/users/{userId}", Operation: "removeUserFromCollection", Status: http.StatusResetContent,
		Tag: "permissions", Summary: "Remove a user's grant on a collection (205; 204 when there was none)"},
	{Method: "GET", Path: "/v1/collections/{collectionId}/permissions/teams", Operation: "listTeamPermissionsInCollection", Status: http.StatusOK,
		Result: "collection.teamPermissions", Tag: "permissions", Summary: "List the teams granted a role on a collection"},
	{Method: "PATCH", Path: "/v1/collections/{collectionId}/permissions/teams/{teamId}", Operation: "updateTeamPermissionInCollection", Status: http.StatusNoContent,
		Tag: "permissions", Summary: "Change a team's granted role on a collection"},
	{Method: "DELETE", Path: "/v1/collections/{collectionId}/permissions/teams/{teamId}", Operation: "removeTeamFromCollection", Status: http.StatusResetContent,
		Tag: "permissions", Summary: "Remove a team's grant on a collection (205; 204 when there was none)"},
	{Method: "GET", Path: "/v1/collections/{collectionId}/permissions/aggregate", Operation: "listPermissionsAggregateInCollection", Status: http.StatusOK,
		Result: "collection.permissionsAggregate", Tag: "permissions", Summary: "List everyone with a role on a collection"},

	// Sites (spec 4.7, with publishing and the structure from the reference)
	{Method: "GET", Path: "/v1/orgs/{organizationId}/sites", Operation: "listSites", Status: http.StatusOK,
		Result: "organization.sites", Tag: "sites", Summary: "List the sites of an organization"},
	{Method: "POST", Path: "/v1/orgs/{organizationId}/sites", Operation: "createSite", Status: http.StatusCreated, Tag: "sites",
		Summary: "Create a site"},
	{Method: "GET", Path: "/v1/orgs/{organizationId}/sites/{siteId}", Operation: "getSiteById", Status: http.StatusOK, Tag: "sites",
		Summary: "Get a site"},
	{Method: "PATCH", Path: "/v1/orgs/{organizationId}/sites/{siteId}", Operation: "updateSiteById", Status: http.StatusOK, Tag: "sites",
		Summary: "Update a site"},
	{Method: "DELETE", Path: "/v1/orgs/{organizationId}/sites/{siteId}", Operation: "deleteSiteById", Status: http.StatusNoContent, Tag: "sites",
		Summary: "Delete a site"},
	{Method: "POST", Path: "/v1/orgs/{organizationId}/sites/{siteId}/publish", Operation: "publishSite", Status: http.StatusOK, Tag: "sites",
		Summary: "Publish a site"},
	{Method: "POST", Path: "/v1/orgs/{organizationId}/sites/{siteId}/unpublish", Operation: "unpublishSite", Status: http.StatusOK, Tag: "sites",
		Summary: "Unpublish a site"},
	{Method: "GET", Path: "/v1/orgs/{organizationId}/sites/{siteId}/adaptive-schema", Operation: "getSiteAdaptiveSchema", Status: http.StatusOK,
		Result: "site.adaptiveSchema", Tag: "sites", Summary: "Get the visitor schema of a site's adaptive content"},
	{Method: "PUT", Path: "/v1/orgs/{organizationId}/sites/{siteId}/adaptive-schema", Operation: "updateSiteAdaptiveSchema", Status: http.StatusOK, Tag: "sites",
		Summary: "Set the visitor schema of a site's adaptive content"},
	{Method: "GET", Path: "/v1/orgs/{organizationId}/sites/{siteId}/adaptive-schema/template-conditions", Operation: "listSiteAdaptiveTemplateConditions",
		Status: http.StatusOK, Tag: "sites", Summary: "List the conditions the visitor schema suggests"},
	{Method: "GET", Path: "/v1/orgs/{organizationId}/sites/{siteId}/published", Operation: "getPublishedContentSite", Status: http.StatusOK, Tag: "sites",
		Summary: "Get a published site as its visitors get it"},
	{Method: "GET", Path: "/v1/orgs/{organizationId}/sites/{siteId}/structure", Operation: "getSiteStructure", Status: http.StatusOK,
		Result: "site.structure", Tag: "sites", Summary: "Get a site's structure"},
	{Method: "PATCH", Path: "/v1/orgs/{organizationId}/sites/{siteId}/structure/sort", Operation: "sortSiteStructure", Status: http.StatusOK, Tag: "sites",
		Summary: "Move a site space, section or section group in the site's structure"},

	// Site section groups (spec 4.8)
	{Method: "GET", Path: "/v1/orgs/{organizationId}/sites/{siteId}/section-groups", Operation: "listSiteSectionGroups", Status: http.StatusOK,
		Result: "site.sectionGroups", Tag: "site-structure", Summary: "List a site's section groups"},
	{Method: "POST", Path: "/v1/orgs/{organizationId}/sites/{siteId}/section-groups", Operation: "addSectionGroupToSite", Status: http.StatusCreated,
		Tag: "site-structure", Summary: "Add a section group"},
	{Method: "PATCH", Path: "/v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}", Operation: "updateSiteSectionGroupById",
		Status: http.StatusOK, Tag: "site-structure", Summary: "Update a section group"},
	{Method: "DELETE", Path: "/v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}", Operation: "deleteSiteSectionGroupById",
		Status: http.StatusNoContent, Tag: "site-structure", Summary: "Delete a section group (its sections stay in the site)"},
	{Method: "POST", Path: "/v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}/move", Operation: "moveSiteSectionGroup",
		Status: http.StatusOK, Tag: "site-structure", Summary: "Move a section group (deprecated: use sortSiteStructure)"},
	{Method: "POST", Path: "/v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}/sections", Operation: "addSectionToGroup",
		Status: http.StatusCreated, Tag: "site-structure", Summary: "Add a section to a section group"},
	{Method: "DELETE", Path: "/v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}/sections/{siteSectionId}",
		Operation: "removeSectionFromGroup", Status: http.StatusNoContent, Tag: "site-structure", Summary: "Remove a section from a section group"},

	// Site sections (spec 4.9)
	{Method: "GET", Path: "/v1/orgs/{organizationId}/sites/{siteId}/sections", Operation: "listSiteSections", Status: http.StatusOK,
		Result: "site.sections", Tag: "site-structure", Summary: "List a site's sections"},
	{Method: "POST", Path: "/v1/orgs/{organizationId}/sites/{siteId}/sections", Operation: "addSectionToSite", Status: http.StatusCreated,
		Tag: "site-structure", Summary: "Add a section"},
	{Method: "PATCH", Path: "/v1/orgs/{organizationId}/sites/{siteId}/sections/{siteSectionId}", Operation: "updateSiteSectionById",
		Status: http.StatusOK, Tag: "site-structure", Summary: "Update a section"},
	{Method: "DELETE", Path: "/v1/orgs/{organizationId}/sites/{siteId}/sections/{siteSectionId}", Operation: "deleteSiteSectionById",
		Status: http.StatusNoContent, Tag: "site-structure", Summary: "Delete a section and its site spaces"},
	{Method: "POST", Path: "/v1/orgs/{organizationId}/sites/{siteId}/sections/{siteSectionId}/move", Operation: "moveSiteSection",
		Status: http.StatusOK, Tag: "site-structure", Summary: "Move a section (deprecated: use sortSiteStructure)"},

	// Site spaces (spec 4.10)
	{Method: "GET", Path: "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces", Operation: "listSiteSpaces", Status: http.StatusOK,
		Result: "site.siteSpaceList", Tag: "site-structure", Summary: "List a site's site spaces"},
	{Method: "POST", Path: "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces", Operation: "addSpaceToSite", Status: http.StatusCreated,
		Tag: "site-structure", Summary: "Publish a space in a site"},
	{Method: "PATCH", Path: "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}", Operation: "updateSiteSpaceById",
		Status: http.StatusOK, Tag: "site-structure", Summary: "Update a site space"},
	{Method: "DELETE", Path: "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}", Operation: "deleteSiteSpaceById",
		Status: http.StatusNoContent, Tag: "site-structure", Summary: "Remove a site space"},
	{Method: "POST", Path: "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}/move", Operation: "moveSiteSpace",
		Status: http.StatusOK, Tag: "site-structure", Summary: "Move a site space (deprecated: use sortSiteStructure)"},
}
