package siteroute

import (
	"net/url"
	"reflect"
	"testing"
)

// sectioned is a site with two sections, the second the default, the
// first with two variants; and a section named like a page.
var sectioned = &Site{Sections: []Section{
	{Path: "api", SiteSpaces: []SiteSpace{{Path: "v1"}, {Path: "v2", Default: true}}},
	{Path: "guides", Default: true, SiteSpaces: []SiteSpace{{Path: "main", Default: true}}},
	{Path: "setup", SiteSpaces: []SiteSpace{{Path: "en"}}},
}}

func TestRoute(t *testing.T) {
	t.Parallel()
	root := &Site{Root: true, Sections: []Section{{SiteSpaces: []SiteSpace{{Path: "en", Default: true}, {Path: "fr"}}}}}
	noDefaults := &Site{Sections: []Section{{Path: "a", SiteSpaces: []SiteSpace{{Path: "x"}, {Path: "y"}}}}}
	for _, c := range []struct {
		name string
		site *Site
		path string
		want Place
		ok   bool
	}{
		{"the site's root: the default section's default site space", sectioned, "", Place{1, 0, ""}, true},
		{"a page of the default content", sectioned, "/install/linux", Place{1, 0, "install/linux"}, true},
		{"a section: its default variant", sectioned, "/api", Place{0, 1, ""}, true},
		{"a variant of a section", sectioned, "/api/v1/reference", Place{0, 0, "reference"}, true},
		{"the default section named", sectioned, "/guides/main/start", Place{1, 0, "start"}, true},
		{"a section's path wins over a page's", sectioned, "/setup", Place{2, 0, ""}, true},
		{"empty segments name nothing", sectioned, "//api//v1/", Place{0, 0, ""}, true},
		{"a variant's path of another section is a page path", sectioned, "/v1", Place{1, 0, "v1"}, true},
		{"a site without sections: a variant", root, "/fr/page", Place{0, 1, "page"}, true},
		{"a site without sections: no section paths", root, "/api", Place{0, 0, "api"}, true},
		{"no defaults: the first of each", noDefaults, "/p", Place{0, 0, "p"}, true},
		{"a site that shows nothing", &Site{}, "/p", Place{}, false},
		{"a section without site spaces", &Site{Sections: []Section{{Path: "a"}}}, "", Place{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := c.site.Route(Segments(c.path))
			if ok != c.ok || got != c.want {
				t.Errorf("Route(%q) = %+v, %v; want %+v, %v", c.path, got, ok, c.want, c.ok)
			}
		})
	}
}

func TestAddress(t *testing.T) {
	t.Parallel()
	root := &Site{Root: true, Sections: []Section{{SiteSpaces: []SiteSpace{{Path: "en", Default: true}, {Path: "f r"}}}}}
	for _, c := range []struct {
		site *Site
		i, j int
		want string
	}{
		{sectioned, 1, 0, ""},
		{sectioned, 0, 1, "/api"},
		{sectioned, 0, 0, "/api/v1"},
		{sectioned, 2, 0, "/setup"},
		{root, 0, 0, ""},
		{root, 0, 1, "/f%20r"},
	} {
		if got := c.site.Address(c.i, c.j); got != c.want {
			t.Errorf("Address(%d, %d) = %q, want %q", c.i, c.j, got, c.want)
		}
		// What an address names, its route finds again.
		path, err := url.PathUnescape(c.want)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := c.site.Route(Segments(path))
		if !ok || p.Section != c.i || p.SiteSpace != c.j || p.PagePath != "" {
			t.Errorf("Route(Address(%d, %d)) = %+v, %v", c.i, c.j, p, ok)
		}
	}
}

func TestSegments(t *testing.T) {
	t.Parallel()
	if got := Segments("/a//b/"); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("Segments = %q", got)
	}
	if got := Segments(""); len(got) != 0 {
		t.Errorf("Segments of nothing = %q", got)
	}
}

// Two addresses are the same place decoded, empty segments, queries and
// fragments aside.
func TestSameAddress(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"/docs/setup", "/docs/setup/", true},
		{"/docs//setup?x=1#top", "/docs/setup", true},
		{"/caf%C3%A9", "/café", true},
		{"/docs/setup", "/docs/setup/more", false},
		{"/a%2Fb", "/a/b", true}, // decoded, a slash is a slash
		{"/%zz", "/%zz", true},
	} {
		if got := SameAddress(c.a, c.b); got != c.same {
			t.Errorf("SameAddress(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}
