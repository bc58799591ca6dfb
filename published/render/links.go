package render

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/yuin/goldmark/util"
)

// Links are resolved on the rendered HTML rather than on the markdown, so
// that one place sees every destination alike: markdown links and images
// (which goldmark has percent-encoded), raw HTML written by GitBook
// (<img src="../.gitbook/assets/x (1).png">, <picture> sources, card
// tables) and the cards this package writes for {% content-ref %},
// {% file %} and {% embed %}.

// resolveURL returns the URL to put in the page for an attribute value.
func resolveURL(links Links, v string) string {
	v = strings.TrimSpace(v)
	if links != nil && v != "" {
		if href, ok := links.Resolve(destOf(v)); ok {
			v = strings.TrimSpace(href)
		}
	}
	return encodeURL(v)
}

// destOf undoes the percent-encoding goldmark applied to a markdown
// destination, giving the destination as written.
func destOf(v string) string {
	if d, err := url.PathUnescape(v); err == nil {
		return d
	}
	return v
}

// encodeURL percent-encodes what may not stand in a URL (spaces, non-ASCII)
// and leaves existing escapes alone: GitBook writes asset paths with
// spaces, which the sanitizer would reject as unparseable.
func encodeURL(v string) string {
	return string(util.URLEscape([]byte(v), false))
}

var descriptorRE = regexp.MustCompile(`^\d+(\.\d+)?[wxh]$`)

// resolveSrcset resolves each candidate of a srcset and keeps only those
// with a safe URL: the sanitizer does not look inside srcset. GitBook
// writes a single URL, spaces and all ("…/options_dark (1).svg"), which is
// taken whole.
func resolveSrcset(links Links, v string) string {
	v = strings.TrimSpace(v)
	var parts []string
	fields := strings.Fields(v)
	if !strings.Contains(v, ",") && len(fields) > 0 && !descriptorRE.MatchString(fields[len(fields)-1]) {
		parts = []string{v}
	} else {
		parts = strings.Split(v, ",")
	}
	var out []string
	for _, p := range parts {
		f := strings.Fields(p)
		if len(f) == 0 {
			continue
		}
		desc := ""
		if len(f) > 1 && descriptorRE.MatchString(f[len(f)-1]) {
			desc = " " + f[len(f)-1]
			f = f[:len(f)-1]
		}
		u := resolveURL(links, strings.Join(f, " "))
		if !safeURL(u) {
			continue
		}
		out = append(out, u+desc)
	}
	return strings.Join(out, ", ")
}

// safeURL reports whether u is relative or http(s), with nothing a browser
// would strip and reinterpret.
func safeURL(u string) bool {
	if u == "" || strings.ContainsAny(u, " ,\t\r\n") {
		return false
	}
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	switch strings.ToLower(p.Scheme) {
	case "", "http", "https":
		return true
	}
	return false
}
