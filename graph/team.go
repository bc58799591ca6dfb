package graph

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Teams group members of an organization. Readers and above see them;
// admins create them; admins and a team's owners rename and delete it.

const maxTeamTitle = 64

func (r *organizationResolver) Teams(ctx context.Context, o *store.Organization, page *string, limit *int, _ *int, _ *string, owner *string, title *string) (*model.TeamList, error) {
	// SECURITY: readers and above see the teams.
	if err := requireOrgRole(ctx, o.ID, store.RoleRead, "organization"); err != nil {
		return nil, err
	}
	var f store.TeamFilter
	if title != nil {
		f.Title = *title
	}
	if owner != nil {
		// The teams that member can manage: all of them for an admin, else
		// those they own.
		m, err := store.GetMember(ctx, r.DB, o.ID, *owner)
		if errors.Is(err, store.ErrNotFound) {
			return nil, Invalid("owner", "is not a member of the organization")
		} else if err != nil {
			return nil, err
		}
		if m.Role == nil || *m.Role != store.RoleAdmin || m.Disabled {
			f.OwnedBy = owner
		}
	}
	return paginate(page, limit, listQuery[*store.Team]{
		read: func(p store.Page) ([]*store.Team, error) { return store.ListTeams(ctx, r.DB, o.ID, f, p) },
		key:  teamKey,
	})
}

func (r *organizationResolver) Team(ctx context.Context, o *store.Organization, id string) (*store.Team, error) {
	// SECURITY: readers and above see the teams.
	if err := requireOrgRole(ctx, o.ID, store.RoleRead, "organization"); err != nil {
		return nil, err
	}
	return r.team(ctx, o.ID, id)
}

func (r *Resolver) team(ctx context.Context, orgID, id string) (*store.Team, error) {
	t, err := store.GetTeam(ctx, r.DB, orgID, id)
	return t, orNotFound(err, "team")
}

func teamKey(t *store.Team) store.Keyset { return store.Keyset{Time: t.CreatedAt, ID: t.ID} }

func teamIDs(teams []*store.Team) []string {
	ids := make([]string, len(teams))
	for i, t := range teams {
		ids[i] = t.ID
	}
	return ids
}

func (r *mutationResolver) CreateTeam(ctx context.Context, orgID string, input model.CreateTeamInput) (*store.Team, error) {
	caller, err := CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	// SECURITY: admins create teams.
	if err := requireOrgRole(ctx, orgID, store.RoleAdmin, "organization"); err != nil {
		return nil, err
	}
	if err := checkLength("title", input.Title, 1, maxTeamTitle); err != nil {
		return nil, err
	}
	// The creator owns the team; the members named join it.
	members, _ := input.Members.ValueOK()
	ids := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(members), caller.User.ID))))
	t := &store.Team{ID: store.NewID(), OrganizationID: orgID, Title: input.Title, CreatedAt: r.now()}
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		// Under the memberships lock, so nobody named leaves meanwhile.
		if err := store.LockOrganization(ctx, tx, orgID); err != nil {
			return err
		}
		known, err := store.MemberIDsIn(ctx, tx, orgID, ids)
		if err != nil {
			return err
		}
		rows := make([]*store.TeamMembership, 0, len(ids))
		for _, id := range ids {
			if !slices.Contains(known, id) {
				return Invalid("members", "%q is not a member of the organization", id)
			}
			role := store.TeamRoleMember
			if id == caller.User.ID {
				role = store.TeamOwner
			}
			rows = append(rows, &store.TeamMembership{TeamID: t.ID, OrganizationID: orgID, UserID: id, Role: role})
		}
		return store.CreateTeam(ctx, tx, t, rows)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

func (r *mutationResolver) UpdateTeam(ctx context.Context, orgID, id string, input model.UpdateTeamInput) (*store.Team, error) {
	if _, err := orgRole(ctx, orgID, "organization"); err != nil {
		return nil, err
	}
	t, err := r.team(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if err := r.requireTeamAdmin(ctx, t); err != nil {
		return nil, err
	}
	if err := checkLength("title", input.Title, 1, maxTeamTitle); err != nil {
		return nil, err
	}
	t.Title = input.Title
	return t, store.UpdateTeam(ctx, r.DB, t, "title")
}

func (r *mutationResolver) DeleteTeam(ctx context.Context, orgID, id string) (bool, error) {
	if _, err := orgRole(ctx, orgID, "organization"); err != nil {
		return false, err
	}
	t, err := store.GetTeam(ctx, r.DB, orgID, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if err := r.requireTeamAdmin(ctx, t); err != nil {
		return false, err
	}
	deleted := false
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		// Under the lock that adds members and grants to teams, which
		// check the team there: none is added to a team that is going
		// (its insert then failed the team's foreign key: a 500).
		if err := store.LockOrganization(ctx, tx, orgID); err != nil {
			return err
		}
		deleted, err = store.DeleteTeam(ctx, tx, orgID, id)
		return err
	})
	return deleted, err
}

// lockTeam takes orgID's memberships lock for the rest of tx and checks
// team t is still there (DeleteTeam deletes under that lock).
func lockTeam(ctx context.Context, tx bun.Tx, t *store.Team) error {
	if err := store.LockOrganization(ctx, tx, t.OrganizationID); err != nil {
		return err
	}
	_, err := store.GetTeam(ctx, tx, t.OrganizationID, t.ID)
	return orNotFound(err, "team")
}

// requireTeamAdmin answers 403 unless the caller manages t.
func (r *Resolver) requireTeamAdmin(ctx context.Context, t *store.Team) error {
	// SECURITY: organization admins and the team's owners manage it.
	perms, err := r.teamPermissions(ctx, t)
	if err != nil {
		return err
	}
	if !perms.Admin {
		return Forbidden("only the organization's admins and the team's owners can change this team")
	}
	return nil
}

type teamResolver struct{ *Resolver }

var _ generated.TeamResolver = (*teamResolver)(nil)

func (r *Resolver) Team() generated.TeamResolver { return &teamResolver{r} }

func (r *teamResolver) Members(ctx context.Context, t *store.Team) (int, error) {
	return r.loaders(ctx).TeamMemberCount.Load(ctx, orgKey(t.OrganizationID, t.ID))()
}

// Spaces is the number of live spaces a grant to the team reaches (on the
// space, or on a collection enclosing it).
func (r *teamResolver) Spaces(ctx context.Context, t *store.Team) (int, error) {
	return r.teamSpaces(ctx, t.OrganizationID, t.ID)
}

func (r *teamResolver) Permissions(ctx context.Context, t *store.Team) (*model.TeamPermissions, error) {
	return r.teamPermissions(ctx, t)
}

// teamPermissions is what the caller may do with t.
func (r *Resolver) teamPermissions(ctx context.Context, t *store.Team) (*model.TeamPermissions, error) {
	caller, err := CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	role, _ := caller.Membership(t.OrganizationID)
	perms := &model.TeamPermissions{View: role.AtLeast(store.RoleRead), Admin: role == store.RoleAdmin}
	if !perms.Admin {
		teamRole, err := r.loaders(ctx).CallerTeamRole.Load(ctx, orgKey(t.OrganizationID, t.ID))()
		if err != nil {
			return nil, err
		}
		perms.Admin = teamRole == store.TeamOwner
	}
	return perms, nil
}

func (r *teamResolver) TeamMembers(ctx context.Context, t *store.Team, page *string, limit *int, _ *int, _ *string) (*model.TeamMemberList, error) {
	members, err := paginate(page, limit, listQuery[*store.TeamMemberRow]{
		read: func(p store.Page) ([]*store.TeamMemberRow, error) {
			return store.ListTeamMembers(ctx, r.DB, t.OrganizationID, t.ID, p)
		},
		key: func(m *store.TeamMemberRow) store.Keyset { return store.Keyset{Time: m.JoinedAt, ID: m.UserID} },
	})
	if err != nil {
		return nil, err
	}
	return mapList(members, func(m *store.TeamMemberRow) (*model.OrganizationTeamMember, error) {
		return &model.OrganizationTeamMember{Organization: &m.Member, Team: &model.TeamMember{Role: m.TeamRole},
			Permissions: &model.TeamMemberPermissions{View: true}}, nil
	})
}

// managedTeam reads a team the caller manages (admins and the team's owners).
func (r *Resolver) managedTeam(ctx context.Context, orgID, id string) (*store.Team, error) {
	if _, err := orgRole(ctx, orgID, "organization"); err != nil {
		return nil, err
	}
	t, err := r.team(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	return t, r.requireTeamAdmin(ctx, t)
}

func (r *mutationResolver) AddTeamMember(ctx context.Context, orgID, teamID, userID string, input model.AddTeamMemberInput) (bool, error) {
	t, err := r.managedTeam(ctx, orgID, teamID)
	if err != nil {
		return false, err
	}
	role := store.TeamRoleMember
	if v, _ := input.Role.ValueOK(); v != nil {
		role = *v
	}
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		if err := lockTeam(ctx, tx, t); err != nil {
			return err
		}
		if _, err := store.GetMember(ctx, tx, orgID, userID); err != nil {
			return orNotFound(err, "member")
		}
		return store.PutTeamMember(ctx, tx, t, userID, role)
	})
	r.loaders(ctx).OrgAccess.Clear(ctx, orgID)
	return err == nil, err
}

func (r *mutationResolver) RemoveTeamMember(ctx context.Context, orgID, teamID, userID string) (bool, error) {
	t, err := r.managedTeam(ctx, orgID, teamID)
	if err != nil {
		return false, err
	}
	defer r.loaders(ctx).OrgAccess.Clear(ctx, orgID)
	return store.RemoveTeamMember(ctx, r.DB, t, userID)
}

func (r *mutationResolver) UpdateTeamMembers(ctx context.Context, orgID, teamID string, input model.UpdateTeamMembersInput) (bool, error) {
	t, err := r.managedTeam(ctx, orgID, teamID)
	if err != nil {
		return false, err
	}
	add, _ := input.Add.ValueOK()
	remove, _ := input.Remove.ValueOK()
	memberships, _ := input.Memberships.ValueOK()
	roles := map[string]store.TeamRole{}
	for user, v := range memberships {
		m, ok := v.(map[string]any)
		role, _ := m["role"].(string)
		if !ok || (role != string(store.TeamOwner) && role != string(store.TeamRoleMember)) {
			return false, Invalid("memberships."+user, `must be {"role": "owner"} or {"role": "member"}`)
		}
		roles[user] = store.TeamRole(role)
	}
	defer r.loaders(ctx).OrgAccess.Clear(ctx, orgID)
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		if err := lockTeam(ctx, tx, t); err != nil {
			return err
		}
		addIDs, err := r.resolveMembers(ctx, tx, orgID, "add", add)
		if err != nil {
			return err
		}
		removeIDs, err := r.resolveMembers(ctx, tx, orgID, "remove", remove)
		if err != nil {
			return err
		}
		roleIDs, err := r.resolveMembers(ctx, tx, orgID, "memberships", slices.Collect(maps.Keys(roles)))
		if err != nil {
			return err
		}
		for _, id := range addIDs {
			if err := store.PutTeamMember(ctx, tx, t, id, store.TeamRoleMember); err != nil {
				return err
			}
		}
		for key, id := range roleIDs {
			if err := store.PutTeamMember(ctx, tx, t, id, roles[key]); err != nil {
				return err
			}
		}
		for _, id := range removeIDs {
			if _, err := store.RemoveTeamMember(ctx, tx, t, id); err != nil {
				return err
			}
		}
		return nil
	})
	return err == nil, err
}

// resolveMembers maps user ids and emails to the ids of members of orgID:
// 400 naming field for any that is not one.
func (r *Resolver) resolveMembers(ctx context.Context, tx bun.IDB, orgID, field string, refs []string) (map[string]string, error) {
	out := make(map[string]string, len(refs))
	if len(refs) == 0 {
		return out, nil
	}
	ids, err := store.MemberIDsIn(ctx, tx, orgID, refs)
	if err != nil {
		return nil, err
	}
	byEmail, err := store.MemberIDsByEmail(ctx, tx, orgID, refs)
	if err != nil {
		return nil, err
	}
	for _, ref := range refs {
		switch {
		case slices.Contains(ids, ref):
			out[ref] = ref
		case byEmail[strings.ToLower(ref)] != "":
			out[ref] = byEmail[strings.ToLower(ref)]
		default:
			return nil, Invalid(field, "%q is not a member of the organization", ref)
		}
	}
	return out, nil
}
