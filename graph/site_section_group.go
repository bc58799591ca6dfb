package graph

import (
	"context"
	"errors"
	"slices"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

func (r *mutationResolver) CreateSiteSectionGroup(ctx context.Context, organizationID, siteID string, input model.CreateSiteSectionGroupInput) (*store.SiteSectionGroup, error) {
	if err := checkLength("title", input.Title, 1, 100); err != nil {
		return nil, err
	}
	g := &store.SiteSectionGroup{ID: store.NewID(), OrganizationID: organizationID, SiteID: siteID, Title: input.Title, CreatedAt: r.now()}
	p := &patch{}
	setOptional(p, "icon", "icon", input.Icon, &g.Icon, length("icon", 1, 50))
	setOptional(p, "parent", "parent_group_id", input.Parent, &g.ParentGroupID, nil)
	if p.err != nil {
		return nil, p.err
	}
	sectionIDs, _ := input.Sections.ValueOK()
	err := r.changeStructure(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx, _ *store.Site, t *siteTree) error {
		if g.ParentGroupID != nil {
			if t.group(*g.ParentGroupID) == nil {
				return Invalid("parent", "no such section group in this site")
			}
			if t.depth(g.ParentGroupID) >= maxGroupDepth {
				return Invalid("parent", "groups nest at most %d deep", maxGroupDepth)
			}
		}
		var sections []*store.SiteSection
		for i, id := range sectionIDs {
			s := t.section(id)
			if s == nil {
				return Invalid("sections["+itoa(i)+"]", "no such section in this site")
			}
			if !slices.Contains(sections, s) {
				sections = append(sections, s)
			}
		}
		g.Position = t.nextPosition(g.ParentGroupID)
		if err := store.Insert(ctx, tx, g); err != nil {
			return err
		}
		t.groups = append(t.groups, g)
		for _, s := range sections {
			if err := placeEntry(ctx, tx, t, entry{section: s}, &g.ID, len(t.children(&g.ID))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

func (r *mutationResolver) UpdateSiteSectionGroup(ctx context.Context, organizationID, siteID, id string, input model.UpdateSiteSectionGroupInput) (*store.SiteSectionGroup, error) {
	var g *store.SiteSectionGroup
	err := r.changeStructure(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx, _ *store.Site, t *siteTree) error {
		if g = t.group(id); g == nil {
			return NotFound("site section group")
		}
		p := &patch{}
		setRequired(p, "title", "title", input.Title, &g.Title, length("title", 1, 100))
		setOptional(p, "icon", "icon", input.Icon, &g.Icon, length("icon", 1, 50))
		if p.err != nil || !p.changed() {
			return p.err
		}
		return store.Update(ctx, tx, g, p.columns...)
	})
	return g, err
}

func (r *mutationResolver) DeleteSiteSectionGroup(ctx context.Context, organizationID, siteID, id string) (bool, error) {
	deleted := false
	err := r.changeStructure(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx, _ *store.Site, t *siteTree) error {
		g := t.group(id)
		if g == nil {
			return nil
		}
		// The group's children take its place in its container.
		list := t.children(g.ParentGroupID)
		i := slices.IndexFunc(list, func(e entry) bool { return e.id() == g.ID })
		list = slices.Concat(list[:i], t.children(&g.ID), list[i+1:])
		if err := writeContainer(ctx, tx, g.ParentGroupID, list); err != nil {
			return err
		}
		t.groups = slices.DeleteFunc(t.groups, func(x *store.SiteSectionGroup) bool { return x.ID == g.ID })
		deleted = true
		return store.Delete(ctx, tx, g)
	})
	if errors.Is(err, errSiteMissing) {
		return false, nil // the site is gone: so is the group
	}
	return deleted, err
}

func (r *mutationResolver) AddSectionToGroup(ctx context.Context, organizationID, siteID, groupID string, input model.AddSectionToGroupInput) (*store.SiteSectionGroup, error) {
	var g *store.SiteSectionGroup
	err := r.changeStructure(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx, _ *store.Site, t *siteTree) error {
		if g = t.group(groupID); g == nil {
			return NotFound("site section group")
		}
		s := t.section(input.SectionID)
		if s == nil {
			return Invalid("sectionId", "no such section in this site")
		}
		if s.GroupID != nil && *s.GroupID == g.ID {
			return nil
		}
		return placeEntry(ctx, tx, t, entry{section: s}, &g.ID, len(t.children(&g.ID)))
	})
	return g, err
}

func (r *mutationResolver) RemoveSectionFromGroup(ctx context.Context, organizationID, siteID, groupID, sectionID string) (bool, error) {
	removed := false
	err := r.changeStructure(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx, _ *store.Site, t *siteTree) error {
		g := t.group(groupID)
		if g == nil {
			return NotFound("site section group")
		}
		s := t.section(sectionID)
		if s == nil || s.GroupID == nil || *s.GroupID != g.ID {
			return nil
		}
		// The section goes just after its former group.
		list := t.children(g.ParentGroupID)
		i := slices.IndexFunc(list, func(e entry) bool { return e.id() == g.ID })
		removed = true
		return placeEntry(ctx, tx, t, entry{section: s}, g.ParentGroupID, i+1)
	})
	return removed, err
}
