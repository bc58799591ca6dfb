// Package customization checks, defaults and merges the customization
// settings of published sites, in the shape of GitBook's API reference
// (0.146): a site's settings, whole (SiteCustomizationSettings), and what
// one of its site spaces overrides of them (the body of
// overrideSiteSpaceCustomizationById).
//
// Settings are the JSON objects clients send and read (maps of decoded
// JSON): they are stored whole and answered whole, and their unions (a font
// is a name or a definition; a favicon an icon, an emoji or nothing) are
// JSON's. The shapes below say, once, what each member may hold: they make
// the checks, and they tell the merge which objects are groups of settings
// (merged member by member) and which are values (replaced whole).
package customization

import (
	"maps"
	"slices"
)

// Shapes of the reference's components.
var (
	// CustomizationThemedColor.
	themedColor = record(req("light", color{}), req("dark", color{}))
	// CustomizationThemedURL.
	themedURL = record(req("light", webAddress{}), req("dark", webAddress{}))
	// CustomizationTint.
	tint = record(req("color", themedColor))

	// ContentRef: what a link leads to, told apart by its kind.
	contentRef = byKind("a content reference", map[string]*object{
		"file":             record(req("kind", enum{"file"}), req("file", anyText)),
		"url":              record(req("kind", enum{"url"}), req("url", linkAddress{})),
		"page":             record(req("kind", enum{"page"}), req("page", anyText), opt("space", anyText)),
		"anchor":           record(req("kind", enum{"anchor"}), req("anchor", anyText), opt("space", anyText), opt("page", anyText)),
		"user":             record(req("kind", enum{"user"}), req("user", anyText)),
		"collection":       record(req("kind", enum{"collection"}), req("collection", anyText)),
		"space":            record(req("kind", enum{"space"}), req("space", anyText)),
		"reusable-content": record(req("kind", enum{"reusable-content"}), req("reusableContent", anyText), opt("space", anyText)),
		"openapi":          record(req("kind", enum{"openapi"}), req("spec", anyText)),
	})
	// CustomizationContentLink.
	contentLink = record(req("title", text{max: 64}), req("to", contentRef))
	// CustomizationHeaderItem: a link, or a menu of links.
	headerItem = record(
		req("title", anyText),
		opt("style", enum{"link", "button-primary", "button-secondary"}),
		orNull(req("to", contentRef)),
		req("links", list{item: contentLink}),
		opt("condition", expression{}))
	// CustomizationFooterGroup.
	footerGroup = record(req("title", anyText), req("links", list{item: contentLink}))
	// CustomizationAnnouncement.
	announcement = record(
		req("enabled", boolean{}),
		req("message", text{min: 2, max: 128}),
		opt("link", contentLink),
		req("style", enum{"info", "warning", "danger", "success"}))

	// CustomizationFont and CustomizationMonospaceFont: the name of a font
	// GitBook provides, or the definition of another
	// (CustomizationFontDefinitionInput).
	fontDefinition = record(
		req("id", anyText),
		req("custom", boolean{}),
		req("fontFamily", text{min: 1, max: 50}),
		req("fontFaces", list{min: 1, item: record(
			req("weight", integer{min: 1, max: 1000}),
			req("sources", list{min: 1, item: record(
				req("url", webAddress{}),
				opt("format", enum{"woff2", "woff"}))}))}))
	font = fontOf(enum{"ABCFavorit", "Inter", "Roboto", "RobotoSlab", "OpenSans", "SourceSansPro", "Lato",
		"Ubuntu", "Raleway", "Merriweather", "Overpass", "NotoSans", "IBMPlexSerif", "Poppins", "FiraSans"})
	monospaceFont = fontOf(enum{"FiraCode", "IBMPlexMono", "JetBrainsMono", "SourceCodePro", "RobotoMono",
		"SpaceMono", "DMMono", "Inconsolata"})

	// CustomizationFavicon: an icon, an emoji, or none ({}).
	favicon = union{what: "{icon: {light, dark}}, {emoji} or {}", pick: func(v any) shape {
		m, ok := v.(map[string]any)
		switch {
		case !ok:
			return nil
		case m["icon"] != nil:
			return record(req("icon", themedURL))
		case m["emoji"] != nil:
			return record(req("emoji", emoji))
		}
		return record()
	}}

	// Enumerations.
	theme           = enum{"clean", "muted", "bold", "gradient"}
	corners         = enum{"straight", "rounded", "circular"}
	depth           = enum{"subtle", "flat"}
	linksStyle      = enum{"default", "accent"}
	background      = enum{"plain", "match"}
	iconsStyle      = enum{"regular", "solid", "duotone", "light", "thin"}
	sidebarStyle    = enum{"default", "filled"}
	sidebarList     = enum{"default", "pill", "line"}
	searchStyle     = enum{"prominent", "subtle"}
	locale          = enum{"en", "fr", "es", "zh", "ja", "de", "nl", "no", "pt-br", "ru"}
	headerPreset    = enum{"default", "bold", "contrast", "custom", "none"}
	themeMode       = enum{"light", "dark"}
	aiMode          = enum{"none", "search", "assistant"}
	linksTarget     = enum{"self", "blank"}
	siteTitle       = text{min: 2, max: 128}
	footerCopyright = text{max: 300}
)

// fontOf is a font: a name of names, or a definition.
func fontOf(names enum) shape {
	return union{what: "a font name or a font definition (an object)", pick: func(v any) shape {
		switch v.(type) {
		case string:
			return names
		case map[string]any:
			return fontDefinition
		}
		return nil
	}}
}

// The groups of settings a site space overrides too.
var (
	styling = group(
		req("theme", theme),
		req("primaryColor", themedColor),
		opt("tint", tint),
		req("infoColor", themedColor),
		req("successColor", themedColor),
		req("warningColor", themedColor),
		req("dangerColor", themedColor),
		req("corners", corners),
		req("depth", depth),
		req("links", linksStyle),
		req("font", font),
		req("monospaceFont", monospaceFont),
		req("background", background),
		req("icons", iconsStyle),
		req("sidebar", group(req("background", sidebarStyle), req("list", sidebarList))),
		req("search", searchStyle))
	internationalization = group(req("locale", locale))
	header               = group(
		req("preset", headerPreset),
		opt("logo", themedURL),
		opt("backgroundColor", themedColor),
		opt("linkColor", themedColor),
		req("links", list{item: headerItem}))
	footer = group(
		opt("logo", themedURL),
		req("groups", list{item: footerGroup}),
		opt("copyright", footerCopyright))
	themes        = group(req("default", themeMode), req("toggeable", boolean{}))
	gitLinks      = group(req("showEditLink", boolean{}))
	externalLinks = group(req("target", linksTarget))
	privacyPolicy = group(opt("url", webAddress{}))
	socialPreview = group(opt("url", webAddress{}))
)

// settings is SiteCustomizationSettings: every group the reference
// requires, each with the members it requires.
var settings = group(
	opt("title", siteTitle),
	req("styling", styling),
	req("internationalization", internationalization),
	req("favicon", favicon),
	req("header", header),
	req("footer", footer),
	opt("announcement", announcement),
	req("themes", themes),
	req("pdf", switchGroup()),
	req("feedback", switchGroup()),
	req("ai", group(req("mode", aiMode))),
	req("advancedCustomization", switchGroup()),
	req("git", gitLinks),
	req("pageActions", group(req("externalAI", boolean{}), req("markdown", boolean{}), req("mcp", boolean{}))),
	req("externalLinks", externalLinks),
	req("pagination", switchGroup()),
	req("trademark", switchGroup()),
	req("privacyPolicy", privacyPolicy),
	req("socialPreview", socialPreview),
	req("insights", group(req("trackingCookie", boolean{}))),
)

// switchGroup is a feature's {enabled} group.
func switchGroup() *object { return group(req("enabled", boolean{})) }

// overrides is the body of overrideSiteSpaceCustomizationById: the groups
// of the settings a site space may change (not the fonts, AI, page actions,
// advanced customization or insights), each of their values optional and
// null to remove its override. Where the reference still requires a
// group's members there (internationalization, the feature switches, git,
// external links), they are required, null or not.
var overrides = group(
	reset("title", siteTitle),
	opt("styling", resettable(styling, "font", "monospaceFont")),
	opt("internationalization", nullable(internationalization)),
	reset("favicon", favicon),
	opt("announcement", announcement),
	opt("header", resettable(header)),
	opt("footer", resettable(footer)),
	opt("themes", resettable(themes)),
	opt("pdf", nullable(switchGroup())),
	opt("feedback", nullable(switchGroup())),
	opt("git", nullable(gitLinks)),
	opt("externalLinks", nullable(externalLinks)),
	opt("pagination", nullable(switchGroup())),
	opt("trademark", nullable(switchGroup())),
	opt("privacyPolicy", resettable(privacyPolicy)),
	opt("socialPreview", resettable(socialPreview)),
)

// reset is an optional member whose override null removes.
func reset(name string, s shape) member { return orNull(opt(name, s)) }

// resettable is the override of group g, but the members named: each value
// optional and null to remove its override; a group within, optional, of
// the same kind.
func resettable(g *object, except ...string) *object { return overrideOf(g, false, except) }

// nullable is the override of group g where its members stay required:
// each value admits null, which removes its override.
func nullable(g *object) *object { return overrideOf(g, true, nil) }

func overrideOf(g *object, keepRequired bool, except []string) *object {
	out := group()
	for _, m := range g.members {
		if slices.Contains(except, m.name) {
			continue
		}
		if sub, ok := m.shape.(*object); ok && sub.group {
			m.shape = overrideOf(sub, keepRequired, nil)
		} else {
			m.nullable = true
		}
		m.required = m.required && keepRequired
		out.members = append(out.members, m)
	}
	return out
}

// CheckSettings tells what is wrong with a site's settings s (a *Problem),
// or nil: every group the reference requires, nothing it does not know,
// each value as it constrains it.
func CheckSettings(s map[string]any) error { return asError(settings.check("", s)) }

// CheckOverrides tells what is wrong with o, overrides of a site space's
// settings as overrideSiteSpaceCustomizationById takes them, or nil.
func CheckOverrides(o map[string]any) error { return asError(overrides.check("", o)) }

// asError keeps a nil *Problem a nil error.
func asError(p *Problem) error {
	if p == nil {
		return nil
	}
	return p
}

// Defaults are the settings of a site never customized. Where the
// reference gives a default, it (insights.trackingCookie); where it gives
// none, the features the server does not have (PDF export, feedback, AI,
// page actions, edit links, advanced customization, the trademark) are off,
// and the look (styling, theme modes, locale, external links) is the one
// GitBook's own renderer falls back to: the clean theme in blue (#346DDB),
// Inter and IBM Plex Mono, rounded corners, light mode with a toggle,
// English, external links in the same tab. Pagination is on, as every
// page's layout says (PageLayout.pagination).
func Defaults() map[string]any {
	off := func() map[string]any { return map[string]any{"enabled": false} }
	both := func(c string) map[string]any { return map[string]any{"light": c, "dark": c} }
	return map[string]any{
		"styling": map[string]any{
			"theme":         "clean",
			"primaryColor":  both("#346DDB"),
			"infoColor":     both("#787878"),
			"successColor":  both("#00C950"),
			"warningColor":  both("#FE9A00"),
			"dangerColor":   both("#FB2C36"),
			"corners":       "rounded",
			"depth":         "subtle",
			"links":         "default",
			"font":          "Inter",
			"monospaceFont": "IBMPlexMono",
			"background":    "plain",
			"icons":         "regular",
			"sidebar":       map[string]any{"background": "default", "list": "default"},
			"search":        "subtle",
		},
		"internationalization": map[string]any{"locale": "en"},
		"themes":               map[string]any{"default": "light", "toggeable": true},
		"externalLinks":        map[string]any{"target": "self"},
		// Unset: the reference's empty alternative, or no url.
		"favicon":       map[string]any{},
		"privacyPolicy": map[string]any{},
		"socialPreview": map[string]any{},
		// The preset named `default`, no links.
		"header": map[string]any{"preset": "default", "links": []any{}},
		"footer": map[string]any{"groups": []any{}},
		// Features the server does not have.
		"pdf":                   off(),
		"feedback":              off(),
		"advancedCustomization": off(),
		"trademark":             off(),
		"git":                   map[string]any{"showEditLink": false},
		"ai":                    map[string]any{"mode": "none"},
		"pageActions":           map[string]any{"externalAI": false, "markdown": false, "mcp": false},
		"pagination":            map[string]any{"enabled": true},
		// The reference's default.
		"insights": map[string]any{"trackingCookie": true},
	}
}

// Override applies changes (checked by CheckOverrides) to a site space's
// overrides o, in place: a member given sets its override, null removes
// it, an absent one is kept; a group left with no member goes. It returns
// o (a new map when o is nil).
func Override(o, changes map[string]any) map[string]any {
	if o == nil {
		o = map[string]any{}
	}
	overrideGroup(overrides, o, changes)
	return o
}

func overrideGroup(g *object, o, changes map[string]any) {
	for name, change := range changes {
		sub := g.subgroup(name)
		changed, isObject := change.(map[string]any)
		switch {
		case change == nil:
			delete(o, name)
		case sub != nil && isObject:
			inner, _ := o[name].(map[string]any)
			if inner == nil {
				inner = map[string]any{}
			}
			overrideGroup(sub, inner, changed)
			if len(inner) == 0 {
				delete(o, name)
			} else {
				o[name] = inner
			}
		default:
			o[name] = change
		}
	}
}

// subgroup is g's member name when it is a group of settings, else nil.
func (g *object) subgroup(name string) *object {
	if m := g.member(name); m != nil {
		if sub, ok := m.shape.(*object); ok && sub.group {
			return sub
		}
	}
	return nil
}

// Merge is a site's settings s with a site space's overrides o over them:
// the settings of the site space's published variant. Neither is changed.
func Merge(s, o map[string]any) map[string]any {
	return mergeGroup(overrides, s, o)
}

func mergeGroup(g *object, s, o map[string]any) map[string]any {
	out := maps.Clone(s)
	if out == nil {
		out = map[string]any{}
	}
	for name, value := range o {
		sub := g.subgroup(name)
		inner, isObject := value.(map[string]any)
		if sub != nil && isObject {
			base, _ := out[name].(map[string]any)
			out[name] = mergeGroup(sub, base, inner)
			continue
		}
		out[name] = value
	}
	return out
}
