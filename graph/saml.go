package graph

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// SAML single sign-on. An organization's admins
// register the identity providers its members sign in with; a provider is
// `pending` until its SSO URL, entity ID and certificate are all set, then
// `active`. The sign-in itself (an SP-initiated login: AuthnRequest out,
// signed response in) is in sso_login.go; this file is the configuration.
//
// Only admins see providers (their configuration decides who gets into the
// organization); every member sees the sign-in entries
// (Organization.ssoProviderLogins, GET /v1/orgs/{organizationId}/sso).

func (r *organizationResolver) SamlProviders(ctx context.Context, o *store.Organization, page *string, limit *int, _ *int, _ *string) (*model.SAMLProviderList, error) {
	// SECURITY: admins manage single sign-on.
	if err := requireOrgRole(ctx, o.ID, store.RoleAdmin, "organization"); err != nil {
		return nil, err
	}
	return paginate(page, limit, listQuery[*store.SAMLProvider]{
		read: func(p store.Page) ([]*store.SAMLProvider, error) { return store.ListSAMLProviders(ctx, r.DB, o.ID, p) },
		key:  func(s *store.SAMLProvider) store.Keyset { return store.Keyset{Time: s.CreatedAt, ID: s.ID} },
	})
}

func (r *organizationResolver) SamlProvider(ctx context.Context, o *store.Organization, id string) (*store.SAMLProvider, error) {
	return r.samlProvider(ctx, o.ID, id)
}

// samlProvider is provider id of orgID, for an admin of orgID.
func (r *Resolver) samlProvider(ctx context.Context, orgID, id string) (*store.SAMLProvider, error) {
	// SECURITY: admins manage single sign-on; others get 404 (outsiders) or 403.
	if err := requireOrgRole(ctx, orgID, store.RoleAdmin, "SAML provider"); err != nil {
		return nil, err
	}
	p, err := store.GetSAMLProvider(ctx, r.DB, orgID, id)
	return p, orNotFound(err, "SAML provider")
}

func (r *organizationResolver) SsoProviderLogins(ctx context.Context, o *store.Organization) (*model.SSOProviderLoginList, error) {
	// SECURITY: any member (guests included) may see where to sign in.
	if _, err := orgRole(ctx, o.ID, "organization"); err != nil {
		return nil, err
	}
	rows, err := store.AllSAMLProviders(ctx, r.DB, o.ID)
	if err != nil {
		return nil, err
	}
	items := []*model.SSOProviderLogin{}
	for _, p := range rows {
		if p.Status() == store.SAMLProviderActive {
			items = append(items, &model.SSOProviderLogin{ID: p.ID, Label: p.Label, StartURL: r.samlService(p).StartURL})
		}
	}
	return &model.SSOProviderLoginList{Items: items}, nil
}

// samlProviderChanges are the members of a create or update input.
type samlProviderChanges struct {
	label, entityID, certificate, ssoURL, defaultTeam graphql.Omittable[*string]
	defaultRole                                       graphql.Omittable[*store.MemberRole]
}

// applySAMLProvider validates the changes and assigns them to p; it returns
// the columns changed. Nothing is written.
func (r *Resolver) applySAMLProvider(ctx context.Context, p *store.SAMLProvider, c samlProviderChanges) ([]string, error) {
	pt := &patch{}
	setRequired(pt, "label", "label", c.label, &p.Label, length("label", 1, 30))
	setRequired(pt, "entityID", "entity_id", c.entityID, &p.EntityID, length("entityID", 1, 1024))
	setRequired(pt, "ssoURL", "sso_url", c.ssoURL, &p.SSOURL, func(s string) error { return checkURL("ssoURL", s, 2048) })
	setRequired(pt, "certificate", "certificate", c.certificate, &p.Certificate, checkCertificate)
	p.Certificate = strings.TrimSpace(p.Certificate)
	setOptional(pt, "defaultTeam", "default_team_id", c.defaultTeam, &p.DefaultTeamID, func(id string) error {
		if _, err := store.GetTeam(ctx, r.DB, p.OrganizationID, id); errors.Is(err, store.ErrNotFound) {
			return Invalid("defaultTeam", "no team %q in this organization", id)
		} else if err != nil {
			return err
		}
		return nil
	})
	setOptional(pt, "defaultRole", "default_role", c.defaultRole, &p.DefaultRole, nil)
	return pt.columns, pt.err
}

// checkCertificate accepts one X.509 certificate in PEM: a certificate that
// does not parse could never verify a sign-in.
func checkCertificate(s string) error {
	if err := checkLength("certificate", s, 1, 10000); err != nil {
		return err
	}
	block, rest := pem.Decode([]byte(strings.TrimSpace(s)))
	if block == nil || block.Type != "CERTIFICATE" || strings.TrimSpace(string(rest)) != "" {
		return Invalid("certificate", "must be one X.509 certificate in PEM (-----BEGIN CERTIFICATE-----)")
	}
	if _, err := x509.ParseCertificate(block.Bytes); err != nil {
		return Invalid("certificate", "is not a valid X.509 certificate")
	}
	return nil
}

// providerCertificate is the parsed certificate of an active provider.
func providerCertificate(p *store.SAMLProvider) (*x509.Certificate, error) {
	block, _ := pem.Decode([]byte(p.Certificate))
	if block == nil {
		return nil, errors.New("the provider's certificate is not PEM")
	}
	return x509.ParseCertificate(block.Bytes)
}

func (r *mutationResolver) CreateSAMLProvider(ctx context.Context, orgID string, input model.CreateSAMLProviderInput) (*store.SAMLProvider, error) {
	// SECURITY: admins manage single sign-on.
	if err := requireOrgRole(ctx, orgID, store.RoleAdmin, "organization"); err != nil {
		return nil, err
	}
	now := r.now()
	p := &store.SAMLProvider{ID: store.NewID(), OrganizationID: orgID, CreatedAt: now, UpdatedAt: now}
	if _, err := r.applySAMLProvider(ctx, p, samlProviderChanges{
		label: graphql.OmittableOf(&input.Label), entityID: input.EntityID, certificate: input.Certificate,
		ssoURL: input.SsoURL, defaultTeam: input.DefaultTeam, defaultRole: input.DefaultRole,
	}); err != nil {
		return nil, err
	}
	if err := store.CreateSAMLProvider(ctx, r.DB, p); err != nil {
		return nil, err
	}
	return p, nil
}

func (r *mutationResolver) UpdateSAMLProvider(ctx context.Context, orgID, id string, input model.UpdateSAMLProviderInput) (*store.SAMLProvider, error) {
	p, err := r.samlProvider(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	columns, err := r.applySAMLProvider(ctx, p, samlProviderChanges{
		label: input.Label, entityID: input.EntityID, certificate: input.Certificate,
		ssoURL: input.SsoURL, defaultTeam: input.DefaultTeam, defaultRole: input.DefaultRole,
	})
	if err != nil || len(columns) == 0 {
		return p, err
	}
	p.UpdatedAt = r.now()
	if err := store.UpdateSAMLProvider(ctx, r.DB, p, append(columns, "updated_at")...); err != nil {
		return nil, err
	}
	return p, nil
}

func (r *mutationResolver) DeleteSAMLProvider(ctx context.Context, orgID, id string) (bool, error) {
	// SECURITY: admins manage single sign-on; a provider of another
	// organization is not deleted (the organization is part of the match).
	if err := requireOrgRole(ctx, orgID, store.RoleAdmin, "organization"); err != nil {
		return false, err
	}
	return store.DeleteSAMLProvider(ctx, r.DB, orgID, id)
}

type samlProviderResolver struct{ *Resolver }

var _ generated.SAMLProviderResolver = (*samlProviderResolver)(nil)

func (r *Resolver) SAMLProvider() generated.SAMLProviderResolver { return &samlProviderResolver{r} }

func (r *samlProviderResolver) DefaultTeam(ctx context.Context, p *store.SAMLProvider) (*store.Team, error) {
	if p.DefaultTeamID == nil {
		return nil, nil
	}
	t, err := r.team(ctx, p.OrganizationID, *p.DefaultTeamID)
	if isNotFound(err) {
		return nil, nil
	}
	return t, err
}

func (r *samlProviderResolver) Service(_ context.Context, p *store.SAMLProvider) (*model.SAMLProviderService, error) {
	return r.samlService(p), nil
}

func (r *samlProviderResolver) Urls(_ context.Context, p *store.SAMLProvider) (*model.SAMLProviderURLs, error) {
	return &model.SAMLProviderURLs{Location: r.URLs.API("/v1/orgs/" + pathEscape(p.OrganizationID) + "/saml/" + pathEscape(p.ID))}, nil
}

// samlService is this service as provider p's identity provider knows it,
// under the public URL (SAMLPath, served by sso_login.go): the entity ID is
// also where its metadata is served.
func (r *Resolver) samlService(p *store.SAMLProvider) *model.SAMLProviderService {
	base := r.URLs.API(SAMLPath + pathEscape(p.ID))
	return &model.SAMLProviderService{EntityID: base, AcsURL: base + "/acs", StartURL: base + "/start"}
}
