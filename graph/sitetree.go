package graph

import (
	"cmp"
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/store"
)

// siteTree is one site's structure in memory: what read resolvers walk (from
// the loaders) and what mutations rearrange (read whole inside the
// transaction that locked the site).
//
// Sections and groups share one ordering per container, the site root (nil)
// or a group; site spaces are ordered within their section, or at the root
// of a site without sections. Groups nest at most maxGroupDepth deep.
type siteTree struct {
	groups     []*store.SiteSectionGroup
	sections   []*store.SiteSection
	siteSpaces []*store.SiteSpace
	// inSection indexes siteSpaces by section, and sectionByID sections by
	// id, in trees read for a request (never changed), so lookups are not
	// scans of the whole site. Trees that mutations rearrange have neither.
	inSection   map[string][]*store.SiteSpace
	sectionByID map[string]*store.SiteSection
}

// siteSpaceSet is what the request's loader holds for a site: its site
// spaces, and the index of siteTree.inSection built once from them.
type siteSpaceSet struct {
	all       []*store.SiteSpace
	inSection map[string][]*store.SiteSpace
}

// list is the set's site spaces: none for a site without any (whose set
// is nil).
func (s *siteSpaceSet) list() []*store.SiteSpace {
	if s == nil {
		return nil
	}
	return s.all
}

// rootKey is the key of the site root in siteTree.inSection.
const rootKey = ""

// siteSpaceSets groups the site spaces of several sites by site.
func siteSpaceSets(rows []*store.SiteSpace) map[string]*siteSpaceSet {
	bySiteID, _ := groupBy(rows, nil, func(s *store.SiteSpace) string { return s.SiteID })
	out := make(map[string]*siteSpaceSet, len(bySiteID))
	for site, list := range bySiteID {
		out[site] = newSiteSpaceSet(list)
	}
	return out
}

// newSiteSpaceSet indexes a site's site spaces by section (a site may hold
// thousands), each section's in the order siteSpacesIn gives. The sections'
// lists share one array, cut to the sizes counted first: appending to a
// list per section grew each several times over.
func newSiteSpaceSet(all []*store.SiteSpace) *siteSpaceSet {
	sectionKey := func(s *store.SiteSpace) string {
		if s.SectionID != nil {
			return *s.SectionID
		}
		return rootKey
	}
	counts := map[string]int{}
	for _, s := range all {
		counts[sectionKey(s)]++
	}
	set := &siteSpaceSet{all: all, inSection: make(map[string][]*store.SiteSpace, len(counts))}
	lists := make([]*store.SiteSpace, len(all))
	at := 0
	for key, n := range counts {
		set.inSection[key] = lists[at : at : at+n]
		at += n
	}
	for _, s := range all {
		key := sectionKey(s)
		set.inSection[key] = append(set.inSection[key], s)
	}
	for _, list := range set.inSection {
		slices.SortFunc(list, compareSiteSpaces)
	}
	return set
}

const maxGroupDepth = 3

// entry is a member of a container: a group or a section.
type entry struct {
	group   *store.SiteSectionGroup
	section *store.SiteSection
}

func (e entry) id() string {
	if e.group != nil {
		return e.group.ID
	}
	return e.section.ID
}

func (e entry) position() int {
	if e.group != nil {
		return e.group.Position
	}
	return e.section.Position
}

func (e entry) container() *string {
	if e.group != nil {
		return e.group.ParentGroupID
	}
	return e.section.GroupID
}

func (e entry) item() store.StructureItem {
	if e.group != nil {
		return e.group
	}
	return e.section
}

func sameContainer(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// children are the entries of a container, in order.
func (t *siteTree) children(container *string) []entry {
	var out []entry
	for _, g := range t.groups {
		if sameContainer(g.ParentGroupID, container) {
			out = append(out, entry{group: g})
		}
	}
	for _, s := range t.sections {
		if sameContainer(s.GroupID, container) {
			out = append(out, entry{section: s})
		}
	}
	slices.SortFunc(out, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.position(), b.position()), cmp.Compare(a.id(), b.id()))
	})
	return out
}

// siteSpacesIn are the site spaces of a section (nil: the site root), in order.
func (t *siteTree) siteSpacesIn(section *string) []*store.SiteSpace {
	if t.inSection != nil {
		key := rootKey
		if section != nil {
			key = *section
		}
		return t.inSection[key]
	}
	var out []*store.SiteSpace
	for _, s := range t.siteSpaces {
		if sameContainer(s.SectionID, section) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, compareSiteSpaces)
	return out
}

// compareSiteSpaces orders site spaces within their section.
func compareSiteSpaces(a, b *store.SiteSpace) int {
	return cmp.Or(cmp.Compare(a.Position, b.Position), cmp.Compare(a.ID, b.ID))
}

// walk visits groups and sections depth first, in structure order.
func (t *siteTree) walk(visit func(entry)) {
	var rec func(container *string)
	rec = func(container *string) {
		for _, e := range t.children(container) {
			visit(e)
			if e.group != nil {
				rec(&e.group.ID)
			}
		}
	}
	rec(nil)
}

func (t *siteTree) orderedGroups() []*store.SiteSectionGroup {
	var out []*store.SiteSectionGroup
	t.walk(func(e entry) {
		if e.group != nil {
			out = append(out, e.group)
		}
	})
	return out
}

func (t *siteTree) orderedSections() []*store.SiteSection {
	var out []*store.SiteSection
	t.walk(func(e entry) {
		if e.section != nil {
			out = append(out, e.section)
		}
	})
	return out
}

// orderedSiteSpaces lists the root site spaces, then those of each section in order.
func (t *siteTree) orderedSiteSpaces() []*store.SiteSpace {
	out := t.siteSpacesIn(nil)
	for _, s := range t.orderedSections() {
		out = append(out, t.siteSpacesIn(&s.ID)...)
	}
	return out
}

// hasSections tells whether the site is made of sections (or groups of
// them), rather than of site spaces at its root: what its structure's type
// says (Site.structure).
func (t *siteTree) hasSections() bool { return len(t.sections) > 0 || len(t.groups) > 0 }

func (t *siteTree) group(id string) *store.SiteSectionGroup {
	i := slices.IndexFunc(t.groups, func(g *store.SiteSectionGroup) bool { return g.ID == id })
	if i < 0 {
		return nil
	}
	return t.groups[i]
}

func (t *siteTree) section(id string) *store.SiteSection {
	if t.sectionByID != nil {
		return t.sectionByID[id]
	}
	i := slices.IndexFunc(t.sections, func(s *store.SiteSection) bool { return s.ID == id })
	if i < 0 {
		return nil
	}
	return t.sections[i]
}

func (t *siteTree) siteSpace(id string) *store.SiteSpace {
	i := slices.IndexFunc(t.siteSpaces, func(s *store.SiteSpace) bool { return s.ID == id })
	if i < 0 {
		return nil
	}
	return t.siteSpaces[i]
}

func (t *siteTree) defaultSection() *store.SiteSection {
	for _, s := range t.sections {
		if s.IsDefault {
			return s
		}
	}
	return nil
}

// depth is how deep a container is: the root is 0, a root group 1.
func (t *siteTree) depth(container *string) int {
	d := 0
	for container != nil {
		g := t.group(*container)
		if g == nil {
			break
		}
		d++
		container = g.ParentGroupID
	}
	return d
}

// height is how many levels of groups g holds, itself included.
func (t *siteTree) height(g *store.SiteSectionGroup) int {
	h := 1
	for _, e := range t.children(&g.ID) {
		if e.group != nil {
			h = max(h, 1+t.height(e.group))
		}
	}
	return h
}

// within reports whether container is g or inside it.
func (t *siteTree) within(container *string, g *store.SiteSectionGroup) bool {
	for container != nil {
		if *container == g.ID {
			return true
		}
		parent := t.group(*container)
		if parent == nil {
			return false
		}
		container = parent.ParentGroupID
	}
	return false
}

// loadSiteTree reads a site's whole structure, site spaces of deleted
// spaces included (they keep their place while the space can be restored).
func loadSiteTree(ctx context.Context, db bun.IDB, s *store.Site) (*siteTree, error) {
	ids := []string{s.ID}
	t := &siteTree{}
	var err error
	if t.groups, err = store.GroupsOfSites(ctx, db, s.OrganizationID, ids); err != nil {
		return nil, err
	}
	if t.sections, err = store.SectionsOfSites(ctx, db, s.OrganizationID, ids); err != nil {
		return nil, err
	}
	if t.siteSpaces, err = store.SiteSpacesOfSites(ctx, db, s.OrganizationID, ids, false); err != nil {
		return nil, err
	}
	return t, nil
}

// placeEntry puts e into container at index (clamped) and writes the new
// order of that container. The old container keeps a gap, which orders the same.
func placeEntry(ctx context.Context, tx bun.IDB, t *siteTree, e entry, container *string, index int) error {
	list := slices.DeleteFunc(t.children(container), func(x entry) bool { return x.id() == e.id() })
	index = min(max(index, 0), len(list))
	return writeContainer(ctx, tx, container, slices.Insert(list, index, e))
}

// writeContainer makes list the content of container, in order: positions
// 0..n-1. Only rows whose position or container changes are written.
func writeContainer(ctx context.Context, tx bun.IDB, container *string, list []entry) error {
	for i, x := range list {
		if x.position() == i && sameContainer(x.container(), container) {
			continue
		}
		var err error
		if x.group != nil {
			x.group.Position, x.group.ParentGroupID = i, container
			err = store.Update(ctx, tx, x.group, "position", "parent_group_id")
		} else {
			x.section.Position, x.section.GroupID = i, container
			err = store.Update(ctx, tx, x.section, "position", "group_id")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// placeSiteSpace puts s into section at index (clamped) and writes the new
// order of that section. A path that clashes in the new section gets a suffix.
func placeSiteSpace(ctx context.Context, tx bun.IDB, t *siteTree, s *store.SiteSpace, section *string, index int) error {
	list := slices.DeleteFunc(t.siteSpacesIn(section), func(x *store.SiteSpace) bool { return x.ID == s.ID })
	index = min(max(index, 0), len(list))
	list = slices.Insert(list, index, s)
	if !sameContainer(s.SectionID, section) {
		s.Path = uniquePath(s.Path, pathsOf(list, s.ID))
		s.IsDefault = false // ensureDefaults picks the defaults of both sections
	}
	for i, x := range list {
		if x.Position == i && sameContainer(x.SectionID, section) && x.ID != s.ID {
			continue
		}
		x.Position, x.SectionID = i, section
		if err := store.Update(ctx, tx, x, "position", "section_id", "path", "is_default"); err != nil {
			return err
		}
	}
	return nil
}

// nextPosition is one past the last position in a container of sections and groups.
func (t *siteTree) nextPosition(container *string) int {
	list := t.children(container)
	if len(list) == 0 {
		return 0
	}
	return list[len(list)-1].position() + 1
}

func (t *siteTree) nextSiteSpacePosition(section *string) int {
	list := t.siteSpacesIn(section)
	if len(list) == 0 {
		return 0
	}
	return list[len(list)-1].Position + 1
}

func pathsOf(list []*store.SiteSpace, except string) []string {
	var out []string
	for _, s := range list {
		if s.ID != except {
			out = append(out, s.Path)
		}
	}
	return out
}

var (
	nonSlug   = regexp.MustCompile(`[^a-z0-9]+`)
	validPath = regexp.MustCompile(`^[A-Za-z0-9._~-]+$`)
)

// slugify makes a path segment of a title: "Getting Started!" → "getting-started".
func slugify(title, fallback string) string {
	s := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(title), "-"), "-")
	if len(s) > 90 {
		s = strings.TrimRight(s[:90], "-")
	}
	if s == "" {
		return fallback
	}
	return s
}

// uniquePath returns p, or p-2, p-3... whichever is not taken.
func uniquePath(p string, taken []string) string {
	candidate := p
	for n := 2; slices.Contains(taken, candidate); n++ {
		candidate = p + "-" + strconv.Itoa(n)
	}
	return candidate
}

// ensureDefaults restores the invariants on defaults after a change: a site
// with sections has exactly one default section, and every section (or the
// root) holding site spaces has exactly one default site space.
func ensureDefaults(ctx context.Context, tx bun.IDB, t *siteTree) error {
	if sections := t.orderedSections(); len(sections) > 0 && t.defaultSection() == nil {
		sections[0].IsDefault = true
		if err := store.Update(ctx, tx, sections[0], "is_default"); err != nil {
			return err
		}
	}
	containers := []*string{nil}
	for _, s := range t.sections {
		containers = append(containers, &s.ID)
	}
	for _, c := range containers {
		list := t.siteSpacesIn(c)
		if len(list) == 0 || slices.ContainsFunc(list, func(s *store.SiteSpace) bool { return s.IsDefault }) {
			continue
		}
		list[0].IsDefault = true
		if err := store.Update(ctx, tx, list[0], "is_default"); err != nil {
			return err
		}
	}
	return nil
}

// setDefaultSection makes s the site's default section.
func setDefaultSection(ctx context.Context, tx bun.IDB, t *siteTree, s *store.SiteSection) error {
	if old := t.defaultSection(); old != nil && old != s {
		old.IsDefault = false // first: at most one default may exist at any moment
		if err := store.Update(ctx, tx, old, "is_default"); err != nil {
			return err
		}
	}
	if s.IsDefault {
		return nil
	}
	s.IsDefault = true
	return store.Update(ctx, tx, s, "is_default")
}

// setDefaultSiteSpace makes s the default site space of its section (or root).
func setDefaultSiteSpace(ctx context.Context, tx bun.IDB, t *siteTree, s *store.SiteSpace) error {
	for _, x := range t.siteSpacesIn(s.SectionID) {
		if x.IsDefault && x != s {
			x.IsDefault = false
			if err := store.Update(ctx, tx, x, "is_default"); err != nil {
				return err
			}
		}
	}
	if s.IsDefault {
		return nil
	}
	s.IsDefault = true
	return store.Update(ctx, tx, s, "is_default")
}

// keepVisible leaves in t the sections whose condition holds for visitor v
// and the groups that hold one of them, at any depth: a group of hidden
// sections shows nothing.
func (t *siteTree) keepVisible(v *Visitor) {
	t.sections = slices.DeleteFunc(slices.Clone(t.sections), func(s *store.SiteSection) bool { return !v.sees(s.Condition) })
	holding := map[string]bool{}
	for _, s := range t.sections {
		for g := s.GroupID; g != nil && !holding[*g]; {
			holding[*g] = true
			parent := slices.IndexFunc(t.groups, func(x *store.SiteSectionGroup) bool { return x.ID == *g })
			if parent < 0 {
				break
			}
			g = t.groups[parent].ParentGroupID
		}
	}
	t.groups = slices.DeleteFunc(slices.Clone(t.groups), func(g *store.SiteSectionGroup) bool { return !holding[g.ID] })
}
