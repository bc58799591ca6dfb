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

import "net/http"

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
}
