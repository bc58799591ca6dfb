package graph

import (
	"context"
	"errors"
	"slices"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

func (r *mutationResolver) CreateSiteSection(ctx context.Context, organizationID, siteID string, input model.CreateSiteSectionInput) (*store.SiteSection, error) {
	section := &store.SiteSection{ID: store.NewID(), OrganizationID: organizationID, SiteID: siteID, CreatedAt: r.now()}
	var title string
	p := &patch{}
	// The reference's title is nullable: null, as absent, takes the space's.
	if v, set := input.Title.ValueOK(); !set || v != nil {
		setRequired(p, "title", "title", input.Title, &title, length("title", 2, 128))
	}
	setOptional(p, "icon", "icon", input.Icon, &section.Icon, length("icon", 1, 50))
	if p.err != nil {
		return nil, p.err
	}
	err := r.changeStructure(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx, site *store.Site, t *siteTree) error {
		space, err := r.siteSpaceTarget(ctx, tx, organizationID, input.SpaceID, "spaceId")
		if err != nil {
			return err
		}
		if title == "" {
			title = space.Title
			if n := utf8.RuneCountInString(title); n < 2 || n > 128 {
				title = "Untitled section"
			}
		}
		// A site without sections publishes its site spaces at the root: the
		// first section added turns them into a default section of their own.
		if len(t.sections) == 0 {
			if root := t.siteSpacesIn(nil); len(root) > 0 {
				first, err := r.insertSection(ctx, tx, t, site.OrganizationID, site.ID, site.Title)
				if err != nil {
					return err
				}
				for _, ss := range root {
					ss.SectionID = &first.ID
					if err := store.Update(ctx, tx, ss, "section_id"); err != nil {
						return err
					}
				}
			}
		}
		section.Title = title
		section.Path = uniquePath(slugify(title, "section"), sectionPaths(t, ""))
		section.IsDefault = len(t.sections) == 0
		section.Position = t.nextPosition(nil)
		if err := store.Insert(ctx, tx, section); err != nil {
			return err
		}
		t.sections = append(t.sections, section)
		_, err = r.addSiteSpace(ctx, tx, site, t, input.SpaceID, &section.ID, "spaceId")
		return err
	})
	if err != nil {
		return nil, err
	}
	return section, nil
}

// insertSection adds a section at the end of the site's root.
func (r *Resolver) insertSection(ctx context.Context, tx bun.IDB, t *siteTree, orgID, siteID, title string) (*store.SiteSection, error) {
	s := &store.SiteSection{
		ID: store.NewID(), OrganizationID: orgID, SiteID: siteID, Title: title,
		Path: uniquePath(slugify(title, "section"), sectionPaths(t, "")), IsDefault: len(t.sections) == 0,
		Position: t.nextPosition(nil), CreatedAt: r.now(),
	}
	if err := store.Insert(ctx, tx, s); err != nil {
		return nil, err
	}
	t.sections = append(t.sections, s)
	return s, nil
}

func sectionPaths(t *siteTree, except string) []string {
	var out []string
	for _, s := range t.sections {
		if s.ID != except {
			out = append(out, s.Path)
		}
	}
	return out
}

func (r *mutationResolver) UpdateSiteSection(ctx context.Context, organizationID, siteID, id string, input model.UpdateSiteSectionInput) (*store.SiteSection, error) {
	var s *store.SiteSection
	err := r.changeStructure(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx, _ *store.Site, t *siteTree) error {
		if s = t.section(id); s == nil {
			return NotFound("site section")
		}
		p := &patch{}
		setRequired(p, "title", "title", input.Title, &s.Title, length("title", 2, 128))
		setRequired(p, "path", "path", input.Path, &s.Path, func(path string) error {
			if err := checkPath("path", path); err != nil {
				return err
			}
			if slices.Contains(sectionPaths(t, s.ID), path) {
				return Conflict("path %q is already used by another section of this site", path)
			}
			return nil
		})
		setOptional(p, "condition", "condition", input.Condition, &s.Condition, func(c string) error { return checkCondition("condition", c) })
		setOptional(p, "icon", "icon", input.Icon, &s.Icon, length("icon", 1, 50))
		setOptional(p, "description", "description", input.Description, &s.Description, length("description", 0, 256))
		if p.err != nil {
			return p.err
		}
		if ssID, set, err := notNull("defaultSiteSpace", input.DefaultSiteSpace); err != nil {
			return err
		} else if set {
			ss := t.siteSpace(ssID)
			if ss == nil || ss.SectionID == nil || *ss.SectionID != s.ID {
				return Invalid("defaultSiteSpace", "no such site space in this section")
			}
			if err := setDefaultSiteSpace(ctx, tx, t, ss); err != nil {
				return err
			}
		}
		if !p.changed() {
			return nil
		}
		return store.Update(ctx, tx, s, p.columns...)
	})
	return s, err
}

func (r *mutationResolver) DeleteSiteSection(ctx context.Context, organizationID, siteID, id string) (bool, error) {
	deleted := false
	err := r.changeStructure(ctx, organizationID, siteID, func(ctx context.Context, tx bun.Tx, _ *store.Site, t *siteTree) error {
		s := t.section(id)
		if s == nil {
			return nil
		}
		// Its site spaces go with it (the foreign key cascades).
		t.sections = slices.DeleteFunc(t.sections, func(x *store.SiteSection) bool { return x.ID == s.ID })
		t.siteSpaces = slices.DeleteFunc(t.siteSpaces, func(x *store.SiteSpace) bool { return sameContainer(x.SectionID, &s.ID) })
		deleted = true
		return store.Delete(ctx, tx, s)
	})
	if errors.Is(err, errSiteMissing) {
		return false, nil
	}
	return deleted, err
}

// checkPath validates a path segment of a published address.
func checkPath(field, path string) error {
	if err := checkLength(field, path, 1, 100); err != nil {
		return err
	}
	return checkPattern(field, path, validPath, "letters, digits, '.', '_', '~' and '-'")
}
