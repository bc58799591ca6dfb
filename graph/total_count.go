package graph

import (
	"context"

	"github.com/docsapi/docsapi/store"
)

// The totals of lists (`totalCount`, GitHub's and Relay's convention): the
// number of items of the whole list the caller can see, every page. A
// list's `count` is the number of items in the page (the specification,
// 1.2) and costs nothing; the total is a field of its own, computed only
// when selected (model.List.TotalCount), priced once per list
// (TotalCountCost), and it costs the same whatever the list's length:
//
//   - a list read whole to answer any page (a site's structure, search
//     results, links, a revision's files, a comment's replies) knows it:
//     totalIs;
//   - the lists of spaces and collections, which grow with the
//     organization, read the counts the database keeps in the transaction
//     that writes the rows (store/content_counts.go, migration 0048):
//     spaceTotal, collectionTotal.
//
// The other lists have no totalCount: theirs would be a count over their
// rows, which a page never runs. The counts the specification puts on
// objects (a space's open comments and change requests, a comment's
// replies, a member's spaces and teams, a team's members and spaces) are
// kept the same way.

// totalIs is the total of a list read whole to answer any page.
func totalIs(n int) func(context.Context) (int, error) {
	return func(context.Context) (int, error) { return n, nil }
}

// spaceTotal is the total of a list of orgID's live spaces, those directly
// in collection parent or, with parent nil, all of them, as readers all see
// them (a member's spaces are those the member and the caller can both
// read).
//
// SECURITY: a total counts what every reader may read, decided by the rule
// that decides each item (orgAccess.spaceRole), so it tells nothing of the
// others:
//   - readers who all administer the organization see every space: the
//     organization's count, or the parent's groups added up;
//   - otherwise each group (store.ContentGroup: the spaces that share a
//     parent, a default level and in-collection visibility) is decided as
//     one of its spaces without a grant of its own would be, and counted
//     whole when every reader may read it; then the spaces granted to
//     someone on themselves (a grant is what can open a space its group
//     keeps closed) that lie in a group left closed are decided one by
//     one. The work follows the organization's collections (the access
//     snapshot every member's request reads) and its grants, never its
//     spaces.
func (r *Resolver) spaceTotal(orgID string, parent *string, readers ...grantee) func(context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		seesAll := true
		for _, g := range readers {
			if !g.member {
				return 0, nil
			}
			seesAll = seesAll && g.isAdmin()
		}
		if seesAll {
			if parent == nil {
				t, err := r.loaders(ctx).ContentTotals.Load(ctx, orgID)()
				return t.Spaces, err
			}
			groups, err := store.ContentGroupsIn(ctx, r.DB, orgID, store.CountedSpaces, *parent)
			return sumOf(groups, func(*store.ContentGroup) bool { return true }), err
		}
		a, groups, err := r.accessAndGroups(ctx, orgID)
		if err != nil {
			return 0, err
		}
		in := func(p *string) bool { return parent == nil || (p != nil && *p == *parent) }
		readable := func(s *store.AccessNode) bool {
			for _, g := range readers {
				if a.spaceRole(g, s) == "" {
					return false
				}
			}
			return true
		}
		n := sumOf(groups, func(gr *store.ContentGroup) bool {
			return gr.Kind == store.CountedSpaces && in(gr.ParentID) && readable(gr.Node())
		})
		granted, err := r.loaders(ctx).GrantedSpaces.Load(ctx, orgID)()
		if err != nil {
			return 0, err
		}
		for _, s := range granted {
			inGroup := *s
			inGroup.ID = "" // the space as its group is decided: without its own grants
			if in(s.ParentID) && !readable(&inGroup) && readable(s) {
				n++
			}
		}
		return n, nil
	}
}

// collectionTotal is the total of the collections of orgID (the top-level
// ones only with topLevel) that g can read.
//
// SECURITY: by the rule that decides each collection (orgAccess.roleOn, as
// collectionRoleOf): an admin sees them all, counted by the database; any
// other member is counted over the access snapshot their request holds
// already (an organization's collections are in it, few beside its spaces),
// with no query.
func (r *Resolver) collectionTotal(orgID string, topLevel bool, g grantee) func(context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		switch {
		case !g.member:
			return 0, nil
		case g.isAdmin() && topLevel:
			groups, err := store.ContentGroupsIn(ctx, r.DB, orgID, store.CountedCollections, "")
			return sumOf(groups, func(*store.ContentGroup) bool { return true }), err
		case g.isAdmin():
			t, err := r.loaders(ctx).ContentTotals.Load(ctx, orgID)()
			return t.Collections, err
		}
		a, err := r.access(ctx, orgID)
		if err != nil {
			return 0, err
		}
		n := 0
		for _, c := range a.Collections {
			if (!topLevel || c.ParentID == nil) && a.roleOn(g, c.ID, c.ParentID, c.DefaultLevel).AtLeast(store.RoleRead) {
				n++
			}
		}
		return n, nil
	}
}

// teamSpaces is the number of live spaces of orgID a grant to team reaches,
// on the space or on a collection enclosing it: the groups of the
// collections its grants reach, and the spaces granted to it outside them.
func (r *Resolver) teamSpaces(ctx context.Context, orgID, team string) (int, error) {
	a, groups, err := r.accessAndGroups(ctx, orgID)
	if err != nil {
		return 0, err
	}
	// The grants on a collection reach its spaces; "" is no space's id, so
	// only the grants on the parent and the collections above it count.
	reached := func(parent *string) bool { return parent != nil && a.teamReaches(team, "", parent) }
	n := sumOf(groups, func(gr *store.ContentGroup) bool { return gr.Kind == store.CountedSpaces && reached(gr.ParentID) })
	granted, err := r.loaders(ctx).GrantedSpaces.Load(ctx, orgID)()
	if err != nil {
		return 0, err
	}
	for _, s := range granted {
		if !reached(s.ParentID) && a.teamReaches(team, s.ID, s.ParentID) {
			n++
		}
	}
	return n, nil
}

// accessAndGroups are orgID's access snapshot and its counted groups, as
// the request's loaders hold them.
func (r *Resolver) accessAndGroups(ctx context.Context, orgID string) (*orgAccess, []*store.ContentGroup, error) {
	a, err := r.access(ctx, orgID)
	if err != nil {
		return nil, nil, err
	}
	groups, err := r.loaders(ctx).ContentGroups.Load(ctx, orgID)()
	return a, groups, err
}

// sumOf adds up the items of the groups keep keeps.
func sumOf(groups []*store.ContentGroup, keep func(*store.ContentGroup) bool) int {
	n := 0
	for _, g := range groups {
		if keep(g) {
			n += g.N
		}
	}
	return n
}
