package graph

import (
	"context"
	"slices"

	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Who holds which role in an organization and on its content, and what each
// role may do. Resolvers check roles with the functions of this file;
// graph/authorize.go holds the read rules that apply the same decisions to
// every object a response carries; docs/authorization.md is the overview.
//
// Organization roles. A member of an organization holds one of the roles
// admin, create, review, edit, comment and read (most to least powerful,
// store.MemberRole), or none: a guest. A disabled member is no member.
// Actions on the organization itself (its settings, members, teams,
// invites, SSO, integrations) need an organization role (orgRole,
// requireOrgRole). The organization's content outside spaces (sites,
// OpenAPI specifications, translations, conversation insights) follows the
// organization role too, from read up (contentRole, requireContentRole):
// grants and default levels do not apply to it, so guests see none of it.
//
// Roles on spaces and collections. A member's role on a space or a
// collection is the best of:
//
//   - admin, for the organization's admins, on everything;
//   - the default level: the item's defaultLevel, or, while it is
//     `inherit`, that of the enclosing collections, up to the organization,
//     where it is the member's organization role (guests: nothing). A level
//     set on the way applies to every member, guests included, whatever
//     their organization role; a null level (guest) gives nothing;
//   - the grants (store.Grant) to the member or to one of their teams on
//     the item or on any enclosing collection.
//
// A space whose visibility is in-collection is also readable by whoever can
// read its collection. This is computed in memory from store.OrgAccess, read
// once per request and organization (spaceRole, collectionRole).
//
// Not found or forbidden. Without at least read, a thing does not exist for
// the caller: 404 on reads and writes, exactly as for one that does not
// exist, and absent from lists, so another organization's resources, or
// content not shared with the caller, are indistinguishable from missing
// ones. With read but less than an action needs, the answer is 403.
//
// Scoped callers. A single sign-on session acts in its own organization
// only: requireReach refuses it anything elsewhere (403) before anything
// there is read.
//
// Checks are marked "SECURITY:" so an audit is a grep.

// orgRole returns the caller's role in orgID, or NotFound(what) when they are
// not a member (so another tenant's resources are indistinguishable from
// missing ones).
func orgRole(ctx context.Context, orgID, what string) (role store.MemberRole, err error) {
	caller, err := CallerFrom(ctx)
	if err != nil {
		return "", err
	}
	role, member := caller.Membership(orgID)
	if !member {
		return "", NotFound(what)
	}
	return role, nil
}

// requireUnscoped refuses (403) a caller whose token is confined to one
// organization: doing is what it may not do, beyond that organization.
func requireUnscoped(ctx context.Context, doing string) error {
	return requireReach(ctx, "", doing) // "" is no scoped caller's organization
}

// requireReach refuses (403) a scoped caller an action on an organization
// other than its own, before anything of that organization is read (so the
// answer says nothing about it).
func requireReach(ctx context.Context, orgID, doing string) error {
	caller, err := CallerFrom(ctx)
	if err != nil {
		return err
	}
	// SECURITY: a SAML sign-in's session acts in its organization only.
	if caller.Scope() != "" && caller.Scope() != orgID {
		return Forbidden("this token is a single sign-on session of organization %s and acts there only: it cannot %s", caller.Scope(), doing)
	}
	return nil
}

// requireOrgRole checks the caller holds at least min in orgID: 404 when they
// are not a member, 403 when their role is too low.
func requireOrgRole(ctx context.Context, orgID string, min store.MemberRole, what string) error {
	role, err := orgRole(ctx, orgID, what)
	if err != nil {
		return err
	}
	if !role.AtLeast(min) {
		return Forbidden("this needs the %s role or higher in the organization", min)
	}
	return nil
}

// contentRole is the caller's role on the content of orgID that follows the
// organization role (a site, an OpenAPI specification, a translation): 404
// when they may not even read it. Spaces and collections have their own
// roles (spaceRole, collectionRole).
func contentRole(ctx context.Context, orgID, what string) (store.MemberRole, error) {
	role, err := orgRole(ctx, orgID, what)
	if err != nil {
		return "", err
	}
	// SECURITY: guests see only the spaces and collections shared with them
	// (levels and grants); the content this covers cannot be shared.
	if !role.AtLeast(store.RoleRead) {
		return "", NotFound(what)
	}
	return role, nil
}

// canListContent reports whether the caller may list the content of orgID
// that follows the organization role (sites): its readers may; its guests
// see nothing (such content cannot be shared with them); anyone else gets
// NotFound for the organization.
func canListContent(ctx context.Context, orgID string) (bool, error) {
	role, err := orgRole(ctx, orgID, "organization")
	if err != nil {
		return false, err
	}
	return role.AtLeast(store.RoleRead), nil
}

// requireContentRole checks the caller holds at least min on content of orgID.
func requireContentRole(ctx context.Context, orgID string, min store.MemberRole, what string) error {
	role, err := contentRole(ctx, orgID, what)
	if err != nil {
		return err
	}
	if !role.AtLeast(min) {
		return Forbidden("this needs the %s role or higher on this %s", min, what)
	}
	return nil
}

// orgAccess is an organization's store.OrgAccess, indexed.
type orgAccess struct {
	*store.OrgAccess
	collections map[string]*store.AccessNode
	grantsOn    map[string][]*store.Grant // by space or collection id
}

func newOrgAccess(a *store.OrgAccess) *orgAccess {
	x := &orgAccess{OrgAccess: a, collections: map[string]*store.AccessNode{}, grantsOn: map[string][]*store.Grant{}}
	for _, c := range a.Collections {
		x.collections[c.ID] = c
	}
	for _, g := range a.Grants {
		target := g.CollectionID
		if g.SpaceID != nil {
			target = g.SpaceID
		}
		x.grantsOn[*target] = append(x.grantsOn[*target], g)
	}
	return x
}

// grantee is someone whose role is asked: a user, their organization role
// (nil: guest) and whether they are a member at all.
type grantee struct {
	userID string
	role   *store.MemberRole
	member bool
}

// roleOn is g's role on the item with this id, parent and default level.
func (a *orgAccess) roleOn(g grantee, id string, parent *string, level *store.DefaultLevel) store.MemberRole {
	if !g.member {
		return ""
	}
	if g.isAdmin() {
		return store.RoleAdmin
	}
	best := a.defaultLevel(g.role, parent, level)
	teams := a.TeamsOf[g.userID]
	for _, target := range a.lineage(id, parent) {
		for _, gr := range a.grantsOn[target] {
			if (gr.UserID != nil && *gr.UserID == g.userID) || (gr.TeamID != nil && slices.Contains(teams, *gr.TeamID)) {
				best = maxRole(best, gr.Role)
			}
		}
	}
	return best
}

// lineage is an item's id followed by those of its enclosing collections,
// innermost first: the places whose grants apply to it.
func (a *orgAccess) lineage(id string, parent *string) []string {
	out := []string{id}
	for parent != nil && len(out) <= len(a.collections) { // bounded, should the data hold a cycle
		c := a.collections[*parent]
		if c == nil {
			break
		}
		out = append(out, c.ID)
		parent = c.ParentID
	}
	return out
}

// teamReaches tells whether a grant to team applies to the item with this
// id and parent.
func (a *orgAccess) teamReaches(team, id string, parent *string) bool {
	for _, target := range a.lineage(id, parent) {
		for _, gr := range a.grantsOn[target] {
			if gr.TeamID != nil && *gr.TeamID == team {
				return true
			}
		}
	}
	return false
}

// defaultLevel resolves the default level of an item for a member whose
// organization role is role (nil: a guest). A level set on the item or an
// enclosing collection applies to every member, guests included; at the
// organization, where every level inherits from, members hold their
// organization role and guests nothing.
func (a *orgAccess) defaultLevel(role *store.MemberRole, parent *string, level *store.DefaultLevel) store.MemberRole {
	for depth := 0; depth <= len(a.collections); depth++ {
		switch {
		case level == nil:
			return "" // guest level: nothing by default
		case *level != store.DefaultLevelInherit:
			return store.MemberRole(*level)
		case parent == nil || a.collections[*parent] == nil:
			if role == nil {
				return ""
			}
			return *role
		}
		c := a.collections[*parent]
		parent, level = c.ParentID, c.DefaultLevel
	}
	return ""
}

func maxRole(a, b store.MemberRole) store.MemberRole {
	if b.Rank() > a.Rank() {
		return b
	}
	return a
}

// callerGrantee is the caller of ctx as a grantee in orgID.
func callerGrantee(ctx context.Context, orgID string) (grantee, error) {
	caller, err := CallerFrom(ctx)
	if err != nil {
		return grantee{}, err
	}
	return granteeOf(caller, orgID), nil
}

// granteeOf is caller as a grantee in orgID.
func granteeOf(caller *Caller, orgID string) grantee {
	role, member := caller.Membership(orgID)
	g := grantee{userID: caller.User.ID, member: member}
	if member && role != "" {
		g.role = &role
	}
	return g
}

// isAdmin reports whether g administers the organization: an admin is admin
// on all of its content, whatever the levels and grants.
func (g grantee) isAdmin() bool { return g.member && g.role != nil && *g.role == store.RoleAdmin }

// memberGrantee is a member as a grantee.
func memberGrantee(m *store.Member) grantee {
	return grantee{userID: m.UserID, role: m.Role, member: !m.Disabled}
}

// access returns the request's orgAccess of orgID.
func (r *Resolver) access(ctx context.Context, orgID string) (*orgAccess, error) {
	return r.loaders(ctx).OrgAccess.Load(ctx, orgID)()
}

// orgSpaces returns every space of orgID (oldest first) with the request's
// orgAccess, for lists and counts over all of them.
func (r *Resolver) orgSpaces(ctx context.Context, orgID string) (*orgAccess, []*store.AccessNode, error) {
	a, err := r.access(ctx, orgID)
	if err != nil {
		return nil, nil, err
	}
	spaces, err := r.loaders(ctx).OrgSpaces.Load(ctx, orgID)()
	return a, spaces, err
}

// spaceRoleOf is g's role on space s.
func (r *Resolver) spaceRoleOf(ctx context.Context, g grantee, s *store.Space) (store.MemberRole, error) {
	if !g.member {
		return "", nil
	}
	if g.isAdmin() {
		return store.RoleAdmin, nil // as roleOn decides, without reading the organization's access
	}
	a, err := r.access(ctx, s.OrganizationID)
	if err != nil {
		return "", err
	}
	return spaceRoleIn(a, g, s), nil
}

// spaceRoleIn is g's role on space s given its organization's access a,
// which only members who are not admins need (nil will do for others).
func spaceRoleIn(a *orgAccess, g grantee, s *store.Space) store.MemberRole {
	if !g.member {
		return ""
	}
	if g.isAdmin() {
		return store.RoleAdmin
	}
	// The space's own parent, level and visibility come from the row at
	// hand, which may be newer than the access snapshot.
	return a.spaceRole(g, &store.AccessNode{ID: s.ID, ParentID: s.ParentID, DefaultLevel: s.DefaultLevel, Visibility: s.Visibility})
}

// spaceRole is g's role on a space, "" below read. A space whose visibility
// is in-collection is readable by whoever can read its collection.
func (a *orgAccess) spaceRole(g grantee, s *store.AccessNode) store.MemberRole {
	role := a.roleOn(g, s.ID, s.ParentID, s.DefaultLevel)
	if s.Visibility == store.VisibilityInCollection && s.ParentID != nil && !role.AtLeast(store.RoleRead) {
		if c := a.collections[*s.ParentID]; c != nil && a.roleOn(g, c.ID, c.ParentID, c.DefaultLevel).AtLeast(store.RoleRead) {
			role = store.RoleRead
		}
	}
	if role.AtLeast(store.RoleRead) {
		return role
	}
	return ""
}

// collectionRoleOf is g's role on collection c.
func (r *Resolver) collectionRoleOf(ctx context.Context, g grantee, c *store.Collection) (store.MemberRole, error) {
	if !g.member {
		return "", nil
	}
	if g.isAdmin() {
		return store.RoleAdmin, nil
	}
	a, err := r.access(ctx, c.OrganizationID)
	if err != nil {
		return "", err
	}
	role := a.roleOn(g, c.ID, c.ParentID, c.DefaultLevel)
	if role.AtLeast(store.RoleRead) {
		return role, nil
	}
	return "", nil
}

// spaceRole is the caller's role on s: NotFound when they may not read it.
func (r *Resolver) spaceRole(ctx context.Context, s *store.Space) (store.MemberRole, error) {
	g, err := callerGrantee(ctx, s.OrganizationID)
	if err != nil {
		return "", err
	}
	role, err := r.spaceRoleOf(ctx, g, s)
	if err == nil && role == "" {
		return "", NotFound("space")
	}
	return role, err
}

// requireSpaceRole checks the caller holds at least min on s: 404 when they
// cannot read it, 403 when they can but hold less.
func (r *Resolver) requireSpaceRole(ctx context.Context, s *store.Space, min store.MemberRole) error {
	role, err := r.spaceRole(ctx, s)
	if err != nil {
		return err
	}
	if !role.AtLeast(min) {
		return Forbidden("this needs the %s role or higher on this space", min)
	}
	return nil
}

// collectionRole is the caller's role on c: NotFound when they may not read it.
func (r *Resolver) collectionRole(ctx context.Context, c *store.Collection) (store.MemberRole, error) {
	g, err := callerGrantee(ctx, c.OrganizationID)
	if err != nil {
		return "", err
	}
	role, err := r.collectionRoleOf(ctx, g, c)
	if err == nil && role == "" {
		return "", NotFound("collection")
	}
	return role, err
}

// requireCollectionRole checks the caller holds at least min on c.
func (r *Resolver) requireCollectionRole(ctx context.Context, c *store.Collection, min store.MemberRole) error {
	role, err := r.collectionRole(ctx, c)
	if err != nil {
		return err
	}
	if !role.AtLeast(min) {
		return Forbidden("this needs the %s role or higher on this collection", min)
	}
	return nil
}

// organizationPermissions is what role may do in an organization.
func organizationPermissions(role store.MemberRole, member bool) *model.OrganizationPermissions {
	admin := role.AtLeast(store.RoleAdmin)
	reader := role.AtLeast(store.RoleRead)
	return &model.OrganizationPermissions{
		View:                member,
		Admin:               admin,
		OwnTeam:             admin, // admins create teams, and own those they create
		CreateContent:       role.AtLeast(store.RoleCreate),
		CreateOpenAPISpec:   role.AtLeast(store.RoleCreate),
		IngestConversations: admin,
		ViewBilling:         admin,
		ListMembers:         reader,
		ListTeams:           reader,
		ListIntegrations:    reader,
		ListInstallations:   admin,
		InstallIntegration:  admin,
	}
}

// spacePermissions is what role may do with a space.
func spacePermissions(role store.MemberRole) *model.SpacePermissions {
	admin := role.AtLeast(store.RoleAdmin)
	edit := role.AtLeast(store.RoleEdit)
	return &model.SpacePermissions{
		View:               role.AtLeast(store.RoleRead),
		Access:             role.AtLeast(store.RoleRead),
		Admin:              admin,
		ViewInviteLinks:    admin,
		Edit:               edit,
		TriggerGitSync:     edit,
		Comment:            role.AtLeast(store.RoleComment),
		Merge:              edit,
		Review:             role.AtLeast(store.RoleReview),
		InstallIntegration: admin,
	}
}
