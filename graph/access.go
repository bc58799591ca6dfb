package graph

import (
	"context"
	"slices"

	"github.com/docsapi/docsapi/store"
)

// One permission model for an organization's content. A member's role on a
// space or a collection is the best of:
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
// No role (read being the least) means the item does not exist for them: 404
// on reads and writes, and absent from lists. Everything here is computed in
// memory from store.OrgAccess, read once per request and organization.

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
	role, member := caller.Membership(orgID)
	g := grantee{userID: caller.User.ID, member: member}
	if member && role != "" {
		g.role = &role
	}
	return g, nil
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
	// The space's own parent, level and visibility come from the row at
	// hand, which may be newer than the request's access snapshot.
	return a.spaceRole(g, &store.AccessNode{ID: s.ID, ParentID: s.ParentID, DefaultLevel: s.DefaultLevel, Visibility: s.Visibility}), nil
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

// pageVisible reads a page of a list whose rows the reader may not all see:
// it fetches pages of the underlying list until it has one more visible row
// than asked (or the list ends), so keyset pagination stays exact.
func pageVisible[T any](p store.Page, fetch func(store.Page) ([]T, error), visible func(T) (bool, error), key func(T) store.Keyset) ([]T, error) {
	var out []T
	q := p
	for {
		rows, err := fetch(q)
		if err != nil {
			return nil, err
		}
		for i, row := range rows {
			if i == q.Limit {
				break // the look-ahead row: fetched again by the next round
			}
			ok, err := visible(row)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, row)
				if len(out) > p.Limit {
					return out, nil
				}
			}
		}
		if len(rows) <= q.Limit {
			return out, nil
		}
		k := key(rows[q.Limit-1])
		q.After = &k
	}
}
