// Package siteroute says where an address under a published site leads:
// which section, which site space of it, and the page path that follows,
// the defaults left out (/guides/v2/setup/install is the page
// setup/install of the site space v2 of the section guides; /setup/install
// the same page of the default site space of the default section).
//
// Two places ask it the same question and must agree: the reader (package
// published), which serves the address to a visitor, and URL resolution for
// custom front ends (graph's publishedContentByUrl), which tells a front end
// what the address holds for that visitor. Both hand it the site as that
// visitor sees it (the read rules have left out the sections and site
// spaces whose conditions do not hold); it decides nothing about who reads
// what, only how paths name what is there.
package siteroute

import (
	"net/url"
	"strings"
)

// Site is a published site's structure as one visitor sees it, as far as
// its addresses go: its sections in the structure's order (groups
// flattened), each with its site spaces in order, a section showing the
// visitor no site space left out; or, for a site without sections, one
// section without a path holding the site's site spaces (Root).
type Site struct {
	Sections []Section
	// Root: the site has no sections; Sections holds the one that stands
	// for the site's root.
	Root bool
}

// Section is a section of a site: its path segment, whether it is the
// site's default, and its site spaces.
type Section struct {
	Path       string
	Default    bool
	SiteSpaces []SiteSpace
}

// SiteSpace is a site space of a section: its path segment and whether it
// is the section's default.
type SiteSpace struct {
	Path    string
	Default bool
}

// Place is what an address under a site names: a site space, by its
// section's index in Site.Sections and its own in that section's
// SiteSpaces, and the page path that follows them ("" for the site
// space's front page).
type Place struct {
	Section, SiteSpace int
	PagePath           string
}

// Segments are the segments of an address's path under a site's base,
// empty ones (a trailing or doubled slash) left out: they name nothing.
func Segments(path string) []string {
	var out []string
	for _, s := range strings.Split(path, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// SameAddress tells whether addresses a and b (paths, perhaps with a query
// or a fragment, which count for nothing) name the same place: decoded,
// empty segments aside. A redirect from an address to itself is none.
func SameAddress(a, b string) bool {
	return strings.Join(Segments(decodedPath(a)), "/") == strings.Join(Segments(decodedPath(b)), "/")
}

// decodedPath is address a's path without its query and fragment,
// decoded (as written when it is no valid escaping).
func decodedPath(a string) string {
	a, _, _ = strings.Cut(a, "?")
	a, _, _ = strings.Cut(a, "#")
	if d, err := url.PathUnescape(a); err == nil {
		return d
	}
	return a
}

// DefaultSection is the index of the section the site's root shows: the
// default one the visitor sees, else the first; -1 when the visitor sees
// none.
func (s *Site) DefaultSection() int {
	for i, sec := range s.Sections {
		if sec.Default {
			return i
		}
	}
	if len(s.Sections) > 0 {
		return 0
	}
	return -1
}

// DefaultSiteSpace is the index of the site space section i's address
// shows: its default one the visitor sees, else the first; -1 for none.
func (s *Site) DefaultSiteSpace(i int) int {
	spaces := s.Sections[i].SiteSpaces
	for j, ss := range spaces {
		if ss.Default {
			return j
		}
	}
	if len(spaces) > 0 {
		return 0
	}
	return -1
}

// Route finds what the segments of an address under the site name: a
// section (by its path, else the default section), a site space of it (by
// its path, else the section's default) and the page path that follows. A
// section's or site space's path wins over a page of the same name. ok is
// false when the site shows the visitor nothing at all.
func (s *Site) Route(segments []string) (p Place, ok bool) {
	p.Section = s.DefaultSection()
	if !s.Root && len(segments) > 0 {
		for i, sec := range s.Sections {
			if sec.Path == segments[0] {
				p.Section, segments = i, segments[1:]
				break
			}
		}
	}
	if p.Section < 0 {
		return Place{}, false
	}
	p.SiteSpace = s.DefaultSiteSpace(p.Section)
	if len(segments) > 0 {
		for j, ss := range s.Sections[p.Section].SiteSpaces {
			if ss.Path == segments[0] {
				p.SiteSpace, segments = j, segments[1:]
				break
			}
		}
	}
	if p.SiteSpace < 0 {
		return Place{}, false
	}
	p.PagePath = strings.Join(segments, "/")
	return p, true
}

// Address is the path of site space j of section i under the site's base
// (no trailing slash, "" for the site's main content): the section's path
// and the site space's path, each escaped, each left out when it is the
// default.
func (s *Site) Address(i, j int) string {
	var b strings.Builder
	if !s.Root && i != s.DefaultSection() {
		b.WriteString("/" + url.PathEscape(s.Sections[i].Path))
	}
	if j != s.DefaultSiteSpace(i) {
		b.WriteString("/" + url.PathEscape(s.Sections[i].SiteSpaces[j].Path))
	}
	return b.String()
}
