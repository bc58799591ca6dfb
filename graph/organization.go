package graph

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

var (
	hostnameLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
	emailDomain   = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$`)
)

func (r *queryResolver) Organizations(ctx context.Context, page *string, limit *int, _ *int, _ *string) (*model.OrganizationList, error) {
	caller, err := CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	return paginate(page, limit, listQuery[*store.Organization]{
		// SECURITY: only the caller's own organizations are listed, and of a
		// scoped caller only the one its token reaches.
		read: func(p store.Page) ([]*store.Organization, error) {
			return store.ListOrganizationsOfUser(ctx, r.DB, caller.User.ID, caller.Scope(), p)
		},
		key: func(o *store.Organization) store.Keyset { return store.Keyset{Time: o.CreatedAt, ID: o.ID} },
	})
}

func (r *queryResolver) Organization(ctx context.Context, id string) (*store.Organization, error) {
	return r.organization(ctx, id)
}

// organization loads an organization the caller is a member of.
func (r *Resolver) organization(ctx context.Context, id string) (*store.Organization, error) {
	// SECURITY: members only; anyone else gets the answer for a missing one.
	if _, err := orgRole(ctx, id, "organization"); err != nil {
		return nil, err
	}
	return store.GetOrganization(ctx, r.DB, id)
}

func (r *mutationResolver) CreateOrganization(ctx context.Context, input model.CreateOrganizationInput) (*store.Organization, error) {
	caller, err := CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	// SECURITY: a single sign-on session cannot found organizations.
	if err := requireUnscoped(ctx, "create organizations"); err != nil {
		return nil, err
	}
	org := newOrganization(input.Title, caller.User.ID, r.now())
	if err := checkLength("title", org.Title, 2, 255); err != nil {
		return nil, err
	}
	if domains, ok := input.EmailDomains.ValueOK(); ok && domains != nil {
		if org.EmailDomains, err = emailDomains(domains); err != nil {
			return nil, err
		}
	}
	if t, ok := input.Type.ValueOK(); ok && t != nil {
		org.Type = *t
	}
	if u, ok := input.UseCase.ValueOK(); ok {
		org.UseCase = u
	}
	if err := store.CreateOrganization(ctx, r.DB, org, caller.User.ID); err != nil {
		return nil, err
	}
	caller.joined(org.ID, store.RoleAdmin)
	return org, nil
}

func (r *mutationResolver) UpdateOrganization(ctx context.Context, id string, input model.UpdateOrganizationInput) (*store.Organization, error) {
	// SECURITY: organization settings are for admins.
	if err := requireOrgRole(ctx, id, store.RoleAdmin, "organization"); err != nil {
		return nil, err
	}
	org, err := store.GetOrganization(ctx, r.DB, id)
	if err != nil {
		return nil, err
	}
	p := &patch{}
	setRequired(p, "title", "title", input.Title, &org.Title, length("title", 2, 255))
	setRequired(p, "emailDomains", "email_domains", omittableSlice(input.EmailDomains), &org.EmailDomains, nil)
	if p.err == nil && input.EmailDomains.IsSet() {
		org.EmailDomains, p.err = emailDomains(org.EmailDomains)
	}
	setOptional(p, "hostname", "hostname", input.Hostname, &org.Hostname, func(h string) error {
		if err := checkLength("hostname", h, 3, 32); err != nil {
			return err
		}
		return checkPattern("hostname", h, hostnameLabel, "lowercase letters, digits and inner dashes")
	})
	setOptional(p, "defaultRole", "default_role", input.DefaultRole, &org.DefaultRole, nil)
	var content *model.OrganizationDefaultContentInput
	setOptional(p, "defaultContent", "default_site_id", input.DefaultContent, &content, func(c model.OrganizationDefaultContentInput) error {
		if c.Type != "site" {
			return Invalid("defaultContent.type", `must be "site"`)
		}
		if _, err := store.GetSite(ctx, r.DB, id, c.Site); errors.Is(err, store.ErrNotFound) {
			return Invalid("defaultContent.site", "no such site in this organization")
		} else if err != nil {
			return err
		}
		return nil
	})
	if input.DefaultContent.IsSet() {
		org.DefaultSiteID = nil
		if content != nil {
			org.DefaultSiteID = &content.Site
		}
	}
	setOptional(p, "logo", "logo", input.Logo, &org.Logo, func(u string) error { return checkURL("logo", u, 2048) })
	setRequired(p, "sso", "sso", input.Sso, &org.SSO, nil)
	setRequired(p, "ai", "ai", input.Ai, &org.AI, nil)
	setRequired(p, "inviteLinks", "invite_links", input.InviteLinks, &org.InviteLinks, nil)
	setRequired(p, "mergeRules", "merge_rules", input.MergeRules, &org.MergeRules, func(mr store.MergeRules) error {
		return checkMergeRules("mergeRules", mr, false)
	})
	if p.err != nil {
		return nil, p.err
	}
	columns := p.columns
	if len(columns) == 0 {
		return org, nil
	}
	org.UpdatedAt = r.now()
	if err := store.UpdateOrganization(ctx, r.DB, org, columns...); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return nil, Conflict("hostname %q is already used by another organization", *org.Hostname)
		}
		return nil, err
	}
	return org, nil
}

func (r *mutationResolver) UpdateOrganizationAgentInstructions(ctx context.Context, organizationID string, input model.UpdateAgentInstructionsInput) (*model.AgentInstructions, error) {
	// SECURITY: the agent's instructions are organization settings: admins only.
	if err := requireOrgRole(ctx, organizationID, store.RoleAdmin, "organization"); err != nil {
		return nil, err
	}
	caller, _ := CallerFrom(ctx)
	org, err := store.GetOrganization(ctx, r.DB, organizationID)
	if err != nil {
		return nil, err
	}
	org.AgentInstructions = []byte(input.Instructions)
	org.AgentInstructionsUpdatedAt = r.now()
	org.AgentInstructionsUpdatedBy = caller.User.ID
	if err := store.UpdateOrganization(ctx, r.DB, org,
		"agent_instructions", "agent_instructions_updated_at", "agent_instructions_updated_by"); err != nil {
		return nil, err
	}
	return (&organizationResolver{r.Resolver}).AgentInstructions(ctx, org)
}

// newOrganization is an organization with the defaults of a new one.
func newOrganization(title, creatorID string, now time.Time) *store.Organization {
	return &store.Organization{
		ID: store.NewID(), Title: title, Type: store.OrganizationBusiness, Plan: store.BillingFree2024, InviteLinks: true,
		EmailDomains: []string{}, MergeRules: store.MergeRules{Type: store.MergeRulesNone},
		// The instructions start empty, authored by the creator.
		AgentInstructions:          store.EmptyDocument,
		AgentInstructionsUpdatedAt: now, AgentInstructionsUpdatedBy: creatorID,
		CreatedAt: now, UpdatedAt: now,
	}
}

// omittableSlice presents a list member like the other members: a list
// input is Omittable[[]T], not Omittable[*[]T].
func omittableSlice[T any](o graphql.Omittable[[]T]) graphql.Omittable[*[]T] {
	v, set := o.ValueOK()
	if !set {
		return graphql.Omittable[*[]T]{}
	}
	if v == nil {
		return graphql.OmittableOf[*[]T](nil)
	}
	return graphql.OmittableOf(&v)
}

// emailDomains validates and normalises a list of email domains.
func emailDomains(in []string) ([]string, error) {
	out := make([]string, 0, len(in))
	for _, d := range in {
		d = strings.ToLower(strings.TrimSpace(d))
		if len(d) > 253 || !emailDomain.MatchString(d) {
			return nil, Invalid("emailDomains", "%q is not a domain name", d)
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out, nil
}

// checkMergeRules validates a merge rules configuration; inherit is only
// meaningful on content, which has a parent to inherit from.
func checkMergeRules(field string, mr store.MergeRules, allowInherit bool) error {
	switch mr.Type {
	case store.MergeRulesInherit:
		if !allowInherit {
			return Invalid(field+".type", `"inherit" is only valid on spaces`)
		}
		fallthrough
	case store.MergeRulesNone:
		if len(mr.Rules) > 0 {
			return Invalid(field+".rules", "only allowed when type is \"rules\"")
		}
	case store.MergeRulesRules:
		if mr.Rules == nil {
			return Invalid(field+".rules", "is required when type is \"rules\"")
		}
	}
	for i, rule := range mr.Rules {
		f := field + ".rules[" + itoa(i) + "]"
		withUsers := slices.Contains(store.MergeRuleKindsWithUsers, rule.Rule)
		switch {
		case withUsers && rule.Users == nil:
			return Invalid(f+".users", "is required for %s", rule.Rule)
		case !withUsers && rule.Users != nil:
			return Invalid(f+".users", "is not allowed for %s", rule.Rule)
		case rule.Rule == store.MergeRuleCustom && rule.Expression == nil:
			return Invalid(f+".expression", "is required for custom rules")
		case rule.Rule != store.MergeRuleCustom && rule.Expression != nil:
			return Invalid(f+".expression", "is only allowed for custom rules")
		}
		if rule.Expression != nil {
			if err := checkLength(f+".expression", *rule.Expression, 1, 1024); err != nil {
				return err
			}
		}
	}
	return nil
}

type organizationResolver struct{ *Resolver }

var _ generated.OrganizationResolver = (*organizationResolver)(nil)

func (r *organizationResolver) DefaultContent(_ context.Context, o *store.Organization) (*model.OrganizationDefaultContent, error) {
	if o.DefaultSiteID == nil {
		return nil, nil
	}
	return &model.OrganizationDefaultContent{Type: "site", Site: *o.DefaultSiteID}, nil
}

func (r *organizationResolver) Urls(_ context.Context, o *store.Organization) (*model.OrganizationURLs, error) {
	return r.orgURLs(o.ID, o.Logo), nil
}

// orgURLs are the addresses of organization id.
func (r *Resolver) orgURLs(id string, logo *string) *model.OrganizationURLs {
	return &model.OrganizationURLs{
		Location: r.URLs.API("/v1/orgs/" + pathEscape(id)),
		App:      r.URLs.App("/o/" + pathEscape(id)),
		Logo:     logo,
	}
}

type organizationSummaryResolver struct{ *Resolver }

func (r *Resolver) OrganizationSummary() generated.OrganizationSummaryResolver {
	return &organizationSummaryResolver{r}
}

func (r *organizationSummaryResolver) Urls(ctx context.Context, o *model.OrganizationSummary) (*model.OrganizationURLs, error) {
	return r.orgURLs(o.ID, o.Logo), nil
}

func (r *organizationSummaryResolver) Permissions(ctx context.Context, o *model.OrganizationSummary) (*model.OrganizationPermissions, error) {
	return callerOrgPermissions(ctx, o.ID)
}

func (r *organizationResolver) Trial(context.Context, *store.Organization) (*model.OrganizationTrial, error) {
	return &model.OrganizationTrial{Status: model.BillingTrialStatusNotapplicable, Count: 0}, nil
}

func (r *organizationResolver) Permissions(ctx context.Context, o *store.Organization) (*model.OrganizationPermissions, error) {
	return callerOrgPermissions(ctx, o.ID)
}

// callerOrgPermissions is what the caller may do in organization id.
func callerOrgPermissions(ctx context.Context, id string) (*model.OrganizationPermissions, error) {
	caller, err := CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	role, member := caller.Membership(id)
	return organizationPermissions(role, member), nil
}

func (r *organizationResolver) AgentInstructions(_ context.Context, o *store.Organization) (*model.AgentInstructions, error) {
	return &model.AgentInstructions{
		Object:       "agent-instructions",
		Instructions: model.Document(o.AgentInstructions),
		UpdatedAt:    o.AgentInstructionsUpdatedAt,
		UpdatedBy:    o.AgentInstructionsUpdatedBy,
		Urls:         &model.AgentInstructionsURLs{Location: r.URLs.API("/v1/orgs/" + pathEscape(o.ID) + "/agent-instructions")},
	}, nil
}
