package graph

import (
	"cmp"
	"context"
	"slices"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Grants: roles given to users and teams on a space or a collection (see
// access.go for how they combine with default levels). The target's admins
// manage and list them. Spaces and collections share every step here
// through contentTarget.

// contentTarget is a space or a collection whose grants are managed.
type contentTarget struct {
	space      *store.Space
	collection *store.Collection
}

func (t contentTarget) orgID() string {
	if t.space != nil {
		return t.space.OrganizationID
	}
	return t.collection.OrganizationID
}

func (t contentTarget) grantTarget() store.GrantTarget {
	if t.space != nil {
		return store.GrantTarget{OrganizationID: t.space.OrganizationID, SpaceID: &t.space.ID}
	}
	return store.GrantTarget{OrganizationID: t.collection.OrganizationID, CollectionID: &t.collection.ID}
}

// roleOf is g's role on the target.
func (r *Resolver) roleOf(ctx context.Context, t contentTarget, g grantee) (store.MemberRole, error) {
	if t.space != nil {
		return r.spaceRoleOf(ctx, g, t.space)
	}
	return r.collectionRoleOf(ctx, g, t.collection)
}

// requireTargetAdmin checks the caller administers the target.
func (r *Resolver) requireTargetAdmin(ctx context.Context, t contentTarget) error {
	// SECURITY: grants are managed, and listed, by the target's admins.
	if t.space != nil {
		return r.requireSpaceRole(ctx, t.space, store.RoleAdmin)
	}
	return r.requireCollectionRole(ctx, t.collection, store.RoleAdmin)
}

// spaceTarget reads a live space the caller administers.
func (r *Resolver) spaceTarget(ctx context.Context, id string) (contentTarget, error) {
	s, err := r.space(ctx, id)
	if err != nil {
		return contentTarget{}, err
	}
	t := contentTarget{space: s}
	return t, r.requireTargetAdmin(ctx, t)
}

// collectionTarget reads a collection the caller administers.
func (r *Resolver) collectionTarget(ctx context.Context, id string) (contentTarget, error) {
	c, err := r.collection(ctx, id)
	if err != nil {
		return contentTarget{}, err
	}
	t := contentTarget{collection: c}
	return t, r.requireTargetAdmin(ctx, t)
}

// invite grants input.role to input.users and input.teams on t.
func (r *Resolver) invite(ctx context.Context, t contentTarget, input model.InviteToContentInput) (bool, error) {
	role, err := grantRole(input.Role)
	if err != nil {
		return false, err
	}
	users, _ := input.Users.ValueOK()
	teams, _ := input.Teams.ValueOK()
	if len(users) == 0 && len(teams) == 0 {
		return false, BadRequest("give at least one of users and teams")
	}
	users, teams = slices.Compact(slices.Sorted(slices.Values(users))), slices.Compact(slices.Sorted(slices.Values(teams)))
	err = r.changeGrants(ctx, t, func(ctx context.Context, tx bun.Tx) error {
		known, err := store.MemberIDsIn(ctx, tx, t.orgID(), users)
		if err != nil {
			return err
		}
		for _, u := range users {
			if !slices.Contains(known, u) {
				return NotFound("user " + u)
			}
		}
		for _, id := range teams {
			if _, err := store.GetTeam(ctx, tx, t.orgID(), id); err != nil {
				return orNotFound(err, "team "+id)
			}
		}
		return store.SetGrants(ctx, tx, t.grantTarget(), users, teams, role, r.now())
	})
	return err == nil, err
}

// grantRole reads the role of a grant: a role, never null.
func grantRole(in interface {
	ValueOK() (*store.MemberRole, bool)
}) (store.MemberRole, error) {
	role, _ := in.ValueOK()
	if role == nil {
		return "", Invalid("role", "is required: a grant gives a role (remove the grant to take access away)")
	}
	return *role, nil
}

// updateGrant changes the role of a user's or team's grant on t: NotFound
// when they have none.
func (r *Resolver) updateGrant(ctx context.Context, t contentTarget, userID, teamID *string, input model.UpdateContentPermissionInput) (bool, error) {
	role, err := grantRole(input.Role)
	if err != nil {
		return false, err
	}
	err = r.changeGrants(ctx, t, func(ctx context.Context, tx bun.Tx) error {
		found, err := store.UpdateGrant(ctx, tx, t.grantTarget(), userID, teamID, role)
		if err == nil && !found {
			return NotFound("permission")
		}
		return err
	})
	return err == nil, err
}

// removeGrant removes a user's or team's grant on t; false when there was none.
func (r *Resolver) removeGrant(ctx context.Context, t contentTarget, userID, teamID *string) (bool, error) {
	removed := false
	err := r.changeGrants(ctx, t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		removed, err = store.RemoveGrant(ctx, tx, t.grantTarget(), userID, teamID)
		return err
	})
	return removed, err
}

// changeGrants runs fn under the organization's lock, then forgets the
// request's access snapshot, which fn made stale.
func (r *Resolver) changeGrants(ctx context.Context, t contentTarget, fn func(ctx context.Context, tx bun.Tx) error) error {
	err := store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		if err := store.LockOrganization(ctx, tx, t.orgID()); err != nil {
			return err
		}
		return fn(ctx, tx)
	})
	r.loaders(ctx).OrgAccess.Clear(ctx, t.orgID())
	return err
}

// userGrants lists the user grants on t.
func (r *Resolver) userGrants(ctx context.Context, t contentTarget, page *string, limit *int) (*model.UserContentPermissionList, error) {
	return grantList(ctx, r, t, page, limit, false, func(g *store.Grant) (*model.UserContentPermission, error) {
		u, err := r.loaders(ctx).User.Load(ctx, *g.UserID)()
		if err != nil {
			return nil, err
		}
		return &model.UserContentPermission{Permission: g.Role, User: u}, nil
	})
}

// teamGrants lists the team grants on t.
func (r *Resolver) teamGrants(ctx context.Context, t contentTarget, page *string, limit *int) (*model.TeamContentPermissionList, error) {
	return grantList(ctx, r, t, page, limit, true, func(g *store.Grant) (*model.TeamContentPermission, error) {
		team, err := store.GetTeam(ctx, r.DB, t.orgID(), *g.TeamID)
		if err != nil {
			return nil, err
		}
		return &model.TeamContentPermission{Permission: g.Role, Team: team}, nil
	})
}

// grantList lists the grants on t to users or, with ofTeams, to teams, to
// its admins, each as the schema's view of it: the user and team grants
// are one list of the store's, ordered by creation then grantee.
func grantList[V any](ctx context.Context, r *Resolver, t contentTarget, page *string, limit *int, ofTeams bool, view func(*store.Grant) (V, error)) (*model.List[V], error) {
	if err := r.requireTargetAdmin(ctx, t); err != nil {
		return nil, err
	}
	grants, err := paginate(page, limit, listQuery[*store.Grant]{
		read: func(p store.Page) ([]*store.Grant, error) {
			return store.ListGrants(ctx, r.DB, t.grantTarget(), ofTeams, p)
		},
		key: func(g *store.Grant) store.Keyset {
			grantee := g.UserID
			if ofTeams {
				grantee = g.TeamID
			}
			return store.Keyset{Time: g.CreatedAt, ID: *grantee}
		},
	})
	if err != nil {
		return nil, err
	}
	return mapList(grants, view)
}

// aggregate lists every member with a role on t (one role, with role), by
// user id.
func (r *Resolver) aggregate(ctx context.Context, t contentTarget, page *string, limit *int, role *store.MemberRole) (*model.UserContentPermissionList, error) {
	if err := r.requireTargetAdmin(ctx, t); err != nil {
		return nil, err
	}
	members, err := store.AllMembers(ctx, r.DB, t.orgID())
	if err != nil {
		return nil, err
	}
	slices.SortFunc(members, func(a, b *store.Member) int { return cmp.Compare(a.UserID, b.UserID) })
	var all []*model.UserContentPermission
	for _, m := range members {
		got, err := r.roleOf(ctx, t, memberGrantee(m))
		if err != nil {
			return nil, err
		}
		if got != "" && (role == nil || got == *role) {
			all = append(all, &model.UserContentPermission{Permission: got, User: &store.User{ID: m.UserID}})
		}
	}
	list, err := paginateOrdered(all, page, limit, func(p *model.UserContentPermission) string { return p.User.ID })
	if err != nil {
		return nil, err
	}
	for _, it := range list.Items {
		if it.User, err = r.loaders(ctx).User.Load(ctx, it.User.ID)(); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// The resolvers: spaces and collections alike.

func (r *spaceResolver) UserPermissions(ctx context.Context, s *store.Space, page *string, limit *int, _ *int, _ *string) (*model.UserContentPermissionList, error) {
	return r.userGrants(ctx, contentTarget{space: s}, page, limit)
}

func (r *spaceResolver) TeamPermissions(ctx context.Context, s *store.Space, page *string, limit *int, _ *int, _ *string) (*model.TeamContentPermissionList, error) {
	return r.teamGrants(ctx, contentTarget{space: s}, page, limit)
}

func (r *spaceResolver) PermissionsAggregate(ctx context.Context, s *store.Space, page *string, limit *int, _ *int, _ *string, role *store.MemberRole) (*model.UserContentPermissionList, error) {
	return r.aggregate(ctx, contentTarget{space: s}, page, limit, role)
}

func (r *collectionResolver) UserPermissions(ctx context.Context, c *store.Collection, page *string, limit *int, _ *int, _ *string) (*model.UserContentPermissionList, error) {
	return r.userGrants(ctx, contentTarget{collection: c}, page, limit)
}

func (r *collectionResolver) TeamPermissions(ctx context.Context, c *store.Collection, page *string, limit *int, _ *int, _ *string) (*model.TeamContentPermissionList, error) {
	return r.teamGrants(ctx, contentTarget{collection: c}, page, limit)
}

func (r *collectionResolver) PermissionsAggregate(ctx context.Context, c *store.Collection, page *string, limit *int, _ *int, _ *string, role *store.MemberRole) (*model.UserContentPermissionList, error) {
	return r.aggregate(ctx, contentTarget{collection: c}, page, limit, role)
}

// withSpace and withCollection run a grant operation on a target the caller
// administers.
func (r *Resolver) withSpace(ctx context.Context, id string, op func(contentTarget) (bool, error)) (bool, error) {
	t, err := r.spaceTarget(ctx, id)
	if err != nil {
		return false, err
	}
	return op(t)
}

func (r *Resolver) withCollection(ctx context.Context, id string, op func(contentTarget) (bool, error)) (bool, error) {
	t, err := r.collectionTarget(ctx, id)
	if err != nil {
		return false, err
	}
	return op(t)
}

func (r *mutationResolver) InviteToSpace(ctx context.Context, spaceID string, input model.InviteToContentInput) (bool, error) {
	return r.withSpace(ctx, spaceID, func(t contentTarget) (bool, error) { return r.invite(ctx, t, input) })
}

func (r *mutationResolver) UpdateSpaceUserPermission(ctx context.Context, spaceID, userID string, input model.UpdateContentPermissionInput) (bool, error) {
	return r.withSpace(ctx, spaceID, func(t contentTarget) (bool, error) { return r.updateGrant(ctx, t, &userID, nil, input) })
}

func (r *mutationResolver) RemoveSpaceUserPermission(ctx context.Context, spaceID, userID string) (bool, error) {
	return r.withSpace(ctx, spaceID, func(t contentTarget) (bool, error) { return r.removeGrant(ctx, t, &userID, nil) })
}

func (r *mutationResolver) UpdateSpaceTeamPermission(ctx context.Context, spaceID, teamID string, input model.UpdateContentPermissionInput) (bool, error) {
	return r.withSpace(ctx, spaceID, func(t contentTarget) (bool, error) { return r.updateGrant(ctx, t, nil, &teamID, input) })
}

func (r *mutationResolver) RemoveSpaceTeamPermission(ctx context.Context, spaceID, teamID string) (bool, error) {
	return r.withSpace(ctx, spaceID, func(t contentTarget) (bool, error) { return r.removeGrant(ctx, t, nil, &teamID) })
}

func (r *mutationResolver) InviteToCollection(ctx context.Context, collectionID string, input model.InviteToContentInput) (bool, error) {
	return r.withCollection(ctx, collectionID, func(t contentTarget) (bool, error) { return r.invite(ctx, t, input) })
}

func (r *mutationResolver) UpdateCollectionUserPermission(ctx context.Context, collectionID, userID string, input model.UpdateContentPermissionInput) (bool, error) {
	return r.withCollection(ctx, collectionID, func(t contentTarget) (bool, error) { return r.updateGrant(ctx, t, &userID, nil, input) })
}

func (r *mutationResolver) RemoveCollectionUserPermission(ctx context.Context, collectionID, userID string) (bool, error) {
	return r.withCollection(ctx, collectionID, func(t contentTarget) (bool, error) { return r.removeGrant(ctx, t, &userID, nil) })
}

func (r *mutationResolver) UpdateCollectionTeamPermission(ctx context.Context, collectionID, teamID string, input model.UpdateContentPermissionInput) (bool, error) {
	return r.withCollection(ctx, collectionID, func(t contentTarget) (bool, error) { return r.updateGrant(ctx, t, nil, &teamID, input) })
}

func (r *mutationResolver) RemoveCollectionTeamPermission(ctx context.Context, collectionID, teamID string) (bool, error) {
	return r.withCollection(ctx, collectionID, func(t contentTarget) (bool, error) { return r.removeGrant(ctx, t, nil, &teamID) })
}
