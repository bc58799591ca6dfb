package graph

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/internal/customization"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// A site's customization settings, and what its site spaces override of
// them, in the shapes of GitBook's reference (graph/internal/customization
// checks them, gives the defaults and merges). They are the organization's
// admins' to read and change; whoever may read the published site reads
// the settings in effect in its profile, as its visitors get them.

// requireCustomizationAdmin checks the caller may read and change the
// customization of orgID's sites.
func requireCustomizationAdmin(ctx context.Context, orgID string) error {
	// SECURITY: a site's customization is for the organization's admins;
	// other members get 403, strangers 404.
	return requireContentRole(ctx, orgID, store.RoleAdmin, "site")
}

func (r *siteResolver) Customization(ctx context.Context, s *store.Site) (model.CustomizationSettings, error) {
	c, err := r.adminCustomizationsOf(ctx, s.OrganizationID, s.ID)
	if err != nil {
		return nil, err
	}
	return c.settings(), nil
}

func (r *siteResolver) SiteSpace(ctx context.Context, s *store.Site, id string) (*store.SiteSpace, error) {
	// SECURITY: the site spaces the caller may see, as the site's lists
	// show them.
	set, err := r.visibleSiteSpaces(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	for _, ss := range set.list() {
		if ss.ID == id {
			return ss, nil
		}
	}
	return nil, NotFound("site space")
}

func (r *siteSpaceResolver) Customization(ctx context.Context, ss *store.SiteSpace) (model.CustomizationSettings, error) {
	c, err := r.adminCustomizationsOf(ctx, ss.OrganizationID, ss.SiteID)
	if err != nil {
		return nil, err
	}
	return customization.Merge(c.settings(), c.overridesOf(ss.ID)), nil
}

func (r *siteSpaceResolver) CustomizationOverrides(ctx context.Context, ss *store.SiteSpace) (model.CustomizationSettings, error) {
	c, err := r.adminCustomizationsOf(ctx, ss.OrganizationID, ss.SiteID)
	if o := c.overridesOf(ss.ID); o != nil || err != nil {
		return o, err
	}
	return model.CustomizationSettings{}, nil
}

type publishedContentSiteResolver struct{ *Resolver }

var _ generated.PublishedContentSiteResolver = (*publishedContentSiteResolver)(nil)

func (r *Resolver) PublishedContentSite() generated.PublishedContentSiteResolver {
	return &publishedContentSiteResolver{r}
}

// Customizations are the settings in effect: the site's, and those of each
// site space the caller may see that overrides some.
func (r *publishedContentSiteResolver) Customizations(ctx context.Context, p *model.PublishedContentSite) (*model.PublishedSiteCustomizations, error) {
	c, err := r.customizationsOf(ctx, p.Site.ID)
	if err != nil {
		return nil, err
	}
	settings := c.settings()
	siteSpaces := map[string]any{}
	if c != nil && len(c.siteSpaces) > 0 {
		// SECURITY: only the site spaces the caller may see, as the
		// structure beside lists them.
		set, err := r.visibleSiteSpaces(ctx, p.Site.ID)
		if err != nil {
			return nil, err
		}
		for _, ss := range set.list() {
			if o := c.overridesOf(ss.ID); o != nil {
				siteSpaces[ss.ID] = customization.Merge(settings, o)
			}
		}
	}
	return &model.PublishedSiteCustomizations{Site: settings, SiteSpaces: siteSpaces}, nil
}

// siteCustomizations are what a site's customization stores: its settings
// as last set (nil: never set) and the overrides of its site spaces that
// have any, by site space id. They are decoded once per request and shared:
// readers must not change them. A site with neither has none (nil).
type siteCustomizations struct {
	site       map[string]any
	siteSpaces map[string]map[string]any
}

// settings are the site's settings: as last set, or the defaults.
func (c *siteCustomizations) settings() map[string]any {
	if c == nil || c.site == nil {
		return customization.Defaults()
	}
	return c.site
}

// overridesOf are what site space id overrides; nil when nothing.
func (c *siteCustomizations) overridesOf(id string) map[string]any {
	if c == nil {
		return nil
	}
	return c.siteSpaces[id]
}

// customizationsOf reads what site siteID's customization stores, through
// the request's loader. The caller has checked the caller's rights.
func (r *Resolver) customizationsOf(ctx context.Context, siteID string) (*siteCustomizations, error) {
	return r.loaders(ctx).SiteCustomizations.Load(ctx, siteID)()
}

// adminCustomizationsOf is customizationsOf for the site's admins: others
// get 403, strangers 404.
func (r *Resolver) adminCustomizationsOf(ctx context.Context, orgID, siteID string) (*siteCustomizations, error) {
	if err := requireCustomizationAdmin(ctx, orgID); err != nil {
		return nil, err
	}
	return r.customizationsOf(ctx, siteID)
}

func (r *mutationResolver) UpdateSiteCustomization(ctx context.Context, organizationID, siteID string, input model.CustomizationSettings) (*store.Site, error) {
	if err := requireCustomizationAdmin(ctx, organizationID); err != nil {
		return nil, err
	}
	if err := invalidCustomization(customization.CheckSettings(input)); err != nil {
		return nil, err
	}
	settings, err := json.Marshal(input)
	if err != nil {
		return nil, err
	}
	var site *store.Site
	err = r.changeCustomization(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx, s *store.Site) error {
		site = s
		return store.SaveSiteCustomization(ctx, tx, &store.SiteCustomization{
			SiteID: s.ID, OrganizationID: s.OrganizationID, Settings: settings, UpdatedAt: r.now()})
	})
	if err != nil {
		return nil, err
	}
	r.loaders(ctx).Site.Prime(ctx, site.ID, site)
	return site, nil
}

func (r *mutationResolver) OverrideSiteSpaceCustomization(ctx context.Context, organizationID, siteID, siteSpaceID string, input model.CustomizationSettings) (*store.SiteSpace, error) {
	if err := requireCustomizationAdmin(ctx, organizationID); err != nil {
		return nil, err
	}
	if err := invalidCustomization(customization.CheckOverrides(input)); err != nil {
		return nil, err
	}
	var ss *store.SiteSpace
	err := r.changeCustomization(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx, s *store.Site) error {
		var err error
		if ss, err = store.GetLiveSiteSpace(ctx, tx, organizationID, siteID, siteSpaceID); err != nil {
			return orNotFound(err, "site space")
		}
		var overrides map[string]any
		switch stored, err := store.GetSiteSpaceCustomization(ctx, tx, organizationID, ss.ID); {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return err
		default:
			if overrides, err = decodeObject(stored.Overrides); err != nil {
				return err
			}
		}
		overrides = customization.Override(overrides, input)
		if len(overrides) == 0 {
			_, err := store.DeleteSiteSpaceCustomization(ctx, tx, organizationID, ss.ID)
			return err
		}
		raw, err := json.Marshal(overrides)
		if err != nil {
			return err
		}
		return store.SaveSiteSpaceCustomization(ctx, tx, &store.SiteSpaceCustomization{
			SiteSpaceID: ss.ID, OrganizationID: organizationID, SiteID: s.ID, Overrides: raw, UpdatedAt: r.now()})
	})
	return ss, err
}

func (r *mutationResolver) DeleteSiteSpaceCustomization(ctx context.Context, organizationID, siteID, siteSpaceID string) (bool, error) {
	if err := requireCustomizationAdmin(ctx, organizationID); err != nil {
		return false, err
	}
	deleted := false
	err := r.changeCustomization(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx, _ *store.Site) error {
		ss, err := store.GetLiveSiteSpace(ctx, tx, organizationID, siteID, siteSpaceID)
		if errors.Is(err, store.ErrNotFound) {
			return nil // nothing to delete
		} else if err != nil {
			return err
		}
		deleted, err = store.DeleteSiteSpaceCustomization(ctx, tx, organizationID, ss.ID)
		return err
	})
	if errors.Is(err, errSiteMissing) {
		return false, nil
	}
	return deleted, err
}

// changeCustomization runs fn in a transaction holding site siteID's lock,
// which orders the writes of its customization (an override is read,
// changed and written back) and keeps the site and its site spaces from
// going meanwhile; then the request's loaders forget what they read of it.
// The caller has checked the caller's rights.
func (r *Resolver) changeCustomization(ctx context.Context, orgID, siteID string, fn func(ctx context.Context, tx bun.Tx, s *store.Site) error) error {
	err := r.inLockedSite(ctx, orgID, siteID, fn)
	r.loaders(ctx).SiteCustomizations.Clear(ctx, siteID)
	return err
}

// invalidCustomization is a customization's problem as a bad request naming
// the member.
func invalidCustomization(err error) error {
	var p *customization.Problem
	if errors.As(err, &p) {
		return Invalid(p.Member, "%s", p.Message)
	}
	return err
}

// readSiteCustomizations reads, in one query, what the customizations of
// these sites of org store, decoded, by site.
func readSiteCustomizations(ctx context.Context, db *store.DB, org string, siteIDs []string) (map[string]*siteCustomizations, error) {
	rows, err := store.CustomizationsOfSites(ctx, db, org, siteIDs)
	if err != nil {
		return nil, err
	}
	out := map[string]*siteCustomizations{}
	for _, row := range rows {
		c := out[row.SiteID]
		if c == nil {
			c = &siteCustomizations{siteSpaces: map[string]map[string]any{}}
			out[row.SiteID] = c
		}
		value, err := decodeObject(row.Value)
		if err != nil {
			return nil, err
		}
		if row.SiteSpaceID == "" {
			c.site = value
		} else {
			c.siteSpaces[row.SiteSpaceID] = value
		}
	}
	return out, nil
}

// decodeObject decodes a JSON object stored by the server.
func decodeObject(raw json.RawMessage) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}
