package graph

import (
	"context"

	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Every authorization decision goes through this file. A resource the caller
// cannot see answers 404 exactly like one that does not exist; one they can
// see but may not change answers 403. Checks are marked "SECURITY:" so an
// audit is a grep.
//
// The caller's effective role on content is, for now, their organization
// role; grants by team, collection and space come with the people issue and
// refine contentRole only.

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

// contentRole is the caller's role on a piece of content (a space, a site) of
// orgID: 404 when they may not even read it.
func contentRole(ctx context.Context, orgID, what string) (store.MemberRole, error) {
	role, err := orgRole(ctx, orgID, what)
	if err != nil {
		return "", err
	}
	// SECURITY: guests see only content shared with them, and nothing can be
	// shared with them yet.
	if !role.AtLeast(store.RoleRead) {
		return "", NotFound(what)
	}
	return role, nil
}

// canListContent reports whether the caller may list the content of orgID:
// its readers may; its guests see nothing (nothing can be shared with them
// yet); anyone else gets NotFound for the organization.
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
