package graph

import (
	"context"
	"errors"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// A site's share links and its visitor authentication settings, GitBook's
// ShareLink and SitePublishingAuth: the secrets that open a site to
// visitors beyond its visibility. Like the site's own share key
// (Site.shareKey) they are for those who manage the site, the create role
// or higher; other members who read the site get 403 (null and FORBIDDEN
// in GraphQL: the whole field is the secret, unlike shareKey, a field of
// every site read), strangers 404. Here they are listed, made, changed and
// removed; checking what visitors bring against them is the published
// site's reader's business.

const (
	// maxShareLinkName is the reference's ShareLinkName.maxLength (its
	// minLength is 0).
	maxShareLinkName = 50
	maxFallbackURL   = 2048
)

// requireSiteManager checks the caller manages orgID's sites, and so may
// read and change their share links and visitor authentication.
func requireSiteManager(ctx context.Context, orgID string) error {
	// SECURITY: share links and the visitor authentication key open a site
	// to the public: for those who manage the site, who see its share key
	// (siteResolver.ShareKey) and may change it (updateSite); other members
	// get 403, strangers 404.
	return requireContentRole(ctx, orgID, store.RoleCreate, "site")
}

func (r *siteResolver) ShareLinks(ctx context.Context, s *store.Site, page *string, limit *int, _ *int, _ *string) (*model.SiteShareLinkList, error) {
	if err := requireSiteManager(ctx, s.OrganizationID); err != nil {
		return nil, err
	}
	return paginate(page, limit, listQuery[*store.SiteShareLink]{
		read: func(p store.Page) ([]*store.SiteShareLink, error) {
			return store.ListSiteShareLinks(ctx, r.DB, s.OrganizationID, s.ID, p)
		},
		key: func(l *store.SiteShareLink) store.Keyset { return store.Keyset{Time: l.CreatedAt, ID: l.ID} },
	})
}

func (r *siteResolver) PublishingAuth(ctx context.Context, s *store.Site) (*store.SitePublishingAuth, error) {
	if err := requireSiteManager(ctx, s.OrganizationID); err != nil {
		return nil, err
	}
	a, err := r.loaders(ctx).SitePublishingAuths.Load(ctx, s.ID)()
	if err == nil && a == nil {
		// Every site has them (store.CreateSite): one without is not whole.
		return nil, NotFound("publishing auth")
	}
	return a, err
}

type siteShareLinkResolver struct{ *Resolver }

var _ generated.SiteShareLinkResolver = (*siteShareLinkResolver)(nil)

func (r *Resolver) SiteShareLink() generated.SiteShareLinkResolver { return &siteShareLinkResolver{r} }

// Urls: the link in the API, and the site's published address with the
// link's key, as the site's own key makes it (publishedURL).
func (r *siteShareLinkResolver) Urls(ctx context.Context, l *store.SiteShareLink) (*model.SiteShareLinkURLs, error) {
	s, err := r.loaders(ctx).Site.Load(ctx, l.SiteID)()
	if err != nil {
		return nil, err
	}
	urls := &model.SiteShareLinkURLs{Location: r.URLs.API("/v1/orgs/" + pathEscape(l.OrganizationID) + "/sites/" +
		pathEscape(l.SiteID) + "/share-links/" + pathEscape(l.ID))}
	if s.Published {
		u := withShareKey(r.sitePublishedBase(s), l.Key)
		urls.Published = &u
	}
	return urls, nil
}

func (r *mutationResolver) CreateSiteShareLink(ctx context.Context, organizationID, siteID string, input model.CreateSiteShareLinkInput) (*store.SiteShareLink, error) {
	if err := requireSiteManager(ctx, organizationID); err != nil {
		return nil, err
	}
	if err := checkLength("name", input.Name, 0, maxShareLinkName); err != nil {
		return nil, err
	}
	l := &store.SiteShareLink{ID: store.NewID(), OrganizationID: organizationID, SiteID: siteID, Name: input.Name,
		Key: store.NewSecret(), Active: true, CreatedAt: r.now()}
	err := r.changeSiteAccess(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx) error {
		return store.CreateSiteShareLink(ctx, tx, l)
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (r *mutationResolver) UpdateSiteShareLink(ctx context.Context, organizationID, siteID, shareLinkID string, input model.UpdateSiteShareLinkInput) (*store.SiteShareLink, error) {
	if err := requireSiteManager(ctx, organizationID); err != nil {
		return nil, err
	}
	if !input.Name.IsSet() && !input.Active.IsSet() {
		return nil, BadRequest("give at least one of active and name")
	}
	var link *store.SiteShareLink
	err := r.changeSiteAccess(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx) error {
		l, err := store.GetSiteShareLink(ctx, tx, organizationID, siteID, shareLinkID)
		if err != nil {
			return orNotFound(err, "share link")
		}
		p := &patch{}
		setRequired(p, "name", "name", input.Name, &l.Name, length("name", 0, maxShareLinkName))
		setRequired(p, "active", "active", input.Active, &l.Active, nil)
		if p.err != nil {
			return p.err
		}
		link = l
		return store.UpdateSiteShareLink(ctx, tx, l, p.columns...)
	})
	if err != nil {
		return nil, err
	}
	return link, nil
}

func (r *mutationResolver) DeleteSiteShareLink(ctx context.Context, organizationID, siteID, shareLinkID string) (bool, error) {
	if err := requireSiteManager(ctx, organizationID); err != nil {
		return false, err
	}
	deleted := false
	err := r.changeSiteAccess(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx) error {
		var err error
		deleted, err = store.DeleteSiteShareLink(ctx, tx, organizationID, siteID, shareLinkID)
		return err
	})
	if errors.Is(err, errSiteMissing) {
		return false, nil // nothing to delete
	}
	return deleted, err
}

func (r *mutationResolver) UpdateSitePublishingAuth(ctx context.Context, organizationID, siteID string, input model.UpdateSitePublishingAuthInput) (*store.SitePublishingAuth, error) {
	if err := requireSiteManager(ctx, organizationID); err != nil {
		return nil, err
	}
	if input.Backend != store.VisitorAuthCustom {
		return nil, Invalid("backend", "must be %s: this server runs no visitor-authentication integrations", store.VisitorAuthCustom)
	}
	return r.changePublishingAuth(ctx, organizationID, siteID, func(a *store.SitePublishingAuth) ([]string, error) {
		p := &patch{}
		setOptional(p, "fallbackURL", "fallback_url", input.FallbackURL, &a.FallbackURL, func(u string) error {
			return checkURL("fallbackURL", u, maxFallbackURL)
		})
		a.Backend = input.Backend
		return append(p.columns, "backend"), p.err
	})
}

func (r *mutationResolver) RegenerateSitePublishingAuth(ctx context.Context, organizationID, siteID string) (*store.SitePublishingAuth, error) {
	if err := requireSiteManager(ctx, organizationID); err != nil {
		return nil, err
	}
	return r.changePublishingAuth(ctx, organizationID, siteID, func(a *store.SitePublishingAuth) ([]string, error) {
		a.PrivateKey = store.NewSecret()
		return []string{"private_key"}, nil
	})
}

// changePublishingAuth reads site siteID's visitor authentication settings
// under the site's lock, lets change set them, and writes the columns it
// names. The caller has checked the caller's rights.
func (r *Resolver) changePublishingAuth(ctx context.Context, orgID, siteID string, change func(a *store.SitePublishingAuth) ([]string, error)) (*store.SitePublishingAuth, error) {
	var auth *store.SitePublishingAuth
	err := r.changeSiteAccess(ctx, orgID, siteID, func(ctx context.Context, tx bun.Tx) error {
		a, err := store.GetSitePublishingAuth(ctx, tx, orgID, siteID)
		if err != nil {
			return orNotFound(err, "publishing auth")
		}
		columns, err := change(a)
		if err != nil {
			return err
		}
		a.UpdatedAt, auth = r.now(), a
		return store.UpdateSitePublishingAuth(ctx, tx, a, columns...)
	})
	if err != nil {
		return nil, err
	}
	return auth, nil
}

// changeSiteAccess changes the rows of a site's links and key
// (changeSiteRows), then the request's loaders forget its visitor
// authentication settings. The caller has checked the caller's rights.
func (r *Resolver) changeSiteAccess(ctx context.Context, orgID, siteID string, fn func(ctx context.Context, tx bun.Tx) error) error {
	err := r.changeSiteRows(ctx, orgID, siteID, fn)
	r.loaders(ctx).SitePublishingAuths.Clear(ctx, siteID)
	return err
}
