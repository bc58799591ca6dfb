package published

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// A page's look comes from the settings in effect for its site space
// (GitBook's SiteCustomizationSettings, as the published site's
// customizations give them): the primary color, light or dark first, the
// logo and the favicon. The rest of the look is the reader's stylesheet.

// settingsOf are the settings in effect for site space ss: its own when it
// overrides some, else the site's.
func (s *site) settingsOf(ss *siteSpace) map[string]any {
	if o, ok := s.overrides[ss.id]; ok {
		return o
	}
	return s.customizations
}

// titleOf is the site's title on the pages of site space ss: the
// customization's, over the site's.
func (s *site) titleOf(ss *siteSpace) string {
	if title := stringMember(s.settingsOf(ss), "title"); title != "" {
		return title
	}
	return s.title
}

// member reads settings[k0][k1]...: nil when any is missing.
func member(settings map[string]any, keys ...string) any {
	var v any = settings
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func stringMember(settings map[string]any, keys ...string) string {
	s, _ := member(settings, keys...).(string)
	return s
}

// theme is the page's colors and default mode: a stylesheet of custom
// properties, inline in the page (its hash is in the page's
// Content-Security-Policy).
type theme struct {
	// Default is "light", "dark", or "" to follow the reader's system.
	Default string
	// Toggle: readers may switch between light and dark.
	Toggle bool
	CSS    template.CSS
	css    string
}

// The two palettes; the primary color is the site's, made readable on the
// background (contrastOn).
var (
	lightBackground = rgb{255, 255, 255}
	darkBackground  = rgb{0x11, 0x13, 0x17}
)

func themeOf(settings map[string]any) theme {
	t := theme{Toggle: true}
	switch stringMember(settings, "themes", "default") {
	case "light":
		t.Default = "light"
	case "dark":
		t.Default = "dark"
	}
	if b, ok := member(settings, "themes", "toggeable").(bool); ok {
		t.Toggle = b
	}
	light := contrastOn(parseColor(stringMember(settings, "styling", "primaryColor", "light"), rgb{0x34, 0x6d, 0xdb}), lightBackground)
	dark := contrastOn(parseColor(stringMember(settings, "styling", "primaryColor", "dark"), rgb{0x34, 0x6d, 0xdb}), darkBackground)
	t.css = fmt.Sprintf(":root{--primary:%s}\n:root[data-theme=\"dark\"]{--primary:%s}\n"+
		"@media (prefers-color-scheme: dark){:root:not([data-theme=\"light\"]){--primary:%s}}\n", light, dark, dark)
	t.CSS = template.CSS(t.css)
	return t
}

type rgb struct{ r, g, b float64 }

func (c rgb) String() string {
	return fmt.Sprintf("#%02x%02x%02x", int(math.Round(c.r)), int(math.Round(c.g)), int(math.Round(c.b)))
}

// parseColor reads #rgb or #rrggbb (the settings' checks allow no other).
func parseColor(s string, fallback rgb) rgb {
	s = strings.TrimPrefix(s, "#")
	if len(s) == 3 {
		s = string([]byte{s[0], s[0], s[1], s[1], s[2], s[2]})
	}
	n, err := strconv.ParseUint(s, 16, 32)
	if len(s) != 6 || err != nil {
		return fallback
	}
	return rgb{float64(n >> 16 & 0xff), float64(n >> 8 & 0xff), float64(n & 0xff)}
}

func (c rgb) luminance() float64 {
	lin := func(v float64) float64 {
		v /= 255
		if v <= 0.03928 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c.r) + 0.7152*lin(c.g) + 0.0722*lin(c.b)
}

func contrast(a, b rgb) float64 {
	la, lb := a.luminance(), b.luminance()
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// contrastOn is c, darkened or lightened toward the text color of bg
// until it reads on bg as body text must (WCAG AA, 4.5:1): a site's brand
// color is kept where it can be, and links stay readable where it cannot.
func contrastOn(c, bg rgb) rgb {
	toward := rgb{0, 0, 0}
	if bg.luminance() < 0.5 {
		toward = rgb{255, 255, 255}
	}
	for i := 0; i < 20 && contrast(c, bg) < 4.6; i++ {
		c = rgb{c.r + (toward.r-c.r)*0.1, c.g + (toward.g-c.g)*0.1, c.b + (toward.b-c.b)*0.1}
	}
	return c
}

// logoOf is the header's logo, when the settings set one.
func logoOf(settings map[string]any) *logo {
	light, dark := httpURL(stringMember(settings, "header", "logo", "light")), httpURL(stringMember(settings, "header", "logo", "dark"))
	if light == "" {
		return nil
	}
	if dark == "" {
		dark = light
	}
	return &logo{Light: light, Dark: dark}
}

// faviconOf is the site's icon, or the reader's own: pages always name
// one, so browsers do not ask for /favicon.ico.
func faviconOf(settings map[string]any, fallback string) string {
	if u := httpURL(stringMember(settings, "favicon", "icon", "light")); u != "" {
		return u
	}
	return fallback
}

// httpURL is u when it is an absolute http(s) address (the settings'
// checks want no other), else "".
func httpURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
		return ""
	}
	return u
}

// languageOf is the page's language: the space's, else the site's locale.
func languageOf(s *site, ss *siteSpace) string {
	if ss.space.Language != nil && *ss.space.Language != "" {
		return *ss.space.Language
	}
	if l := stringMember(s.settingsOf(ss), "internationalization", "locale"); l != "" {
		return l
	}
	return "en"
}

func paginationOn(settings map[string]any) bool {
	on, ok := member(settings, "pagination", "enabled").(bool)
	return on || !ok
}

// setPageHeaders sets the headers of every published page: a strict
// Content-Security-Policy (scripts and styles of the reader only, the
// page's one inline stylesheet by its hash, no frames, no plugins), and
// the rest of what keeps a page of user content from being turned
// against its readers.
func setPageHeaders(h http.Header, inlineCSS string) {
	sum := sha256.Sum256([]byte(inlineCSS))
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self' 'sha256-"+
		base64.StdEncoding.EncodeToString(sum[:])+"'; img-src 'self' https: http:; font-src 'self'; connect-src 'self'; "+
		"manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
	h.Set("X-Frame-Options", "SAMEORIGIN")
}
