package render

import (
	"html"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// This file writes the HTML of GitBook's blocks. Every class is prefixed
// "gb-" and listed in style.css; the sanitizer lets exactly those through.
// Tabs are written so that they read well without script (every tab shown,
// under its title); script.js turns them into ARIA tabs.

// nodeRenderer renders the nodes this package adds to goldmark's tree, and
// code blocks and task-list checkboxes in place of goldmark's own.
type nodeRenderer struct{}

func (r nodeRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindTagBlock, r.tagBlock)
	reg.Register(kindTagInline, r.tagInline)
	reg.Register(kindAnchorLink, r.anchorLink)
	reg.Register(kindMathBlock, r.mathBlock)
	reg.Register(kindMathInline, r.mathInline)
	reg.Register(ast.KindFencedCodeBlock, r.codeBlock)
	reg.Register(ast.KindCodeBlock, r.codeBlock)
	reg.Register(extast.KindTaskCheckBox, r.taskCheckBox)
}

var esc = html.EscapeString

var hintLabels = map[string]string{
	"info": "Info", "success": "Success", "warning": "Warning", "danger": "Danger",
}

func (r nodeRenderer) tagBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*tagBlock)
	if n.stray {
		return ast.WalkContinue, nil
	}
	t := n.tag
	name := t.name
	if strings.HasPrefix(name, "@") {
		name = "@integration"
	}
	open := func(s string) {
		if entering {
			_, _ = w.WriteString(s)
		}
	}
	closing := func(s string) {
		if !entering {
			_, _ = w.WriteString(s)
		}
	}
	switch name {
	case "hint":
		style := strings.ToLower(t.attr("style"))
		if hintLabels[style] == "" {
			style = "info"
		}
		open(`<div class="gb-hint gb-hint-` + style + `" role="note" aria-label="` + hintLabels[style] + `"><div class="gb-hint-body">` + "\n")
		closing("</div></div>\n")

	case "tabs":
		open(`<div class="gb-tabs">` + "\n")
		closing("</div>\n")
	case "tab":
		title := strings.TrimSpace(t.attr("title"))
		if title == "" {
			title = "Tab"
		}
		open(`<div class="gb-tab"><div class="gb-tab-title">` + esc(title) + `</div><div class="gb-tab-panel">` + "\n")
		closing("</div></div>\n")

	case "stepper":
		open(`<ol class="gb-stepper">` + "\n")
		closing("</ol>\n")
	case "step":
		open(`<li class="gb-step"><div class="gb-step-body">` + "\n")
		closing("</div></li>\n")

	case "code":
		class := "gb-code"
		if t.attr("overflow") == "wrap" {
			class += " gb-code-wrap"
		}
		if t.attr("lineNumbers") == "true" {
			class += " gb-code-lines"
		}
		if title := strings.TrimSpace(t.attr("title")); title != "" {
			open(`<figure class="` + class + `"><figcaption class="gb-code-title">` + esc(title) + "</figcaption>\n")
			closing("</figure>\n")
		} else {
			open(`<div class="` + class + `">` + "\n")
			closing("</div>\n")
		}

	case "embed":
		u := firstNonEmpty(t.attr("url"), arg(t, 0))
		open(`<div class="gb-card gb-embed">` + cardLink(u, embedTitle(u), u))
		if n.HasChildren() {
			open(`<div class="gb-card-caption">` + "\n")
			closing("</div>")
		}
		closing("</div>\n")

	case "content-ref":
		if entering {
			u := firstNonEmpty(t.attr("url"), arg(t, 0))
			_, _ = w.WriteString(`<div class="gb-card gb-content-ref">` + cardLink(u, contentRefTitle(n, source, u), "") + "</div>\n")
		}
		// The children are only the link GitBook writes for other tools.
		return ast.WalkSkipChildren, nil

	case "file":
		src := firstNonEmpty(t.attr("src"), arg(t, 0))
		open(`<div class="gb-card gb-file">` + cardLink(src, fileName(src), "Download"))
		if n.HasChildren() {
			open(`<div class="gb-card-caption">` + "\n")
			closing("</div>")
		}
		closing("</div>\n")

	case "columns":
		open(`<div class="gb-columns">` + "\n")
		closing("</div>\n")
	case "column":
		open(`<div class="gb-column">` + "\n")
		closing("</div>\n")

	case "updates":
		open(`<div class="gb-updates">` + "\n")
		closing("</div>\n")
	case "update":
		format := ""
		if p, ok := n.Parent().(*tagBlock); ok && p.tag.name == "updates" {
			format = p.tag.attr("format")
		}
		open(`<section class="gb-update">` + updateMeta(t, format) + "\n")
		closing("</section>\n")

	case "include":
		// The included file is not known here; it shows nothing.
		open(`<div class="gb-block gb-include"></div>` + "\n")

	case "swagger", "openapi", "openapi-operation", "openapi-webhook":
		label := strings.TrimSpace(strings.ToUpper(t.attr("method")) + " " + t.attr("path"))
		open(`<div class="gb-block gb-openapi">` + blockLabel(label, true) + "\n")
		if summary := t.attr("summary"); summary != "" {
			open(`<p>` + esc(summary) + "</p>\n")
		}
		closing("</div>\n")
	case "openapi-schemas":
		open(`<div class="gb-block gb-openapi">` + blockLabel(t.attr("schemas"), true) + "\n")
		closing("</div>\n")
	case "swagger-description":
		open(`<div class="gb-block gb-openapi-part">` + "\n")
		closing("</div>\n")
	case "swagger-parameter":
		label := t.attr("name")
		var details []string
		for _, k := range []string{"in", "type"} {
			if v := t.attr(k); v != "" {
				details = append(details, v)
			}
		}
		if t.attr("required") == "true" {
			details = append(details, "required")
		}
		if len(details) > 0 {
			label += " (" + strings.Join(details, ", ") + ")"
		}
		open(`<div class="gb-block gb-openapi-part">` + blockLabel(label, false) + "\n")
		if d := t.attr("description"); d != "" {
			open(`<p>` + esc(d) + "</p>\n")
		}
		closing("</div>\n")
	case "swagger-response":
		label := strings.TrimSpace("Response " + t.attr("status"))
		open(`<div class="gb-block gb-openapi-part">` + blockLabel(label, false) + "\n")
		if d := t.attr("description"); d != "" {
			open(`<p>` + esc(d) + "</p>\n")
		}
		closing("</div>\n")

	case "if":
		// Conditional content is shown to every reader: the published page
		// has no visitor data to test.
		open(`<div class="gb-block gb-if">` + "\n")
		closing("</div>\n")

	case "prompt":
		open(`<div class="gb-block gb-prompt">` + blockLabel(t.attr("description"), false) + "\n")
		closing("</div>\n")

	case "@integration":
		open(`<div class="gb-block gb-integration">` + "\n")
		if content := t.attr("content"); content != "" {
			open(`<pre class="gb-pre" tabindex="0"><code>` + esc(content) + "</code></pre>\n")
		}
		closing("</div>\n")

	default:
		open(`<div class="gb-block gb-unknown">` + "\n")
		closing("</div>\n")
	}
	return ast.WalkContinue, nil
}

func (r nodeRenderer) tagInline(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*tagInline)
	if !entering {
		return ast.WalkContinue, nil
	}
	switch {
	case n.tag.expr:
		_, _ = w.WriteString(`<code class="gb-expr">` + esc(n.tag.name) + "</code>")
	case n.tag.name == "embed" && !n.tag.end:
		u := firstNonEmpty(n.tag.attr("url"), arg(n.tag, 0))
		if u != "" {
			_, _ = w.WriteString(`<a href="` + esc(u) + `">` + esc(u) + "</a>")
		}
	}
	// Any other tag inside a paragraph shows nothing.
	return ast.WalkContinue, nil
}

func (r nodeRenderer) anchorLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		n := node.(*anchorLink)
		_, _ = w.WriteString(` <a class="anchor" href="#` + n.id + `" aria-label="` + esc("Link to section: "+n.label) + `">#</a>`)
	}
	return ast.WalkContinue, nil
}

func (r nodeRenderer) mathBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		_, _ = w.WriteString(`<pre class="gb-math" tabindex="0"><code>`)
		lines := node.Lines()
		for i := 0; i < lines.Len(); i++ {
			s := lines.At(i)
			_, _ = w.WriteString(esc(string(s.Value(source))))
		}
		_, _ = w.WriteString("</code></pre>\n")
	}
	return ast.WalkContinue, nil
}

func (r nodeRenderer) mathInline(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		_, _ = w.WriteString(`<code class="gb-math">` + esc(string(node.(*mathInline).tex)) + "</code>")
	}
	return ast.WalkContinue, nil
}

// taskCheckBox labels the box, which goldmark leaves unlabelled: a form
// control without a name fails accessibility checks.
func (r nodeRenderer) taskCheckBox(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		if node.(*extast.TaskCheckBox).IsChecked {
			_, _ = w.WriteString(`<input class="gb-task" type="checkbox" checked disabled aria-label="Done"> `)
		} else {
			_, _ = w.WriteString(`<input class="gb-task" type="checkbox" disabled aria-label="To do"> `)
		}
	}
	return ast.WalkContinue, nil
}

// cardLink is the link of a card; tidy resolves its href like any other.
// Without a destination it is plain text: an empty href would link to the
// page itself.
func cardLink(href, title, sub string) string {
	open, end := `<a class="gb-card-link" href="`+esc(href)+`">`, "</a>"
	if href == "" {
		open, end = `<span class="gb-card-link">`, "</span>"
	}
	s := open + `<span class="gb-card-title">` + esc(title) + `</span>`
	if sub != "" {
		s += `<span class="gb-card-sub">` + esc(sub) + `</span>`
	}
	return s + end
}

func blockLabel(label string, code bool) string {
	label = strings.TrimSpace(label)
	if label == "" {
		return ""
	}
	if code {
		return `<p class="gb-block-label"><code>` + esc(label) + "</code></p>"
	}
	return `<p class="gb-block-label">` + esc(label) + "</p>"
}

func arg(t tag, i int) string {
	if i < len(t.args) {
		return t.args[i]
	}
	return ""
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// embedTitle names an embedded URL by its site: the page has no way to
// fetch the real title (and must not show the provider's player).
func embedTitle(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return u
	}
	return strings.TrimPrefix(p.Hostname(), "www.")
}

// contentRefTitle is the title of a page-link card: the text of the link
// GitBook writes inside the block, unless it is only a file name ("inline.md",
// "."), in which case one is made from the path. tidy may replace it with the
// page's real title (Titles).
func contentRefTitle(n ast.Node, source []byte, u string) string {
	text := ""
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if l, ok := c.(*ast.Link); ok && entering {
			text = plainText(l, source)
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	if text == "" {
		text = plainText(n, source)
	}
	lower := strings.ToLower(text)
	if text != "" && text != "." && text != "./" && text != u && !strings.HasSuffix(lower, ".md") {
		return text
	}
	return titleFromPath(u)
}

// titleFromPath makes "Getting started" of "../getting-started/README.md".
func titleFromPath(u string) string {
	if i := strings.IndexAny(u, "#?"); i >= 0 {
		u = u[:i]
	}
	if d, err := url.PathUnescape(u); err == nil {
		u = d
	}
	var segs []string
	for _, s := range strings.Split(u, "/") {
		if s != "" && s != "." && s != ".." {
			segs = append(segs, s)
		}
	}
	for len(segs) > 0 && strings.EqualFold(segs[len(segs)-1], "README.md") {
		segs = segs[:len(segs)-1]
	}
	if len(segs) == 0 {
		return "Related page"
	}
	name := strings.TrimSuffix(segs[len(segs)-1], path.Ext(segs[len(segs)-1]))
	name = strings.Join(strings.Fields(strings.NewReplacer("-", " ", "_", " ").Replace(name)), " ")
	if name == "" {
		return "Related page"
	}
	return strings.ToUpper(name[:1]) + name[1:]
}

// fileName is what a file card shows: the file's name as uploaded.
func fileName(src string) string {
	s := src
	if i := strings.IndexAny(s, "#?"); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimRight(s, "/")
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	if d, err := url.PathUnescape(s); err == nil {
		s = d
	}
	if s == "" {
		return "File"
	}
	return s
}

// updateMeta is the date and tags of an update, in the format its updates
// block asks for.
func updateMeta(t tag, format string) string {
	date := strings.TrimSpace(t.attr("date"))
	var b strings.Builder
	b.WriteString(`<p class="gb-update-meta">`)
	if d, err := time.Parse("2006-01-02", date); err == nil {
		layout := "January 2, 2006"
		switch format {
		case "short":
			layout = "Jan 2, 2006"
		case "numeric", "numbers":
			layout = "01/02/2006"
		}
		b.WriteString(`<time datetime="` + d.Format("2006-01-02") + `">` + d.Format(layout) + "</time>")
	} else if date != "" {
		b.WriteString(esc(date))
	}
	for _, tg := range strings.Split(t.attr("tags"), ",") {
		if tg = strings.TrimSpace(tg); tg != "" {
			b.WriteString(` <span class="gb-tag">` + esc(tg) + "</span>")
		}
	}
	b.WriteString("</p>")
	return b.String()
}
