package graph

import (
	"context"
	"errors"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Members of an organization: who belongs, with which role, since when.
// Readers and above list and read them; admins change roles, remove members
// and mark them SSO; anyone may leave and ping. An organization always keeps
// an admin.

// maxMemberSearch bounds the `search` of a member list.
const maxMemberSearch = 512

func (r *organizationResolver) Members(ctx context.Context, o *store.Organization, page *string, limit *int, _ *int, _ *string, order *model.ListOrder, role *model.MemberRoleFilter, search *string, sort *model.MemberSort) (*model.MemberList, error) {
	// SECURITY: readers and above see who the members are.
	if err := requireOrgRole(ctx, o.ID, store.RoleRead, "organization"); err != nil {
		return nil, err
	}
	f := store.MemberFilter{Desc: isDesc(order), BySeen: sort != nil && *sort == model.MemberSortLastSeenAt}
	if role != nil {
		if *role == model.MemberRoleFilterGuest {
			f.Guests = true
		} else {
			r := store.MemberRole(*role)
			f.Role = &r
		}
	}
	if search != nil {
		if err := checkLength("search", *search, 0, maxMemberSearch); err != nil {
			return nil, err
		}
		f.Search = *search
	}
	return paginate(page, limit, listQuery[*store.Member]{
		read: func(p store.Page) ([]*store.Member, error) { return store.ListMembers(ctx, r.DB, o.ID, f, p) },
		key: func(m *store.Member) store.Keyset {
			t := m.JoinedAt
			if f.BySeen {
				t = *m.LastSeenAt
			}
			return store.Keyset{Time: t, ID: m.UserID}
		},
	})
}

func (r *organizationResolver) Member(ctx context.Context, o *store.Organization, userID string) (*store.Member, error) {
	// SECURITY: readers and above see the members.
	if err := requireOrgRole(ctx, o.ID, store.RoleRead, "organization"); err != nil {
		return nil, err
	}
	return r.member(ctx, o.ID, userID)
}

func (r *Resolver) member(ctx context.Context, orgID, userID string) (*store.Member, error) {
	m, err := store.GetMember(ctx, r.DB, orgID, userID)
	return m, orNotFound(err, "member")
}

// isDesc reads the `order` of a list ordered by date: newest first by default.
func isDesc(order *model.ListOrder) bool { return order == nil || *order == model.ListOrderDesc }

type memberResolver struct{ *Resolver }

var _ generated.MemberResolver = (*memberResolver)(nil)

func (r *Resolver) Member() generated.MemberResolver { return &memberResolver{r} }

func (r *memberResolver) User(ctx context.Context, m *store.Member) (*store.User, error) {
	return r.loaders(ctx).User.Load(ctx, m.UserID)()
}

func (r *memberResolver) Spaces(ctx context.Context, m *store.Member) (int, error) {
	caller, err := callerGrantee(ctx, m.OrganizationID)
	if err != nil {
		return 0, err
	}
	// SECURITY: the spaces the caller can read too, as contentPermissions
	// lists them: a member's list is no window on others' spaces.
	return r.spaceTotal(m.OrganizationID, nil, memberGrantee(m), caller)(ctx)
}

func (r *memberResolver) Teams(ctx context.Context, m *store.Member) (int, error) {
	return r.loaders(ctx).MemberTeamCount.Load(ctx, orgKey(m.OrganizationID, m.UserID))()
}

func (r *memberResolver) ContentPermissions(ctx context.Context, m *store.Member, page *string, limit *int, _ *int, _ *string, order *model.ListOrder) (*model.MemberContentPermissionList, error) {
	g := memberGrantee(m)
	caller, err := callerGrantee(ctx, m.OrganizationID)
	if err != nil {
		return nil, err
	}
	visibleToMember, visibleToCaller := r.spaceVisibleTo(ctx, g), r.spaceVisibleTo(ctx, caller)
	spaces, err := paginate(page, limit, listQuery[*store.Space]{
		read: func(p store.Page) ([]*store.Space, error) {
			return store.ListSpaces(ctx, r.DB, m.OrganizationID, p, isDesc(order))
		},
		key: spaceKey,
		// SECURITY: the member's spaces that the caller can read too.
		visible: func(s *store.Space) (bool, error) {
			ok, err := visibleToMember(s)
			if ok && err == nil {
				ok, err = visibleToCaller(s)
			}
			return ok, err
		},
		prime: func(spaces []*store.Space) error { return r.primeSpaces(ctx, spaces) },
		total: r.spaceTotal(m.OrganizationID, nil, g, caller),
	})
	if err != nil {
		return nil, err
	}
	return mapList(spaces, func(s *store.Space) (*model.MemberContentPermission, error) {
		role, err := r.spaceRoleOf(ctx, g, s)
		if err != nil {
			return nil, err
		}
		return &model.MemberContentPermission{Permission: role, Space: s}, nil
	})
}

func (r *memberResolver) TeamMemberships(ctx context.Context, m *store.Member, page *string, limit *int, _ *int, _ *string, title *string) (*model.MemberTeamList, error) {
	f := store.TeamFilter{MemberID: &m.UserID}
	if title != nil {
		f.Title = *title
	}
	teams, err := paginate(page, limit, listQuery[*store.Team]{
		read: func(p store.Page) ([]*store.Team, error) { return store.ListTeams(ctx, r.DB, m.OrganizationID, f, p) },
		key:  teamKey,
	})
	if err != nil {
		return nil, err
	}
	// The member's role in each team of the page, in one query.
	roles, err := store.TeamRolesOf(ctx, r.DB, m.OrganizationID, m.UserID, teamIDs(teams.Items))
	if err != nil {
		return nil, err
	}
	return mapList(teams, func(t *store.Team) (*model.MemberTeam, error) {
		return &model.MemberTeam{Team: t, Member: &model.TeamMember{Role: roles[t.ID]}}, nil
	})
}

func (r *mutationResolver) UpdateMember(ctx context.Context, orgID, userID string, input model.UpdateMemberInput) (*store.Member, error) {
	// SECURITY: admins change roles.
	if err := requireOrgRole(ctx, orgID, store.RoleAdmin, "organization"); err != nil {
		return nil, err
	}
	role, set := input.Role.ValueOK()
	var out *store.Member
	err := store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		m, err := r.lockedMember(ctx, tx, orgID, userID)
		if err != nil {
			return err
		}
		out = m
		if !set || sameRole(m.Role, role) {
			return nil
		}
		if err := keepAnAdmin(ctx, tx, m, "demote"); err != nil {
			return err
		}
		m.Role = role
		return store.UpdateMember(ctx, tx, m, "role")
	})
	return out, err
}

func (r *mutationResolver) RemoveMember(ctx context.Context, orgID, userID string) (bool, error) {
	caller, err := CallerFrom(ctx)
	if err != nil {
		return false, err
	}
	// SECURITY: admins remove members; anyone may leave.
	if userID == caller.User.ID {
		_, err = orgRole(ctx, orgID, "organization")
	} else {
		err = requireOrgRole(ctx, orgID, store.RoleAdmin, "organization")
	}
	if err != nil {
		return false, err
	}
	removed := false
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		m, err := r.lockedMember(ctx, tx, orgID, userID)
		if errors.Is(err, errNoMember) {
			return nil
		} else if err != nil {
			return err
		}
		if err := keepAnAdmin(ctx, tx, m, "remove"); err != nil {
			return err
		}
		removed, err = store.RemoveMember(ctx, tx, orgID, userID)
		return err
	})
	return removed, err
}

func (r *mutationResolver) SetMemberSso(ctx context.Context, orgID, userID string) (*store.Member, error) {
	// SECURITY: admins decide who signs in with SSO.
	if err := requireOrgRole(ctx, orgID, store.RoleAdmin, "organization"); err != nil {
		return nil, err
	}
	m, err := r.member(ctx, orgID, userID)
	if err != nil || m.SSO {
		return m, err
	}
	m.SSO = true
	return m, store.UpdateMember(ctx, r.DB, m, "sso")
}

func (r *mutationResolver) PingOrganization(ctx context.Context, orgID string) (*model.PingResult, error) {
	caller, err := CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	// SECURITY: members only (guests included): it records their own activity.
	if _, err := orgRole(ctx, orgID, "organization"); err != nil {
		return nil, err
	}
	if err := store.TouchMember(ctx, r.DB, orgID, caller.User.ID, r.now()); err != nil {
		return nil, err
	}
	// No visitor claims are issued: the organization has no visitor
	// authentication to attach them to.
	return &model.PingResult{}, nil
}

// errNoMember is lockedMember's answer for a user who is not a member.
var errNoMember = NotFound("member")

// lockedMember locks the organization's memberships for the rest of tx and
// reads userID's.
func (r *Resolver) lockedMember(ctx context.Context, tx bun.Tx, orgID, userID string) (*store.Member, error) {
	if err := store.LockOrganization(ctx, tx, orgID); err != nil {
		return nil, err
	}
	m, err := store.GetMember(ctx, tx, orgID, userID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNoMember
	}
	return m, err
}

// keepAnAdmin refuses to take the admin role from m (to `what` them) when
// m is the organization's last enabled admin. The caller holds the
// memberships lock, so two admins cannot demote each other at once.
func keepAnAdmin(ctx context.Context, tx bun.Tx, m *store.Member, what string) error {
	if m.Disabled || m.Role == nil || *m.Role != store.RoleAdmin {
		return nil
	}
	n, err := store.CountAdmins(ctx, tx, m.OrganizationID)
	if err != nil {
		return err
	}
	if n <= 1 {
		return Conflict("cannot %s the last admin of the organization: make another member admin first", what)
	}
	return nil
}

func sameRole(a, b *store.MemberRole) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}
