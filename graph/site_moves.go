package graph

import (
	"context"
	"slices"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Moving items of a site's structure: sections and groups before or after
// another section or group (joining its container), site spaces before or
// after another site space (joining its section). The deprecated per-kind
// moves and sortSiteStructure all come here.

// pointer is a resolved "before"/"after" of a move position.
type pointer struct {
	kind string // site-space, site-section or site-section-group
	id   string
}

// movePosition reads a position: at most one of before and after (neither:
// the end). field names the position in errors.
func movePosition(field string, before, after *pointer) (target *pointer, placeAfter bool, err error) {
	switch {
	case before != nil && after != nil:
		return nil, false, Invalid(field, "give either before or after, not both")
	case before != nil:
		return before, false, nil
	case after != nil:
		return after, true, nil
	}
	return nil, false, nil
}

// moveEntry moves a section or group before or after target (a section or
// group), or to the end of the site without target.
func moveEntry(ctx context.Context, tx bun.IDB, t *siteTree, e entry, target *pointer, placeAfter bool, field string) error {
	if target == nil {
		return placeEntry(ctx, tx, t, e, nil, t.nextPosition(nil))
	}
	var dest entry
	switch target.kind {
	case "site-section":
		if s := t.section(target.id); s != nil {
			dest = entry{section: s}
		}
	case "site-section-group":
		if g := t.group(target.id); g != nil {
			dest = entry{group: g}
		}
	default:
		return Invalid(field+".type", "must be site-section or site-section-group")
	}
	if dest.group == nil && dest.section == nil {
		return Invalid(field, "no such %s in this site", target.kind)
	}
	if dest.id() == e.id() {
		return Invalid(field, "cannot place an item relative to itself")
	}
	container := dest.container()
	if e.group != nil {
		if t.within(container, e.group) {
			return Invalid(field, "cannot move a group into itself")
		}
		if t.depth(container)+t.height(e.group) > maxGroupDepth {
			return Invalid(field, "groups nest at most %d deep", maxGroupDepth)
		}
	}
	list := slices.DeleteFunc(t.children(container), func(x entry) bool { return x.id() == e.id() })
	i := slices.IndexFunc(list, func(x entry) bool { return x.id() == dest.id() })
	if placeAfter {
		i++
	}
	return writeContainer(ctx, tx, container, slices.Insert(list, i, e))
}

// moveSiteSpace moves a site space before or after target (a site space),
// or to the end of its section without target.
func moveSiteSpace(ctx context.Context, tx bun.IDB, t *siteTree, s *store.SiteSpace, target *pointer, placeAfter bool, field string) error {
	if target == nil {
		return placeSiteSpace(ctx, tx, t, s, s.SectionID, t.nextSiteSpacePosition(s.SectionID))
	}
	if target.kind != "site-space" {
		return Invalid(field+".type", "must be site-space")
	}
	dest := t.siteSpace(target.id)
	if dest == nil {
		return Invalid(field, "no such site space in this site")
	}
	if dest.ID == s.ID {
		return Invalid(field, "cannot place a site space relative to itself")
	}
	list := slices.DeleteFunc(t.siteSpacesIn(dest.SectionID), func(x *store.SiteSpace) bool { return x.ID == s.ID })
	i := slices.IndexFunc(list, func(x *store.SiteSpace) bool { return x.ID == dest.ID })
	if placeAfter {
		i++
	}
	return placeSiteSpace(ctx, tx, t, s, dest.SectionID, i)
}

func (r *mutationResolver) MoveSiteSection(ctx context.Context, organizationID, siteID, id string, input model.MoveSiteSectionInput) (*store.SiteSection, error) {
	var before, after *pointer
	if pos, ok := input.Position.ValueOK(); ok && pos != nil {
		before, after = sectionPointer(pos.Before), sectionPointer(pos.After)
	}
	return r.moveSection(ctx, organizationID, siteID, id, before, after)
}

func sectionPointer(o interface {
	ValueOK() (*model.SiteSectionPointer, bool)
}) *pointer {
	p, ok := o.ValueOK()
	if !ok || p == nil {
		return nil
	}
	return &pointer{kind: p.Type, id: p.SiteSection}
}

func (r *mutationResolver) moveSection(ctx context.Context, orgID, siteID, id string, before, after *pointer) (*store.SiteSection, error) {
	target, placeAfter, err := movePosition("position", before, after)
	if err != nil {
		return nil, err
	}
	var moved *store.SiteSection
	err = r.changeStructure(ctx, orgID, siteID, func(ctx context.Context, tx bun.Tx, _ *store.Site, t *siteTree) error {
		if moved = t.section(id); moved == nil {
			return NotFound("site section")
		}
		field := "position.before"
		if placeAfter {
			field = "position.after"
		}
		return moveEntry(ctx, tx, t, entry{section: moved}, target, placeAfter, field)
	})
	return moved, err
}

func (r *mutationResolver) MoveSiteSectionGroup(ctx context.Context, organizationID, siteID, id string, input model.MoveSiteSectionGroupInput) (*store.SiteSectionGroup, error) {
	before, after := structurePointers(input.Position)
	target, placeAfter, err := movePosition("position", before, after)
	if err != nil {
		return nil, err
	}
	var moved *store.SiteSectionGroup
	err = r.changeStructure(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx, _ *store.Site, t *siteTree) error {
		if moved = t.group(id); moved == nil {
			return NotFound("site section group")
		}
		return moveEntry(ctx, tx, t, entry{group: moved}, target, placeAfter, "position")
	})
	return moved, err
}

func (r *mutationResolver) MoveSiteSpace(ctx context.Context, organizationID, siteID, id string, input model.MoveSiteSpaceInput) (*store.SiteSpace, error) {
	var before, after *pointer
	if pos, ok := input.Position.ValueOK(); ok && pos != nil {
		if p, ok := pos.Before.ValueOK(); ok && p != nil {
			before = &pointer{kind: p.Type, id: p.SiteSpace}
		}
		if p, ok := pos.After.ValueOK(); ok && p != nil {
			after = &pointer{kind: p.Type, id: p.SiteSpace}
		}
	}
	target, placeAfter, err := movePosition("position", before, after)
	if err != nil {
		return nil, err
	}
	var moved *store.SiteSpace
	err = r.changeStructure(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx, _ *store.Site, t *siteTree) error {
		if moved = t.siteSpace(id); moved == nil {
			return NotFound("site space")
		}
		return moveSiteSpace(ctx, tx, t, moved, target, placeAfter, "position")
	})
	return moved, err
}

func (r *mutationResolver) SortSiteStructure(ctx context.Context, organizationID, siteID string, input model.SortSiteStructureInput) (store.StructureItem, error) {
	before, after := structurePointers(input.Position)
	target, placeAfter, err := movePosition("position", before, after)
	if err != nil {
		return nil, err
	}
	var moved store.StructureItem
	err = r.changeStructure(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx, _ *store.Site, t *siteTree) error {
		item := input.Item
		switch item.Type {
		case "site-space":
			s := t.siteSpace(item.ID)
			if s == nil {
				return NotFound("site space")
			}
			moved = s
			return moveSiteSpace(ctx, tx, t, s, target, placeAfter, "position")
		case "site-section":
			s := t.section(item.ID)
			if s == nil {
				return NotFound("site section")
			}
			moved = s
			return moveEntry(ctx, tx, t, entry{section: s}, target, placeAfter, "position")
		case "site-section-group":
			g := t.group(item.ID)
			if g == nil {
				return NotFound("site section group")
			}
			moved = g
			return moveEntry(ctx, tx, t, entry{group: g}, target, placeAfter, "position")
		}
		return Invalid("item.type", "must be site-space, site-section or site-section-group")
	})
	return moved, err
}

func structurePointers(o interface {
	ValueOK() (*model.SiteStructureMovePosition, bool)
}) (before, after *pointer) {
	pos, ok := o.ValueOK()
	if !ok || pos == nil {
		return nil, nil
	}
	if p, ok := pos.Before.ValueOK(); ok && p != nil {
		before = &pointer{kind: p.Type, id: p.ID}
	}
	if p, ok := pos.After.ValueOK(); ok && p != nil {
		after = &pointer{kind: p.Type, id: p.ID}
	}
	return before, after
}

// changeStructure is changeSite for callers allowed to manage the site.
func (r *Resolver) changeStructure(ctx context.Context, orgID, siteID string, fn func(ctx context.Context, tx bun.Tx, s *store.Site, t *siteTree) error) error {
	// SECURITY: changing a site's structure is managing the site.
	if err := requireContentRole(ctx, orgID, store.RoleCreate, "site"); err != nil {
		return err
	}
	return r.changeSite(ctx, orgID, siteID, func(ctx context.Context, tx bun.Tx, s *store.Site, t *siteTree) error {
		if err := fn(ctx, tx, s, t); err != nil {
			return err
		}
		return r.recordLive(ctx, tx, store.LiveEvent{Type: store.LiveSiteStructureUpdated, OrganizationID: s.OrganizationID, SiteID: &s.ID})
	})
}
