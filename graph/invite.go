package graph

import (
	"context"
	"errors"
	"strings"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Joining an organization: with an invite link (its id is the secret; the
// organization must allow invite links), or by email domain (the
// organization's emailDomains admit the caller's). Users' emails are taken
// as verified: accounts are created by the instance's administrator, or by
// single sign-on.

func (r *organizationResolver) Invites(ctx context.Context, o *store.Organization, page *string, limit *int, _ *int, _ *string) (*model.OrganizationInviteList, error) {
	// SECURITY: invite links are secrets; admins list them.
	if err := requireOrgRole(ctx, o.ID, store.RoleAdmin, "organization"); err != nil {
		return nil, err
	}
	return paginate(page, limit, listQuery[*store.Invite]{
		read: func(p store.Page) ([]*store.Invite, error) { return store.ListInvites(ctx, r.DB, o.ID, p) },
		key:  func(i *store.Invite) store.Keyset { return store.Keyset{Time: i.CreatedAt, ID: i.ID} },
	})
}

func (r *queryResolver) OrganizationInvite(ctx context.Context, orgID, id string) (*store.Invite, error) {
	caller, err := CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	inv, _, err := r.usableInvite(ctx, orgID, id)
	if errors.Is(err, errInviteDisabled) {
		// SECURITY: a disabled link still exists for the admins who manage it.
		if role, _ := caller.Membership(orgID); role == store.RoleAdmin {
			return inv, nil
		}
		return nil, NotFound("invite")
	}
	return inv, err
}

// errInviteDisabled is usableInvite's answer when the organization does not
// allow invite links.
var errInviteDisabled = errors.New("invite links are disabled")

// usableInvite reads invite id of orgID with its organization: NotFound when
// there is none, errInviteDisabled (with both) when the organization does not
// allow invite links. Holding the id is what entitles one to read it.
func (r *Resolver) usableInvite(ctx context.Context, orgID, id string) (*store.Invite, *store.Organization, error) {
	inv, err := store.GetInvite(ctx, r.DB, orgID, id)
	if err != nil {
		return nil, nil, orNotFound(err, "invite")
	}
	org, err := store.GetOrganization(ctx, r.DB, orgID)
	if err != nil {
		return nil, nil, err
	}
	if !org.InviteLinks {
		return inv, org, errInviteDisabled
	}
	return inv, org, nil
}

type organizationInviteResolver struct{ *Resolver }

var _ generated.OrganizationInviteResolver = (*organizationInviteResolver)(nil)

func (r *Resolver) OrganizationInvite() generated.OrganizationInviteResolver {
	return &organizationInviteResolver{r}
}

// Redundant tells whether the caller already holds what the invite gives.
func (r *organizationInviteResolver) Redundant(ctx context.Context, i *store.Invite) (bool, error) {
	caller, err := CallerFrom(ctx)
	if err != nil {
		return false, err
	}
	role, member := caller.Membership(i.OrganizationID)
	return member && (i.Role == nil || role.AtLeast(*i.Role)), nil
}

func (r *mutationResolver) CreateOrganizationInvite(ctx context.Context, orgID string, input model.CreateOrganizationInviteInput) (*store.Invite, error) {
	caller, err := CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	// SECURITY: admins create invite links.
	if err := requireOrgRole(ctx, orgID, store.RoleAdmin, "organization"); err != nil {
		return nil, err
	}
	org, err := store.GetOrganization(ctx, r.DB, orgID)
	if err != nil {
		return nil, err
	}
	if !org.InviteLinks {
		return nil, Forbidden("this organization does not allow invite links: set inviteLinks to true first")
	}
	role, _ := input.Role.ValueOK()
	inv := &store.Invite{ID: store.NewID(), OrganizationID: orgID, Role: role, CreatedBy: &caller.User.ID, CreatedAt: r.now()}
	return inv, store.CreateInvite(ctx, r.DB, inv)
}

func (r *mutationResolver) UpdateOrganizationInvite(ctx context.Context, orgID, id string, input model.UpdateOrganizationInviteInput) (*store.Invite, error) {
	// SECURITY: admins manage invite links.
	if err := requireOrgRole(ctx, orgID, store.RoleAdmin, "organization"); err != nil {
		return nil, err
	}
	role, set := input.Role.ValueOK()
	if !set {
		return nil, Invalid("role", "is required (null invites guests)")
	}
	inv, err := store.GetInvite(ctx, r.DB, orgID, id)
	if err != nil {
		return nil, orNotFound(err, "invite")
	}
	inv.Role = role
	return inv, store.UpdateInvite(ctx, r.DB, inv, "role")
}

func (r *mutationResolver) DeleteOrganizationInvite(ctx context.Context, orgID, id string) (bool, error) {
	// SECURITY: admins manage invite links.
	if err := requireOrgRole(ctx, orgID, store.RoleAdmin, "organization"); err != nil {
		return false, err
	}
	return store.DeleteInvite(ctx, r.DB, orgID, id)
}

func (r *mutationResolver) JoinOrganizationWithInvite(ctx context.Context, orgID, inviteID string) (*model.JoinOrganizationResult, error) {
	// SECURITY: a single sign-on session joins nothing beyond its organization.
	if err := requireReach(ctx, orgID, "join other organizations"); err != nil {
		return nil, err
	}
	inv, org, err := r.usableInvite(ctx, orgID, inviteID)
	if errors.Is(err, errInviteDisabled) {
		// SECURITY: a link of an organization that does not accept them is
		// no link at all.
		return nil, NotFound("invite")
	} else if err != nil {
		return nil, err
	}
	if err := r.join(ctx, org, inv.Role); err != nil {
		return nil, err
	}
	return &model.JoinOrganizationResult{Organization: org}, nil
}

func (r *mutationResolver) JoinOrganization(ctx context.Context, orgID string) (*model.JoinOrganizationResult, error) {
	caller, err := CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	// SECURITY: a single sign-on session joins nothing beyond its
	// organization (its email was asserted by that organization's provider,
	// not proven to anyone else's).
	if err := requireReach(ctx, orgID, "join other organizations"); err != nil {
		return nil, err
	}
	org, err := store.GetOrganization(ctx, r.DB, orgID)
	if err != nil {
		return nil, orNotFound(err, "organization")
	}
	// A member joining again changes nothing (a guest may be raised to the
	// default role).
	if _, member := caller.Membership(orgID); !member {
		// SECURITY: only users of an admitted email domain join this way;
		// to anyone else the organization is invisible, as it was before.
		domain := emailDomainOf(caller.User.Email)
		if domain == "" || !containsFold(org.EmailDomains, domain) {
			return nil, NotFound("organization")
		}
	}
	if err := r.join(ctx, org, org.DefaultRole); err != nil {
		return nil, err
	}
	return &model.JoinOrganizationResult{Organization: org}, nil
}

// join makes the caller a member of org with role (nil: guest). A member
// keeps their membership, raised to role when that is higher: joining never
// lowers a role.
func (r *Resolver) join(ctx context.Context, org *store.Organization, role *store.MemberRole) error {
	caller, err := CallerFrom(ctx)
	if err != nil {
		return err
	}
	var final *store.MemberRole
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		if err := store.LockOrganization(ctx, tx, org.ID); err != nil {
			return err
		}
		m, err := store.GetMember(ctx, tx, org.ID, caller.User.ID)
		if errors.Is(err, store.ErrNotFound) {
			final = role
			return store.AddMember(ctx, tx, org.ID, caller.User.ID, role, r.now())
		} else if err != nil {
			return err
		}
		final = m.Role
		if role == nil || (m.Role != nil && m.Role.AtLeast(*role)) {
			return nil
		}
		m.Role, final = role, role
		return store.UpdateMember(ctx, tx, m, "role")
	})
	if err != nil {
		return err
	}
	var joined store.MemberRole
	if final != nil {
		joined = *final
	}
	caller.joined(org.ID, joined)
	return nil
}

func (r *queryResolver) OrganizationsForEmailDomain(ctx context.Context, domain string) (*model.EmailDomainOrganizations, error) {
	caller, err := CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	out := &model.EmailDomainOrganizations{Organizations: []*model.OrganizationSummary{}}
	// SECURITY: only the caller's own domain, so nobody can list which
	// organizations admit some other company's domain.
	own := emailDomainOf(caller.User.Email)
	if own == "" || !strings.EqualFold(domain, own) {
		return out, nil
	}
	orgs, err := store.OrganizationsForEmailDomain(ctx, r.DB, own)
	if err != nil {
		return nil, err
	}
	for _, o := range orgs {
		// SECURITY: a scoped caller sees no organization but its own; the
		// others see their public cards (the caller is no member of them yet).
		if caller.Scope() == "" || o.ID == caller.Scope() {
			out.Organizations = append(out.Organizations, model.PublicCard(o))
		}
	}
	return out, nil
}

// emailDomainOf is the lower-cased domain of an email address ("" if none).
func emailDomainOf(email string) string {
	_, domain, ok := strings.Cut(email, "@")
	if !ok {
		return ""
	}
	return strings.ToLower(domain)
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
