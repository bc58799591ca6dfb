package model

import (
	"context"
	"errors"

	"github.com/docsapi/docsapi/store"
)

// List is a page of a keyset-paginated list, as every `...List` type of the
// schema answers it: the items, and where the page sits. Its edges are the
// same items with their cursors, for Relay-style clients (connections).
//
// The list types are this one generic type, so that edges and cursors are
// written once rather than for each of them; the aliases below bind the
// schema's types to it (gqlgen finds them by name).
type List[T any] struct {
	Items    []T       `json:"items"`
	Next     *ListNext `json:"next,omitempty"`
	PageInfo *PageInfo `json:"pageInfo"`
	// Total is the number of items of the whole list the caller can see,
	// every page: the `totalCount` of the list types that have one
	// (graph/total_count.go makes it). It runs only when totalCount is
	// asked for.
	Total func(ctx context.Context) (int, error) `json:"-"`
}

// Count is the number of items in this page: the specification's `count`
// (section 1.2), on REST and in GraphQL alike. It costs nothing.
func (l *List[T]) Count() int { return len(l.Items) }

// TotalCount is the number of items of the whole list the caller can see.
func (l *List[T]) TotalCount(ctx context.Context) (int, error) {
	if l.Total == nil {
		// A list made without its total: a bug, not a 0 that would lie.
		return 0, errors.New("model: this list has no total")
	}
	return l.Total(ctx)
}

// Edge is an item of a list with its cursor.
type Edge[T any] struct {
	Cursor string `json:"cursor"`
	Node   T      `json:"node"`
}

// EdgeNode is the item of an edge, for the read rules (graph/authorize.go):
// an edge is readable when its item is.
func (e *Edge[T]) EdgeNode() any { return e.Node }

// Edges are the items, in order, each with the cursor PageInfo holds for it.
func (l *List[T]) Edges() []*Edge[T] {
	edges := make([]*Edge[T], len(l.Items))
	for i, item := range l.Items {
		edges[i] = &Edge[T]{Node: item}
		if l.PageInfo != nil && l.PageInfo.CursorOf != nil {
			edges[i].Cursor = l.PageInfo.CursorOf(i)
		}
	}
	return edges
}

// PageInfo is where a page sits (graph/pagination.go fills it).
type PageInfo struct {
	HasNextPage     bool    `json:"hasNextPage"`
	HasPreviousPage bool    `json:"hasPreviousPage"`
	StartCursor     *string `json:"startCursor,omitempty"`
	EndCursor       *string `json:"endCursor,omitempty"`
	// CursorOf is the cursor of the page's i-th item (nil when it is
	// empty), made when the edges are asked for.
	CursorOf func(i int) string `json:"-"`
}

// LinkList is a page of links with statistics over all of them.
type LinkList struct {
	List[*LinkItem]
	// Over all the links listed, not only this page.
	Stats *LinkStats `json:"stats"`
}

// LinkEdge is a link with its cursor.
type LinkEdge = Edge[*LinkItem]

// The paginated list types of the schema and their edges. A new list type
// gets its two lines here (TestListsAreConnections checks the schema side).
type (
	ChangeRequestList                  = List[*store.ChangeRequest]
	ChangeRequestRequestedReviewerList = List[*store.RequestedReviewer]
	ChangeRequestReviewList            = List[*store.Review]
	CollectionList                     = List[*store.Collection]
	CommentList                        = List[*CommentNode]
	CommentReplyList                   = List[*ReplyNode]
	ContentLocationList                = List[ContentLocation]
	ConversationIssueList              = List[*store.ConversationIssue]
	ConversationList                   = List[*store.Conversation]
	ConversationsIssuesClusterList     = List[*store.IssuesCluster]
	IntegrationEventList               = List[*store.IntegrationEvent]
	IntegrationInstallationList        = List[*store.IntegrationInstallation]
	IntegrationList                    = List[*store.Integration]
	IntegrationSiteInstallationList    = List[*store.IntegrationSiteInstallation]
	IntegrationSpaceInstallationList   = List[*store.IntegrationSpaceInstallation]
	MemberContentPermissionList        = List[*MemberContentPermission]
	MemberList                         = List[*store.Member]
	MemberTeamList                     = List[*MemberTeam]
	OpenAPISpecList                    = List[*store.OpenAPISpec]
	OpenAPISpecVersionList             = List[*store.OpenAPISpecVersion]
	OrganizationInviteList             = List[*store.Invite]
	OrganizationList                   = List[*store.Organization]
	RevisionFileList                   = List[*store.RevisionFile]
	SAMLProviderList                   = List[*store.SAMLProvider]
	SearchPageResultList               = List[*SearchPageResult]
	SearchSpaceResultList              = List[*SearchSpaceResult]
	SiteList                           = List[*store.Site]
	SiteSectionGroupList               = List[*store.SiteSectionGroup]
	SiteSectionList                    = List[*store.SiteSection]
	SiteRedirectList                   = List[*store.SiteRedirect]
	SiteShareLinkList                  = List[*store.SiteShareLink]
	SiteSpaceList                      = List[*store.SiteSpace]
	SpaceList                          = List[*store.Space]
	TeamContentPermissionList          = List[*TeamContentPermission]
	TeamList                           = List[*store.Team]
	TeamMemberList                     = List[*OrganizationTeamMember]
	TranslationList                    = List[*store.Translation]
	UserContentPermissionList          = List[*UserContentPermission]

	ChangeRequestEdge                  = Edge[*store.ChangeRequest]
	ChangeRequestRequestedReviewerEdge = Edge[*store.RequestedReviewer]
	ChangeRequestReviewEdge            = Edge[*store.Review]
	CollectionEdge                     = Edge[*store.Collection]
	CommentEdge                        = Edge[*CommentNode]
	CommentReplyEdge                   = Edge[*ReplyNode]
	ContentLocationEdge                = Edge[ContentLocation]
	ConversationIssueEdge              = Edge[*store.ConversationIssue]
	ConversationEdge                   = Edge[*store.Conversation]
	ConversationsIssuesClusterEdge     = Edge[*store.IssuesCluster]
	IntegrationEventEdge               = Edge[*store.IntegrationEvent]
	IntegrationInstallationEdge        = Edge[*store.IntegrationInstallation]
	IntegrationEdge                    = Edge[*store.Integration]
	IntegrationSiteInstallationEdge    = Edge[*store.IntegrationSiteInstallation]
	IntegrationSpaceInstallationEdge   = Edge[*store.IntegrationSpaceInstallation]
	MemberContentPermissionEdge        = Edge[*MemberContentPermission]
	MemberEdge                         = Edge[*store.Member]
	MemberTeamEdge                     = Edge[*MemberTeam]
	OpenAPISpecEdge                    = Edge[*store.OpenAPISpec]
	OpenAPISpecVersionEdge             = Edge[*store.OpenAPISpecVersion]
	OrganizationInviteEdge             = Edge[*store.Invite]
	OrganizationEdge                   = Edge[*store.Organization]
	RevisionFileEdge                   = Edge[*store.RevisionFile]
	SAMLProviderEdge                   = Edge[*store.SAMLProvider]
	SearchPageResultEdge               = Edge[*SearchPageResult]
	SearchSpaceResultEdge              = Edge[*SearchSpaceResult]
	SiteEdge                           = Edge[*store.Site]
	SiteSectionGroupEdge               = Edge[*store.SiteSectionGroup]
	SiteSectionEdge                    = Edge[*store.SiteSection]
	SiteRedirectEdge                   = Edge[*store.SiteRedirect]
	SiteShareLinkEdge                  = Edge[*store.SiteShareLink]
	SiteSpaceEdge                      = Edge[*store.SiteSpace]
	SpaceEdge                          = Edge[*store.Space]
	TeamContentPermissionEdge          = Edge[*TeamContentPermission]
	TeamEdge                           = Edge[*store.Team]
	TeamMemberEdge                     = Edge[*OrganizationTeamMember]
	TranslationEdge                    = Edge[*store.Translation]
	UserContentPermissionEdge          = Edge[*UserContentPermission]
)

// Node is an object of one of the types implementing the schema's Node
// interface (graph/node.go): a store row or one of the views above them.
type Node any
