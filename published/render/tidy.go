package render

import (
	"bytes"
	"regexp"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// tidy is the step between goldmark and the sanitizer. It parses the page's
// HTML into a tree, which balances it: whatever raw HTML the markdown holds
// ("</div></main>"), the result closes every element it opens and none
// that it did not, so it cannot break the page around it. On that tree it
//
//   - resolves every link and image through Links (links.go),
//   - turns card tables into cards and drops hidden columns (cards.go),
//     and wraps tables in a scrolling, focusable container,
//   - drops what has no meaning outside GitBook (its AI buttons, icon-font
//     <i> tags, form controls other than task-list boxes),
//   - normalises what the sanitizer checks only loosely: ids to
//     [A-Za-z0-9_-] (and in-page links with them), classes to the ones
//     style.css knows, target=_blank with rel="noopener noreferrer".
//
// Security does not rest on tidy: the sanitizer runs after it, with a
// policy that would reject anything tidy let through by mistake.
func tidy(src []byte, links Links) string {
	ctx := &html.Node{Type: html.ElementNode, DataAtom: atom.Div, Data: "div"}
	nodes, err := html.ParseFragment(bytes.NewReader(src), ctx)
	if err != nil {
		return "" // only a failing reader errs, and bytes.Reader does not
	}
	root := elem(atom.Div)
	for _, n := range nodes {
		root.AppendChild(n)
	}
	t := tidier{links: links}
	t.titles, _ = links.(Titles)
	t.walk(root)

	var buf bytes.Buffer
	buf.Grow(len(src))
	for c := root.FirstChild; c != nil; c = c.NextSibling {
		if err := html.Render(&buf, c); err != nil {
			return ""
		}
	}
	return buf.String()
}

type tidier struct {
	links  Links
	titles Titles
}

func (t *tidier) walk(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type != html.ElementNode {
			c = next
			continue
		}
		if dropped(c) {
			n.RemoveChild(c)
			c = next
			continue
		}
		if c.DataAtom == atom.Table {
			if v, _ := attr(c, "data-view"); v == "cards" {
				grid := cardGrid(c)
				n.InsertBefore(grid, c)
				n.RemoveChild(c)
				t.walk(grid)
				c = next
				continue
			}
			removeHiddenColumns(c)
			// Wide tables scroll inside this wrapper rather than widening
			// the page; tabindex lets keyboard users scroll it.
			wrap := elem(atom.Div, "class", "gb-table", "tabindex", "0")
			n.InsertBefore(wrap, c)
			n.RemoveChild(c)
			wrap.AppendChild(c)
		}
		if c.DataAtom == atom.Pre && !hasClass(c, "gb-pre") && !hasClass(c, "gb-math") {
			// GitBook's raw <pre class="language-…"> gets the frame, the
			// scrolling and the copy button of every code block.
			setAttr(c, "class", "gb-pre")
			setAttr(c, "tabindex", "0")
			if !hasClass(n, "gb-code") {
				wrap := elem(atom.Div, "class", "gb-code")
				n.InsertBefore(wrap, c)
				n.RemoveChild(c)
				wrap.AppendChild(c)
			}
		}
		t.element(c)
		t.walk(c)
		c = next
	}
}

// dropped reports elements removed with their content.
func dropped(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Button, atom.Select, atom.Textarea:
		return true
	case atom.Input:
		return !hasClass(n, "gb-task")
	case atom.I:
		// GitBook's icons: <i class="fa-github">:github:</i>.
		c, _ := attr(n, "class")
		return strings.HasPrefix(strings.TrimSpace(c), "fa-")
	}
	return false
}

func hasClass(n *html.Node, class string) bool {
	v, _ := attr(n, "class")
	for _, c := range strings.Fields(v) {
		if c == class {
			return true
		}
	}
	return false
}

// element normalises one element's attributes.
func (t *tidier) element(n *html.Node) {
	filterAttr(n, "id", cleanID)
	filterAttr(n, "class", filterClasses)

	switch n.DataAtom {
	case atom.A:
		t.link(n)
	case atom.Img, atom.Source:
		if v, ok := attr(n, "src"); ok {
			setAttr(n, "src", resolveURL(t.links, v))
		}
		if v, ok := attr(n, "srcset"); ok {
			if s := resolveSrcset(t.links, v); s != "" {
				setAttr(n, "srcset", s)
			} else {
				removeAttr(n, "srcset")
			}
		}
		if n.DataAtom == atom.Img {
			if _, ok := attr(n, "alt"); !ok {
				setAttr(n, "alt", "") // an image without alt fails accessibility checks
			}
			setAttr(n, "loading", "lazy")
		}
	case atom.Input:
		// Only task-list boxes get here: read-only checkboxes.
		setAttr(n, "type", "checkbox")
		setAttr(n, "disabled", "")
		if _, ok := attr(n, "aria-label"); !ok {
			setAttr(n, "aria-label", "Checkbox")
		}
	}
}

func (t *tidier) link(n *html.Node) {
	href, ok := attr(n, "href")
	switch {
	case !ok:
	case hasClass(n, "anchor") || hasClass(n, "footnote-ref") || hasClass(n, "footnote-backref"):
		// Our own in-page links: their ids are normalised like all ids.
		setAttr(n, "href", fragmentHref(href))
	default:
		if t.titles != nil && hasClass(n, "gb-card-link") && n.Parent != nil && hasClass(n.Parent, "gb-content-ref") {
			if title, ok := t.titles.Title(destOf(strings.TrimSpace(href))); ok && strings.TrimSpace(title) != "" {
				setCardTitle(n, title)
			}
		}
		u := resolveURL(t.links, href)
		if strings.HasPrefix(u, "#") {
			u = fragmentHref(u)
		}
		setAttr(n, "href", u)
	}

	if v, ok := attr(n, "target"); ok {
		if strings.EqualFold(strings.TrimSpace(v), "_blank") {
			// The opened page must not reach back to this one.
			setAttr(n, "target", "_blank")
			setAttr(n, "rel", "noopener noreferrer")
		} else {
			removeAttr(n, "target")
		}
	}
	filterAttr(n, "rel", filterRel)
}

// filterAttr replaces n's attribute key by what filter keeps of it, and
// removes it when that is nothing.
func filterAttr(n *html.Node, key string, filter func(string) string) {
	v, ok := attr(n, key)
	if !ok {
		return
	}
	if kept := filter(v); kept != "" {
		setAttr(n, key, kept)
	} else {
		removeAttr(n, key)
	}
}

// fragmentHref normalises the id of an in-page link ("#fn:1" → "#fn-1"),
// as ids themselves are.
func fragmentHref(href string) string {
	if !strings.HasPrefix(href, "#") {
		return href
	}
	return "#" + cleanID(destOf(href[1:]))
}

func setCardTitle(a *html.Node, title string) {
	for c := a.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && hasClass(c, "gb-card-title") {
			for c.FirstChild != nil {
				c.RemoveChild(c.FirstChild)
			}
			c.AppendChild(&html.Node{Type: html.TextNode, Data: title})
			return
		}
	}
}

// allowedClass lists the classes style.css styles: ours ("gb-", chroma's
// "hl-"), goldmark's footnotes, and the few GitBook writes in raw HTML.
func allowedClass(c string) bool {
	if strings.HasPrefix(c, "gb-") || strings.HasPrefix(c, "hl-") {
		return classTokenRE.MatchString(c)
	}
	switch c {
	case "anchor", "button", "primary", "secondary", "expression",
		"footnotes", "footnote-ref", "footnote-backref", "gitbook-drawing":
		return true
	}
	return false
}

var classTokenRE = regexp.MustCompile(`^(gb|hl)-[a-z0-9-]+$`)

func filterClasses(v string) string {
	var keep []string
	for _, c := range strings.Fields(v) {
		if allowedClass(c) {
			keep = append(keep, c)
		}
	}
	return strings.Join(keep, " ")
}

func filterRel(v string) string {
	var keep []string
	for _, r := range strings.Fields(strings.ToLower(v)) {
		switch r {
		case "noopener", "noreferrer", "nofollow":
			keep = append(keep, r)
		}
	}
	return strings.Join(keep, " ")
}
