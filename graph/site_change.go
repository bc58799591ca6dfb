package graph

import (
	"context"
	"errors"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/store"
)

// The transactions every change of a site runs in: each holds the site's
// lock (lockSite), so changes to one site are ordered, the site cannot go
// meanwhile, and published sites hear of the change.

// errSiteMissing is the not-found of a site that does not exist, told apart
// from the identical answer to a caller who may not see it: a delete below a
// missing site deleted nothing and answers so, a stranger's delete is a 404.
var errSiteMissing = NotFound("site")

// changeSite runs fn in a transaction holding the site's lock, with the
// site's whole structure loaded, then forgets what the request's loaders
// knew of the site. The caller has checked the caller's rights.
func (r *Resolver) changeSite(ctx context.Context, orgID, siteID string, fn func(ctx context.Context, tx bun.Tx, s *store.Site, t *siteTree) error) error {
	err := store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		s, err := lockSite(ctx, tx, orgID, siteID)
		if err != nil {
			return err
		}
		t, err := loadSiteTree(ctx, tx, s)
		if err != nil {
			return err
		}
		if err := fn(ctx, tx, s, t); err != nil {
			return err
		}
		return ensureDefaults(ctx, tx, t)
	})
	l := r.loaders(ctx)
	l.Site.Clear(ctx, siteID)
	l.SiteGroups.Clear(ctx, siteID)
	l.SiteSections.Clear(ctx, siteID)
	l.SiteSpaces.Clear(ctx, siteID)
	l.SiteSpaceCount.Clear(ctx, siteID)
	for _, summaries := range []bool{false, true} {
		l.siteSpaceSpaces(summaries).Clear(ctx, siteID)
		l.siteSpacesWithSpaces(summaries).Clear(ctx, siteID)
		l.forget(siteSpacesMemo(siteID, summaries))
	}
	l.forget(siteSpacesPrefetchMemo(siteID))
	l.forget(siteTreeMemo(siteID))
	l.forget(visibleSiteSpacesMemo(siteID))
	return err
}

// inLockedSite runs fn in a transaction holding site siteID of orgID's
// lock (lockSite), with the site as locked: errSiteMissing when there is
// none. The caller has checked the caller's rights.
func (r *Resolver) inLockedSite(ctx context.Context, orgID, siteID string, fn func(ctx context.Context, tx bun.Tx, s *store.Site) error) error {
	return store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		s, err := lockSite(ctx, tx, orgID, siteID)
		if err != nil {
			return err
		}
		return fn(ctx, tx, s)
	})
}

// changeSiteRows runs fn, a change to rows of site siteID of orgID (its
// share links, its redirects), in a transaction holding the site's lock,
// as every change of a site does: such writes are ordered, the site
// cannot go meanwhile, and the change is heard as one to the site
// (store.LockSite), so published sites forget what they made of it. Then
// the request's loaders know the site as locked (addresses are made from
// it). errSiteMissing when there is no site; the caller has checked the
// caller's rights.
func (r *Resolver) changeSiteRows(ctx context.Context, orgID, siteID string, fn func(ctx context.Context, tx bun.Tx) error) error {
	var site *store.Site
	err := r.inLockedSite(ctx, orgID, siteID, func(ctx context.Context, tx bun.Tx, s *store.Site) error {
		site = s
		return fn(ctx, tx)
	})
	if err == nil {
		r.loaders(ctx).Site.Prime(ctx, site.ID, site)
	}
	return err
}

// lockSite locks site siteID of orgID for the rest of tx (store.LockSite):
// errSiteMissing when there is none.
func lockSite(ctx context.Context, tx bun.Tx, orgID, siteID string) (*store.Site, error) {
	s, err := store.LockSite(ctx, tx, orgID, siteID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errSiteMissing
	}
	return s, err
}
