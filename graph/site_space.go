package graph

import (
	"context"
	"errors"
	"slices"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

func (r *mutationResolver) CreateSiteSpace(ctx context.Context, organizationID, siteID string, input model.CreateSiteSpaceInput) (*store.SiteSpace, error) {
	sectionID, _ := input.SectionID.ValueOK()
	var created *store.SiteSpace
	err := r.changeStructure(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx, site *store.Site, t *siteTree) error {
		var err error
		created, err = r.addSiteSpace(ctx, tx, site, t, input.SpaceID, sectionID, "spaceId")
		return err
	})
	if err != nil {
		return nil, err
	}
	return created, nil
}

// addSiteSpace publishes space spaceID in section sectionID of the site (nil:
// the default section, or the root of a site without sections), at the end.
func (r *Resolver) addSiteSpace(ctx context.Context, tx bun.IDB, site *store.Site, t *siteTree, spaceID string, sectionID *string, field string) (*store.SiteSpace, error) {
	space, err := r.siteSpaceTarget(ctx, tx, site.OrganizationID, spaceID, field)
	if err != nil {
		return nil, err
	}
	switch {
	case sectionID != nil && t.section(*sectionID) == nil:
		return nil, Invalid("sectionId", "no such section in this site")
	case sectionID == nil && len(t.sections) > 0:
		d := t.defaultSection()
		if d == nil {
			d = t.orderedSections()[0]
		}
		sectionID = &d.ID
	}
	siblings := t.siteSpacesIn(sectionID)
	ss := &store.SiteSpace{
		ID: store.NewID(), OrganizationID: site.OrganizationID, SiteID: site.ID, SectionID: sectionID, SpaceID: space.ID,
		Path: uniquePath(slugify(space.Title, "space"), pathsOf(siblings, "")), IsDefault: len(siblings) == 0,
		Position: t.nextSiteSpacePosition(sectionID), CreatedAt: r.now(),
	}
	if err := store.Insert(ctx, tx, ss); err != nil {
		return nil, err
	}
	t.siteSpaces = append(t.siteSpaces, ss)
	return ss, nil
}

// siteSpaceTarget is the space a site space may point to: a live space of
// the site's organization that the caller can read (anything else is a bad
// request, never a leak).
func (r *Resolver) siteSpaceTarget(ctx context.Context, tx bun.IDB, orgID, spaceID, field string) (*store.Space, error) {
	// Share-locked: a transfer waits for the site space, and then refuses
	// to give away a published space, or goes first, and the space is no
	// longer the organization's (read without the lock, it was published
	// by a site of one organization while it belonged to another).
	s, err := store.ShareLockSpace(ctx, tx, orgID, spaceID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (s.DeletedAt != nil || s.OrganizationID != orgID)) {
		return nil, Invalid(field, "no such space in this organization")
	} else if err != nil {
		return nil, err
	}
	// SECURITY: a site publishes only what its editor can read: a space id
	// is no way into a space.
	if _, err := r.spaceRole(ctx, s); isNotFound(err) {
		return nil, Invalid(field, "no such space in this organization")
	} else if err != nil {
		return nil, err
	}
	return s, nil
}

func (r *mutationResolver) UpdateSiteSpace(ctx context.Context, organizationID, siteID, id string, input model.UpdateSiteSpaceInput) (*store.SiteSpace, error) {
	var ss *store.SiteSpace
	err := r.changeStructure(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx, _ *store.Site, t *siteTree) error {
		if ss = t.siteSpace(id); ss == nil {
			return NotFound("site space")
		}
		p := &patch{}
		setRequired(p, "path", "path", input.Path, &ss.Path, func(path string) error {
			if err := checkPath("path", path); err != nil {
				return err
			}
			if slices.Contains(pathsOf(t.siteSpacesIn(ss.SectionID), ss.ID), path) {
				return Conflict("path %q is already used by another site space here", path)
			}
			return nil
		})
		setOptional(p, "condition", "condition", input.Condition, &ss.Condition, func(c string) error { return checkCondition("condition", c) })
		setRequired(p, "spaceId", "space_id", input.SpaceID, &ss.SpaceID, func(spaceID string) error {
			_, err := r.siteSpaceTarget(ctx, tx, organizationID, spaceID, "spaceId")
			return err
		})
		if p.err != nil || !p.changed() {
			return p.err
		}
		return store.Update(ctx, tx, ss, p.columns...)
	})
	return ss, err
}

func (r *mutationResolver) DeleteSiteSpace(ctx context.Context, organizationID, siteID, id string) (bool, error) {
	deleted := false
	err := r.changeStructure(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx, _ *store.Site, t *siteTree) error {
		ss := t.siteSpace(id)
		if ss == nil {
			return nil
		}
		t.siteSpaces = slices.DeleteFunc(t.siteSpaces, func(x *store.SiteSpace) bool { return x.ID == ss.ID })
		deleted = true
		return store.Delete(ctx, tx, ss)
	})
	if errors.Is(err, errSiteMissing) {
		return false, nil
	}
	return deleted, err
}
