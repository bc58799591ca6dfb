package published

import (
	"net/url"
	"strings"
)

// siteData is PublishedSite's answer.
type siteData struct {
	Published struct {
		Site struct {
			ID         string `json:"id"`
			Title      string `json:"title"`
			Visibility string `json:"visibility"`
		} `json:"site"`
		Customizations struct {
			Site       map[string]any            `json:"site"`
			SiteSpaces map[string]map[string]any `json:"siteSpaces"`
		} `json:"customizations"`
		Structure struct {
			Type      string          `json:"type"`
			Structure []structureItem `json:"structure"`
		} `json:"structure"`
	} `json:"publishedContentSite"`
}

// structureItem is a section group, a section or a site space, as the
// structure lists them.
type structureItem struct {
	Typename    string          `json:"__typename"`
	ID          string          `json:"id"`
	Title       string          `json:"title"`
	Description *string         `json:"description"`
	Path        string          `json:"path"`
	Default     bool            `json:"default"`
	Icon        *string         `json:"icon"`
	SiteSpaces  []siteSpaceData `json:"siteSpaces"`
	Children    []structureItem `json:"children"`
	Space       *spaceRef       `json:"space"`
}

type siteSpaceData struct {
	ID      string   `json:"id"`
	Path    string   `json:"path"`
	Default bool     `json:"default"`
	Title   string   `json:"title"`
	Space   spaceRef `json:"space"`
}

type spaceRef struct {
	ID       string  `json:"id"`
	Title    string  `json:"title"`
	Emoji    string  `json:"emoji"`
	Language *string `json:"language"`
	Revision string  `json:"revision"`
}

// site is a published site as one visitor sees it: its sections (in
// order, groups flattened, each knowing its groups' titles) or, for a site
// without sections, its site spaces at the root.
type site struct {
	id, title      string
	visibility     string
	customizations map[string]any
	overrides      map[string]map[string]any
	sections       []*section
	// root holds the site spaces of a site without sections.
	root *section
	// base is the site's address on this request (no trailing slash), the
	// start of every link a page holds; hostname the custom hostname the
	// request came to ("" under the published prefix).
	base     string
	hostname string
}

type section struct {
	id, title, path string
	description     string
	icon            string
	isDefault       bool
	// groups are the titles of the groups holding the section, outermost
	// first.
	groups     []string
	siteSpaces []*siteSpace
	// isRoot: the section of a site without sections, which has no path.
	isRoot bool
}

type siteSpace struct {
	id, path, title string
	isDefault       bool
	space           spaceRef
	section         *section
}

// newSite makes the site of a PublishedSite answer, served at base.
func newSite(d *siteData, base string) *site {
	p := d.Published
	s := &site{id: p.Site.ID, title: p.Site.Title, visibility: p.Site.Visibility, base: base,
		customizations: p.Customizations.Site, overrides: p.Customizations.SiteSpaces}
	if p.Structure.Type == "siteSpaces" {
		s.root = &section{isRoot: true, isDefault: true}
		for _, item := range p.Structure.Structure {
			if item.Space != nil {
				s.root.add(siteSpaceData{ID: item.ID, Path: item.Path, Default: item.Default, Title: item.Title, Space: *item.Space})
			}
		}
		return s
	}
	var walk func(items []structureItem, groups []string)
	walk = func(items []structureItem, groups []string) {
		for _, item := range items {
			switch item.Typename {
			case "SiteSectionGroup":
				walk(item.Children, append(append([]string(nil), groups...), item.Title))
			case "SiteSection":
				sec := &section{id: item.ID, title: item.Title, path: item.Path, isDefault: item.Default, groups: groups,
					description: deref(item.Description), icon: deref(item.Icon)}
				for _, ss := range item.SiteSpaces {
					sec.add(ss)
				}
				if len(sec.siteSpaces) > 0 {
					s.sections = append(s.sections, sec)
				}
			}
		}
	}
	walk(p.Structure.Structure, nil)
	return s
}

func (sec *section) add(d siteSpaceData) {
	sec.siteSpaces = append(sec.siteSpaces, &siteSpace{id: d.ID, path: d.Path, title: d.Title, isDefault: d.Default,
		space: d.Space, section: sec})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// defaultSection is the section the site's root shows: the default one the
// visitor sees, else the first.
func (s *site) defaultSection() *section {
	if s.root != nil {
		return s.root
	}
	for _, sec := range s.sections {
		if sec.isDefault {
			return sec
		}
	}
	if len(s.sections) > 0 {
		return s.sections[0]
	}
	return nil
}

// defaultSiteSpace is the site space a section's address shows: its
// default one the visitor sees, else the first.
func (sec *section) defaultSiteSpace() *siteSpace {
	for _, ss := range sec.siteSpaces {
		if ss.isDefault {
			return ss
		}
	}
	if len(sec.siteSpaces) > 0 {
		return sec.siteSpaces[0]
	}
	return nil
}

// route finds what an address under the site names: a section (by its
// path, else the default section), a site space of it (by its path, else
// the default one) and the page path that follows. A section's or site
// space's path wins over a page of the same name. ok is false when the site
// shows the visitor nothing at all.
func (s *site) route(segments []string) (ss *siteSpace, pagePath string, ok bool) {
	sec := s.defaultSection()
	if s.root == nil && len(segments) > 0 {
		for _, c := range s.sections {
			if c.path == segments[0] {
				sec, segments = c, segments[1:]
				break
			}
		}
	}
	if sec == nil {
		return nil, "", false
	}
	ss = sec.defaultSiteSpace()
	if len(segments) > 0 {
		for _, c := range sec.siteSpaces {
			if c.path == segments[0] {
				ss, segments = c, segments[1:]
				break
			}
		}
	}
	if ss == nil {
		return nil, "", false
	}
	return ss, strings.Join(segments, "/"), true
}

// addressOf is the address of site space ss (no trailing slash): the
// site's base, then the section's path and the site space's path, each
// left out when it is the default (so a site's main content is at its
// root).
func (s *site) addressOf(ss *siteSpace) string {
	u := s.base
	if sec := ss.section; !sec.isRoot && sec != s.defaultSection() {
		u += "/" + url.PathEscape(sec.path)
	}
	if ss != ss.section.defaultSiteSpace() {
		u += "/" + url.PathEscape(ss.path)
	}
	return u
}

// siteSpaces are the site spaces the site shows the visitor, section by
// section in order.
func (s *site) siteSpaces() []*siteSpace {
	sections := s.sections
	if s.root != nil {
		sections = []*section{s.root}
	}
	var out []*siteSpace
	for _, sec := range sections {
		out = append(out, sec.siteSpaces...)
	}
	return out
}

// spaceIDs are the spaces the site shows the visitor.
func (s *site) spaceIDs() []string {
	var out []string
	for _, ss := range s.siteSpaces() {
		out = append(out, ss.space.ID)
	}
	return out
}
