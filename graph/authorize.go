package graph

import (
	"context"
	"reflect"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Authorization belongs to the object, not to the entry point.
//
// In GraphQL an object is reachable from many parents: a space from a
// member's permissions, a site space, a collection, a search hit, an
// installation... A check at the root field (or in the REST route) does not
// cover the others. So every object type that carries permissions has a read
// rule here, keyed by its Go type, and an object of such a type reaches a
// response only through the authorizer: a field middleware that runs on
// every field whose type can hold a guarded object (the direct writer calls
// the same rules for the subtrees it writes). An object the caller may not
// read is "not found": a single object becomes null with a NOT_FOUND error
// (404 on REST), and a list loses the item.
//
// The authorizer is the last line, not the first: resolvers still check
// what they load (a resolver that lists must filter, so that counts and
// pages agree), and a list item the authorizer has to remove is a resolver
// bug: it is logged, and in strict mode (tests) it fails the request.
//
// Every object type of the schema is classified (TestEveryObjectTypeIsClassified):
//   - guarded: it has a read rule below;
//   - derived: it is only reachable from guarded or derived types (its
//     parent's rule covers it: a space's URLs, a revision's files), or from
//     a field that checks it or answers the same to everyone (checkedFields);
//   - public: it holds nothing private (page info, templates, containers of
//     guarded items).
// A new type, or a new field returning a derived type from an unguarded
// parent, fails that test until it is classified.

// readRule decides whether the viewer may read obj.
type readRule func(v *viewer, obj any) (bool, error)

var (
	// readRules are the rules by Go type; guardedTypes names the GraphQL
	// types they guard (several may share a Go type).
	readRules    = map[reflect.Type]readRule{}
	guardedTypes = map[string]reflect.Type{}
)

// guard registers rule for the GraphQL types names, bound to the Go type T.
func guard[T any](rule func(v *viewer, obj T) (bool, error), names ...string) {
	t := reflect.TypeFor[T]()
	readRules[t] = func(v *viewer, obj any) (bool, error) { return rule(v, obj.(T)) }
	for _, n := range names {
		guardedTypes[n] = t
	}
}

// The read rules. Each names the permission that lets a caller see the
// object; roles and levels are decided in access.go.
func init() {
	// Content: whoever can read the space (access.go's spaceRole).
	guard(func(v *viewer, s *store.Space) (bool, error) { return v.canReadSpace(s) }, "Space")
	guard(func(v *viewer, c *store.Collection) (bool, error) { return v.canReadCollection(c) }, "Collection")
	guard(func(v *viewer, x *store.Revision) (bool, error) { return v.canReadSpaceID(x.SpaceID) }, "Revision")
	guard(func(v *viewer, p *model.PageNode) (bool, error) { return v.canReadSpaceID(p.Revision.SpaceID) }, "RevisionPage")
	guard(func(v *viewer, cr *store.ChangeRequest) (bool, error) { return v.canReadSpaceID(cr.SpaceID) }, "ChangeRequest")
	guard(func(v *viewer, c *model.CommentNode) (bool, error) { return v.canReadSpaceID(c.SpaceID) }, "Comment")
	guard(func(v *viewer, c *model.ReplyNode) (bool, error) { return v.canReadSpaceID(c.Comment.SpaceID) }, "CommentReply")
	guard(func(v *viewer, p *model.MemberContentPermission) (bool, error) { return v.canReadSpace(p.Space) }, "MemberContentPermission")
	guard(func(v *viewer, s *model.SearchSpaceResult) (bool, error) { return v.canReadSpaceID(s.ID) }, "SearchSpaceResult")
	guard(func(v *viewer, l *model.ContentLocationPage) (bool, error) { return v.canReadSpace(l.Space) }, "ContentLocationPage")
	guard(func(v *viewer, l *model.ContentLocationFile) (bool, error) { return v.canReadSpace(l.Space) }, "ContentLocationFile")
	// A space's automatic redirects lead to its pages: whoever reads it.
	guard(func(v *viewer, rd *store.PageRedirect) (bool, error) { return v.canReadSpaceID(rd.SpaceID) }, "PageRedirect")
	guard(func(v *viewer, t *store.Translation) (bool, error) {
		if !v.orgReader(t.OrganizationID) {
			return false, nil
		}
		return v.canReadSpaceID(t.SourceSpaceID)
	}, "Translation")

	// Sites: the organization's readers; a site space also needs its space.
	guard(func(v *viewer, s *store.Site) (bool, error) { return v.orgReader(s.OrganizationID), nil }, "Site")
	guard(func(v *viewer, g *store.SiteSectionGroup) (bool, error) { return v.orgReader(g.OrganizationID), nil }, "SiteSectionGroup")
	guard(func(v *viewer, s *store.SiteSection) (bool, error) { return v.orgReader(s.OrganizationID), nil }, "SiteSection")
	guard(func(v *viewer, ss *store.SiteSpace) (bool, error) { return v.canReadSiteSpace(ss) }, "SiteSpace")
	// What opens a site to the public (its share links, its visitor
	// authentication key): those who manage the site, as its share key.
	guard(func(v *viewer, l *store.SiteShareLink) (bool, error) { return v.siteManager(l.OrganizationID), nil }, "SiteShareLink")
	guard(func(v *viewer, a *store.SitePublishingAuth) (bool, error) {
		return v.siteManager(a.OrganizationID), nil
	}, "SitePublishingAuth")
	// A site's redirects: those who manage the site (the site's visitors
	// have a rule of their own, visitor.go).
	guard(func(v *viewer, rd *store.SiteRedirect) (bool, error) { return v.siteManager(rd.OrganizationID), nil }, "SiteRedirect")

	// The organization and its people: members see the organization (its
	// public card, OrganizationSummary, is for everyone); readers see who
	// is in it.
	guard(func(v *viewer, o *store.Organization) (bool, error) { return v.member(o.ID), nil }, "Organization")
	guard(func(v *viewer, m *store.Member) (bool, error) { return v.orgReader(m.OrganizationID), nil }, "Member")
	guard(func(v *viewer, t *store.Team) (bool, error) { return v.orgReader(t.OrganizationID), nil }, "Team")
	guard(func(v *viewer, p *store.SAMLProvider) (bool, error) { return v.orgAdmin(p.OrganizationID), nil }, "SAMLProvider")
	guard(func(v *viewer, i *store.Invite) (bool, error) { return v.canReadInvite(i) }, "OrganizationInvite")

	// Organization-wide content: its readers.
	guard(func(v *viewer, s *store.OpenAPISpec) (bool, error) { return v.orgReader(s.OrganizationID), nil }, "OpenAPISpec")
	guard(func(v *viewer, c *store.Conversation) (bool, error) { return v.orgReader(c.OrganizationID), nil }, "Conversation")
	guard(func(v *viewer, i *store.ConversationIssue) (bool, error) { return v.orgReader(i.OrganizationID), nil },
		"ConversationIssue", "ConversationIssueItem")
	guard(func(v *viewer, c *store.IssuesCluster) (bool, error) { return v.orgReader(c.OrganizationID), nil }, "ConversationsIssuesCluster")

	// Integrations: public ones for everyone, private ones for their
	// organization's members; installations and events for the admins of
	// the organization they are in.
	guard(func(v *viewer, in *store.Integration) (bool, error) { return canSee(v.ctx, in), nil }, "Integration")
	guard(func(v *viewer, i *store.IntegrationInstallation) (bool, error) {
		return v.orgAdmin(i.OrganizationID), nil
	}, "IntegrationInstallation")
	guard(func(v *viewer, e *store.IntegrationEvent) (bool, error) { return v.orgAdmin(e.OrganizationID), nil }, "IntegrationEvent")
	guard(func(v *viewer, d *model.IntegrationEventDetail) (bool, error) {
		return v.orgAdmin(d.Event.OrganizationID), nil
	}, "IntegrationEventDetail")
	// The development URL and signing secret: the publisher's admins.
	guard(func(v *viewer, d *store.IntegrationDevelopment) (bool, error) {
		return v.orgAdmin(d.OrganizationID), nil
	}, "IntegrationDevelopment")
	guard(func(v *viewer, i *store.IntegrationSpaceInstallation) (bool, error) {
		return v.canAdministerSpaceID(i.SpaceID)
	}, "IntegrationSpaceInstallation")
	guard(func(v *viewer, i *store.IntegrationSiteInstallation) (bool, error) {
		return v.canAdministerSiteID(i.SiteID)
	}, "IntegrationSiteInstallation")
}

// derivedTypes are reachable only from guarded or derived objects (or from
// checkedFields), whose rule covers them: a space's URLs, a revision's
// files, a list of guarded items. Types only mutations answer are here too:
// a mutation checks what it changes.
var derivedTypes = []string{
	// Organizations and people.
	"AgentInstructions", "AgentInstructionsURLs", "OrganizationDefaultContent", "OrganizationInviteList",
	"OrganizationPermissions", "OrganizationTrial", "OrganizationURLs", "MergeRules", "MergeRule",
	"MemberList", "MemberTeam", "MemberTeamList", "MemberContentPermissionList", "TeamList", "TeamMember",
	"TeamMemberList", "TeamMemberPermissions", "TeamPermissions", "OrganizationTeamMember",
	"SAMLProviderList", "SAMLProviderService", "SAMLProviderURLs", "SSOProviderLogin", "SSOProviderLoginList",
	"User", "UserURLs", "UserContentPermission", "UserContentPermissionList", "TeamContentPermission",
	"TeamContentPermissionList",
	// Spaces and their content.
	"SpaceList", "SpacePermissions", "SpaceURLs", "CollectionList", "CollectionPermissions", "CollectionURLs",
	"GitSyncState", "RevisionURLs", "RevisionGit", "RevisionFile", "RevisionFileList", "FileDimensions",
	"GitSyncBlob", "RevisionPageURLs", "PageLayout", "ChangeRequestList", "ChangeRequestPDF", "ChangeRequestURLs",
	"ChangeRequestReview", "ChangeRequestReviewList", "ChangeRequestReviewURLs", "ChangeRequestRequestedReviewer",
	"ChangeRequestRequestedReviewerList", "CommentList", "CommentBody", "CommentPermissions", "CommentReaction",
	"CommentReactionUser", "CommentReplier", "CommentReplyList", "CommentTarget", "CommentTargetRef", "CommentURLs",
	"ContentLocationList", "ContentLocationURL", "VersionContext", "LinkList", "LinkItem", "LinkStats",
	"LinkBrokenStats", "SearchSpaceResultList", "SearchPageResultList", "SearchPageResult", "SearchSectionResult",
	"SearchAncestor", "SearchURLs", "TranslationList", "TranslationPermissions", "TranslationResult",
	"TranslationSource", "TranslationStats", "TranslationURLs",
	// Sites.
	"SiteList", "SiteURLs", "SiteProxy", "SiteFeature", "SiteAdaptiveContent", "SiteAdaptiveSchema", "SiteStructure",
	"SiteSectionGroupList", "SiteSectionList", "SiteSectionURLs", "SiteSpaceList", "SiteSpaceURLs",
	"PublishedContentSite", "PublishedSiteCustomizations", "SiteIntegrationScript", "SiteAdaptiveTemplateCondition",
	"SiteAdaptiveTemplateConditionList", "SiteShareLinkList", "SiteShareLinkURLs", "SiteRedirectList", "SiteRedirectDestination",
	"SiteRedirectMatch", "PublishedSiteContent", "PublishedContentRedirect",
	// Specifications and conversations.
	"OpenAPISpecList", "OpenAPISpecPermissions", "OpenAPISpecURLs", "OpenAPIErrorObject", "OpenAPISpecVersion",
	"OpenAPISpecVersionList", "OpenAPISpecVersionURLs", "OpenAPISpecContent", "ConversationList", "ConversationURLs",
	"ConversationDetail", "ConversationMetadata", "ConversationPart", "ConversationIssueList", "ConversationIssueURLs",
	"ConversationsIssuesClusterList", "ConversationsIssuesClusterStats", "ConversationsIssuesClusterURLs",
	// Integrations: what a visible integration shows of itself, and lists
	// of guarded installations and events.
	"IntegrationBlock", "IntegrationBlockMarkdown", "IntegrationConfigurations", "IntegrationConfigurationComponent",
	"IntegrationContentSource", "IntegrationExternalLink", "IntegrationPermissions", "IntegrationURLs",
	"IntegrationInstallationList", "IntegrationInstallationTarget", "IntegrationInstallationURLs",
	"IntegrationSpaceInstallationList", "IntegrationSiteInstallationList", "IntegrationContentInstallationURLs",
	"IntegrationEventList", "IntegrationEventTrace", "IntegrationEventLog", "LiveEvent",
	// Answers of mutations only.
	"JoinOrganizationResult", "MergeResult", "PingResult", "PutOpenAPISpecResult", "RequestReviewersResult",
}

// checkedFields hand out a derived type from an unguarded parent (a root
// field, a public card), and say why that is safe: their resolver checks
// the caller, or what they answer is the same for everyone.
var checkedFields = map[string]string{
	"OrganizationSummary.permissions":      "the caller's own permissions",
	"OrganizationSummary.urls":             "the organization's public addresses",
	"OrganizationSummary.mergeRules":       "a fixed value: not disclosed",
	"OrganizationSummary.trial":            "a fixed value: not disclosed",
	"Query.viewer":                         "the caller themselves",
	"Query.publishedContentSite":           "loads the site as Query.site does; its site and structure items are guarded",
	"Query.publishedContentByUrl":          "for readers of the site's organization's sites; walks the site as the visitor the address admits (ids, and a token of that visitor)",
	"Query.siteAdaptiveTemplateConditions": "loads the site as Query.site does",
	"Subscription.spaceEvents":             "checks the space when subscribing and at every event",
	"Subscription.siteEvents":              "checks the site when subscribing and at every event",
	"Subscription.integrationEvents":       "checks the integration's admins when subscribing and at every event",
	"Query.organizationsForEmailDomain":    "answers organizations' public cards, for the caller's own email domain only",
}

// publicTypes hold nothing private: anyone may be given them.
var publicTypes = map[string]string{
	"PageInfo":                 "where a list page ends",
	"ListNext":                 "the next page's cursor",
	"SpaceTemplate":            "the built-in templates, the same for everyone",
	"OrganizationList":         "a page of organizations, each guarded",
	"IntegrationList":          "a page of integrations, each guarded",
	"OrganizationSummary":      "an organization's public card: name, logo, addresses",
	"EmailDomainOrganizations": "a list of organizations' public cards",
	"RateLimit":                "the caller's own rate budget, as its own request left it",
}

// viewer is the caller of a request as the read rules see it, resolved once
// for a list of objects rather than for each.
type viewer struct {
	r      *Resolver
	ctx    context.Context
	caller *Caller // nil: nobody is signed in, and nothing guarded is readable
	// visitor, when set, is the reader of a published site the request
	// comes from (visitor.go): visitorRules decide for it, and caller is nil.
	visitor *Visitor
	l       *Loaders
	// roles are the caller's memberships when the viewer was made; one
	// gained later in the request (an organization just created) is asked
	// of the caller.
	roles map[string]*store.MemberRole
}

// viewer is the request's viewer, made once with its loaders: the direct
// writer asks for it once per guarded object.
func (r *Resolver) viewer(ctx context.Context) *viewer {
	l := r.loaders(ctx)
	l.viewerOnce.Do(func() {
		c, _ := CallerFrom(ctx)
		l.viewer = &viewer{r: r, ctx: ctx, caller: c, l: l, visitor: VisitorFrom(ctx)}
		if c != nil {
			l.viewer.roles = c.roleSnapshot()
		}
	})
	return l.viewer
}

// mayRead tells whether the viewer may read obj: true for objects of
// unguarded types (and nil pointers, which are null anyway).
func (v *viewer) mayRead(obj any) (bool, error) {
	if e, ok := obj.(edge); ok && e != nil {
		return v.mayRead(e.EdgeNode())
	}
	rule := readRules[reflect.TypeOf(obj)]
	if rule == nil {
		return true, nil
	}
	if rv := reflect.ValueOf(obj); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return true, nil
	}
	return v.decide(rule, obj)
}

// decide applies the read rule of obj's type for the viewer: rule for a
// user, the visitor's own rule for a visitor (none: not readable), nothing
// readable for nobody.
func (v *viewer) decide(rule readRule, obj any) (bool, error) {
	switch {
	case v.visitor != nil:
		// SECURITY: a visitor reads what visitorRules give it, nothing else.
		if vr := visitorRules[reflect.TypeOf(obj)]; vr != nil {
			return vr(v, obj)
		}
		return false, nil
	case v.caller == nil:
		return false, nil
	}
	return rule(v, obj)
}

// membership is the caller's role in orgID and whether they are a member.
func (v *viewer) membership(orgID string) (store.MemberRole, bool) {
	if role, ok := v.roles[orgID]; ok {
		if role == nil {
			return "", true
		}
		return *role, true
	}
	return v.caller.Membership(orgID)
}

// grantee is the caller as a grantee of orgID (access.go).
func (v *viewer) grantee(orgID string) grantee {
	role, member := v.membership(orgID)
	g := grantee{userID: v.caller.User.ID, member: member}
	if member && role != "" {
		g.role = &role
	}
	return g
}

func (v *viewer) member(orgID string) bool {
	_, member := v.membership(orgID)
	return member
}

// orgReader: a member holding at least read (guests hold no role).
func (v *viewer) orgReader(orgID string) bool {
	role, member := v.membership(orgID)
	return member && role.AtLeast(store.RoleRead)
}

func (v *viewer) orgAdmin(orgID string) bool {
	role, member := v.membership(orgID)
	return member && role == store.RoleAdmin
}

// siteManager: a member holding at least create, who manages the
// organization's sites (requireSiteManager).
func (v *viewer) siteManager(orgID string) bool {
	role, member := v.membership(orgID)
	return member && role.AtLeast(store.RoleCreate)
}

func (v *viewer) canReadSpace(s *store.Space) (bool, error) {
	if s == nil {
		return false, nil
	}
	if v.orgAdmin(s.OrganizationID) {
		return true, nil // as access.go decides, without building a grantee
	}
	role, err := v.r.spaceRoleOf(v.ctx, v.grantee(s.OrganizationID), s)
	return role != "", err
}

// canReadSpaceID decides for a space known by id (the owner of a revision,
// a comment...), once per request and space: a list of a thousand pages
// asks about the same space a thousand times. A deleted space's content is
// readable by nobody.
func (v *viewer) canReadSpaceID(id string) (bool, error) {
	if ok, found := v.l.readableSpaces.Load(id); found {
		return ok.(bool), nil
	}
	s, err := v.l.Space.Load(v.ctx, id)()
	if isNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	ok, err := v.canReadSpace(s)
	if err == nil {
		v.l.readableSpaces.Store(id, ok)
	}
	return ok, err
}

func (v *viewer) canReadCollection(c *store.Collection) (bool, error) {
	role, err := v.r.collectionRoleOf(v.ctx, v.grantee(c.OrganizationID), c)
	return role != "", err
}

// canReadSiteSpace: a reader of the site's organization who can read the
// space it publishes.
func (v *viewer) canReadSiteSpace(ss *store.SiteSpace) (bool, error) {
	role, member := v.membership(ss.OrganizationID)
	switch {
	case !member || !role.AtLeast(store.RoleRead):
		return false, nil
	case role == store.RoleAdmin:
		return true, nil // as access.go decides, without loading the space
	}
	if ok, found := v.l.readableSpaces.Load(ss.SpaceID); found {
		return ok.(bool), nil
	}
	// From the spaces of the site, read once for the whole tree.
	s, err := v.r.spaceOfSiteSpace(v.ctx, ss)
	if isNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	ok, err := v.canReadSpace(s)
	if err == nil {
		v.l.readableSpaces.Store(ss.SpaceID, ok)
	}
	return ok, err
}

// canReadInvite: the organization's admins, and while the organization
// accepts invite links, whoever holds the link (its id is the secret; only
// the admins can list them).
func (v *viewer) canReadInvite(i *store.Invite) (bool, error) {
	if v.orgAdmin(i.OrganizationID) {
		return true, nil
	}
	o, err := v.l.Organization.Load(v.ctx, i.OrganizationID)()
	if isNotFound(err) {
		return false, nil
	}
	return err == nil && o.InviteLinks, err
}

// canAdministerSpaceID and canAdministerSiteID: an admin of the
// organization of the space or site (installations on content are the
// admins' business).
func (v *viewer) canAdministerSpaceID(id string) (bool, error) {
	return adminOfOwner(v, v.l.Space.Load(v.ctx, id), func(s *store.Space) string { return s.OrganizationID })
}

func (v *viewer) canAdministerSiteID(id string) (bool, error) {
	return adminOfOwner(v, v.l.Site.Load(v.ctx, id), func(s *store.Site) string { return s.OrganizationID })
}

// adminOfOwner: an admin of the organization of what load loads (nothing
// when it is not found).
func adminOfOwner[T any](v *viewer, load func() (T, error), org func(T) string) (bool, error) {
	x, err := load()
	if isNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return v.orgAdmin(org(x)), nil
}

// readable keeps the items of list the viewer may read, in order; it
// returns list itself when they all are.
func readable[T any](v *viewer, list []T) ([]T, error) {
	for i, item := range list {
		ok, err := v.mayRead(item)
		if err != nil {
			return nil, err
		}
		if ok {
			continue
		}
		out := append(make([]T, 0, len(list)-1), list[:i]...)
		for _, item := range list[i+1:] {
			ok, err := v.mayRead(item)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, item)
			}
		}
		return out, nil
	}
	return list, nil
}

// authorizer is the field middleware that applies the read rules to what
// every field returns.
type authorizer struct {
	r *Resolver
	// guarded are the fields whose type (a guarded object, a list of them,
	// or an abstract type one of them implements) can hold a guarded
	// object; fields are found by their schema definition.
	guarded map[*ast.FieldDefinition]bool
}

var _ interface {
	graphql.HandlerExtension
	graphql.FieldInterceptor
} = (*authorizer)(nil)

func newAuthorizer(r *Resolver, schema *ast.Schema) *authorizer {
	a := &authorizer{r: r, guarded: map[*ast.FieldDefinition]bool{}}
	for _, t := range schema.Types {
		for _, f := range t.Fields {
			if holdsGuarded(schema, f.Type.Name()) {
				a.guarded[f] = true
			}
		}
	}
	return a
}

// holdsGuarded tells whether a value of the named type can be a guarded
// object, or an edge of one.
func holdsGuarded(schema *ast.Schema, name string) bool {
	t := schema.Types[name]
	if t == nil {
		return false
	}
	for _, possible := range schema.GetPossibleTypes(t) {
		if _, ok := guardedTypes[possible.Name]; ok {
			return true
		}
		if node := edgeNode(possible); node != "" && holdsGuarded(schema, node) {
			return true
		}
	}
	return false
}

// Edges (`SpaceEdge`: an item of a list with its cursor) are read as their
// item: an edge is readable when its node is, so a list's `edges` lose the
// items its `items` lose, in the same field middleware. They need no
// classification of their own: an edge of guarded items is guarded by their
// rule, an edge of derived items is derived (TestEveryObjectTypeIsClassified).
type edge interface{ EdgeNode() any }

// edgeNode is the type of the items of an edge type ("" for other types).
func edgeNode(def *ast.Definition) string {
	node := def.Fields.ForName("node")
	if def.Kind != ast.Object || !strings.HasSuffix(def.Name, "Edge") || node == nil || def.Fields.ForName("cursor") == nil {
		return ""
	}
	return node.Type.Name()
}

func (*authorizer) ExtensionName() string                   { return "Authorizer" }
func (*authorizer) Validate(graphql.ExecutableSchema) error { return nil }

func (a *authorizer) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	res, err := next(ctx)
	if err != nil || res == nil {
		return res, err
	}
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !a.guarded[fc.Field.Definition] {
		return res, nil
	}
	v := a.r.viewer(ctx)
	rv := reflect.ValueOf(res)
	if rv.Kind() != reflect.Slice {
		ok, err := v.mayRead(res)
		if err != nil {
			return nil, err
		}
		if !ok {
			// SECURITY: what the caller may not read does not exist for them.
			return nil, a.r.unchecked(ctx, fc, res, NotFound(fc.Field.Definition.Type.Name()))
		}
		return res, nil
	}
	// SECURITY: a list keeps only the items the caller may read.
	var kept reflect.Value
	for i := range rv.Len() {
		item := rv.Index(i)
		ok, err := v.mayRead(item.Interface())
		if err != nil {
			return nil, err
		}
		switch {
		case !ok && !kept.IsValid():
			kept = reflect.AppendSlice(reflect.MakeSlice(rv.Type(), 0, rv.Len()-1), rv.Slice(0, i))
			fallthrough
		case !ok:
			if err := a.r.unchecked(ctx, fc, item.Interface(), nil); err != nil {
				return nil, err
			}
		case kept.IsValid():
			kept = reflect.Append(kept, item)
		}
	}
	if kept.IsValid() {
		return kept.Interface(), nil
	}
	return res, nil
}

// errUnchecked fails a request, in strict mode, whose resolvers let through
// an object the caller may not read. It is an internal error: never shown.
var errUnchecked = &uncheckedError{}

type uncheckedError struct{}

func (*uncheckedError) Error() string {
	return "authorization: a resolver returned an object the caller may not read"
}

// unchecked reports an object the authorizer had to withhold: the resolver
// that returned it should have checked it. The answer stays safe (the
// object is not found, or left out of its list: answer), but a list's count
// or page may now disagree with its items, so it is logged as an error, and
// in strict mode it fails the request.
func (r *Resolver) unchecked(ctx context.Context, fc *graphql.FieldContext, obj any, answer error) error {
	r.Log.ErrorContext(ctx, "authorization: withheld an object a resolver returned",
		"field", fc.Object+"."+fc.Field.Name, "type", reflect.TypeOf(obj).String())
	if r.StrictAuthorization {
		return errUnchecked
	}
	return answer
}
