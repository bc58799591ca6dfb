package store

import (
	"context"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Global object identification (the GraphQL `node` field). Ids carry no
// type: they are random (NewID), so an id names one row of one table. The
// tables below are those whose rows are objects with such ids; NodeTypes
// finds which of them holds each of a list of ids in one query, and
// NodesByIDs reads the rows of one of them.
//
// Rows whose id is not global stay out: a member's id is its user's, a page
// or file keeps its id from revision to revision, a conversation's id is
// the caller's and unique within its organization only.
var nodeTables = []struct{ typ, table string }{
	{"Organization", "organizations"},
	{"Team", "teams"},
	{"OrganizationInvite", "organization_invites"},
	{"Space", "spaces"},
	{"Collection", "collections"},
	{"Revision", "revisions"},
	{"ChangeRequest", "change_requests"},
	{"Comment", "comments"},
	{"CommentReply", "comment_replies"},
	{"Site", "sites"},
	{"SiteSectionGroup", "site_section_groups"},
	{"SiteSection", "site_sections"},
	{"SiteSpace", "site_spaces"},
	{"IntegrationInstallation", "integration_installations"},
	{"IntegrationEvent", "integration_events"},
	{"OpenAPISpec", "openapi_specs"},
	{"Translation", "translations"},
	{"ConversationIssue", "conversation_issues"},
	{"ConversationsIssuesCluster", "conversation_issue_clusters"},
	{"SAMLProvider", "saml_providers"},
}

// NodeTypeNames are the GraphQL types NodeTypes answers.
func NodeTypeNames() []string {
	out := make([]string, len(nodeTables))
	for i, t := range nodeTables {
		out[i] = t.typ
	}
	return out
}

// nodeTypesSQL looks every id up in every table at once: each table's
// primary key answers its part.
var nodeTypesSQL = func() string {
	parts := make([]string, len(nodeTables))
	for i, t := range nodeTables {
		parts[i] = "SELECT id, '" + t.typ + "' AS type FROM " + t.table + " WHERE id = ANY(?0)"
	}
	return strings.Join(parts, " UNION ALL ")
}()

// NodeTypes is the GraphQL type of each of ids that names an object
// (NodeTypeNames); ids that name nothing are left out.
func NodeTypes(ctx context.Context, db bun.IDB, ids []string) (map[string]string, error) {
	var rows []struct {
		ID   string `bun:"id"`
		Type string `bun:"type"`
	}
	if err := db.NewRaw(nodeTypesSQL, pgdialect.Array(ids)).Scan(ctx, &rows); err != nil {
		return nil, translate(err)
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.ID] = r.Type
	}
	return out, nil
}

// NodesByIDs reads the rows of T with these ids, as they are (a deleted
// space too: the read rules decide who sees it).
func NodesByIDs[T any](ctx context.Context, db bun.IDB, ids []string) ([]*T, error) {
	return selectRows[T](ctx, db, idIn("id", ids), "", ids)
}
