package render

import (
	_ "embed"
	"strings"
)

//go:embed style.css
var styleCSS string

//go:embed script.js
var scriptJS string

// CSS styles everything Render produces, scoped under the .content class
// the page puts on the article. Colours come from the page's custom
// properties (--text, --text-muted, --bg, --bg-subtle, --border,
// --primary) and from this package's own (--gb-…), defined for light and
// dark themes, the latter under :root[data-theme="dark"] and under
// prefers-color-scheme unless the page forces light.
var CSS = buildCSS()

// JS is a small progressive-enhancement script: it turns tab blocks into
// ARIA tabs and adds copy buttons to code blocks. Pages work fully without
// it. It is plain ES2017 for a script-src 'self' page: serve it as a file.
var JS = scriptJS

func buildCSS() string {
	rules, light, dark := highlightCSS()
	var b strings.Builder
	b.WriteString(styleCSS)
	b.WriteString("\n/* Syntax highlighting (generated from chroma's github and github-dark styles). */\n")
	b.WriteString(".content{" + light + "}\n")
	b.WriteString(":root[data-theme=\"dark\"] .content{" + dark + "}\n")
	b.WriteString("@media (prefers-color-scheme: dark){:root:not([data-theme=\"light\"]) .content{" + dark + "}}\n")
	b.WriteString(rules)
	return b.String()
}
