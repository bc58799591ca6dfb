package render

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// GitBook stores card grids and database-like tables as HTML tables with
// hidden columns: <table data-view="cards"> whose <th data-hidden
// data-card-target> column holds each card's link and <th data-hidden
// data-card-cover> its image. Shown as a table, readers would see file
// names and URLs meant for the editor; so card tables become cards, and
// hidden columns of other tables are dropped.

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func setAttr(n *html.Node, key, val string) {
	for i := range n.Attr {
		if n.Attr[i].Key == key {
			n.Attr[i].Val = val
			return
		}
	}
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}

func removeAttr(n *html.Node, key string) {
	out := n.Attr[:0]
	for _, a := range n.Attr {
		if a.Key != key {
			out = append(out, a)
		}
	}
	n.Attr = out
}

func elem(a atom.Atom, attrs ...string) *html.Node {
	n := &html.Node{Type: html.ElementNode, DataAtom: a, Data: a.String()}
	for i := 0; i+1 < len(attrs); i += 2 {
		n.Attr = append(n.Attr, html.Attribute{Key: attrs[i], Val: attrs[i+1]})
	}
	return n
}

// rows returns the rows of a table, not those of tables nested in it.
func rows(table *html.Node) []*html.Node {
	var out []*html.Node
	for c := table.FirstChild; c != nil; c = c.NextSibling {
		switch c.DataAtom {
		case atom.Tr:
			out = append(out, c)
		case atom.Thead, atom.Tbody, atom.Tfoot:
			for r := c.FirstChild; r != nil; r = r.NextSibling {
				if r.DataAtom == atom.Tr {
					out = append(out, r)
				}
			}
		}
	}
	return out
}

func cells(row *html.Node) []*html.Node {
	var out []*html.Node
	for c := row.FirstChild; c != nil; c = c.NextSibling {
		if c.DataAtom == atom.Td || c.DataAtom == atom.Th {
			out = append(out, c)
		}
	}
	return out
}

type cardColumns struct {
	hidden        map[int]bool
	target, cover int
}

// columns reads the header row's column roles.
func columns(header *html.Node) cardColumns {
	cols := cardColumns{hidden: map[int]bool{}, target: -1, cover: -1}
	for i, c := range cells(header) {
		if _, ok := attr(c, "data-hidden"); ok {
			cols.hidden[i] = true
		}
		if _, ok := attr(c, "data-card-target"); ok {
			cols.target = i
		}
		if _, ok := attr(c, "data-card-cover"); ok {
			cols.cover = i
		}
	}
	return cols
}

// removeHiddenColumns drops the cells of columns marked data-hidden.
func removeHiddenColumns(table *html.Node) {
	rs := rows(table)
	if len(rs) == 0 {
		return
	}
	cols := columns(rs[0])
	if len(cols.hidden) == 0 {
		return
	}
	for _, r := range rs {
		for i, c := range cells(r) {
			if cols.hidden[i] {
				r.RemoveChild(c)
			}
		}
	}
}

// isHeaderRow reports whether a row is made of <th> cells.
func isHeaderRow(r *html.Node) bool {
	cs := cells(r)
	return len(cs) > 0 && cs[0].DataAtom == atom.Th
}

// cardGrid builds the cards of a card table:
//
//	<div class="gb-cards"><div class="gb-cards-card">
//	  <img class="gb-cards-cover" src="…" alt="">
//	  <div class="gb-cards-body"><div class="gb-cards-cell"><a class="gb-cards-link" href="…">title</a></div>…</div>
//	</div>…</div>
//
// A card's target link covers the whole card through CSS; its name is the
// first cell's text.
func cardGrid(table *html.Node) *html.Node {
	grid := elem(atom.Div, "class", "gb-cards")
	rs := rows(table)
	if len(rs) == 0 {
		return grid
	}
	cols := columns(rs[0])
	if isHeaderRow(rs[0]) {
		rs = rs[1:]
	}
	for _, r := range rs {
		cs := cells(r)
		card := elem(atom.Div, "class", "gb-cards-card")
		if cols.cover >= 0 && cols.cover < len(cs) {
			if src := firstURL(cs[cols.cover]); src != "" {
				card.AppendChild(elem(atom.Img, "class", "gb-cards-cover", "src", src, "alt", ""))
			}
		}
		target := ""
		if cols.target >= 0 && cols.target < len(cs) {
			target = firstURL(cs[cols.target])
		}
		body := elem(atom.Div, "class", "gb-cards-body")
		linked := false
		for i, c := range cs {
			if cols.hidden[i] || c.FirstChild == nil {
				continue
			}
			cell := elem(atom.Div, "class", "gb-cards-cell")
			moveChildren(c, cell)
			if target != "" && !linked && !hasElement(cell, atom.A) {
				a := elem(atom.A, "class", "gb-cards-link", "href", target)
				moveChildren(cell, a)
				cell.AppendChild(a)
				linked = true
			}
			body.AppendChild(cell)
		}
		card.AppendChild(body)
		grid.AppendChild(card)
	}
	return grid
}

func moveChildren(from, to *html.Node) {
	for c := from.FirstChild; c != nil; {
		next := c.NextSibling
		from.RemoveChild(c)
		to.AppendChild(c)
		c = next
	}
}

func hasElement(n *html.Node, a atom.Atom) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && (c.DataAtom == a || hasElement(c, a)) {
			return true
		}
	}
	return false
}

// firstURL is the first link or image address in a cell.
func firstURL(n *html.Node) string {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if c.DataAtom == atom.A {
			if v, ok := attr(c, "href"); ok && strings.TrimSpace(v) != "" {
				return v
			}
		}
		if c.DataAtom == atom.Img {
			if v, ok := attr(c, "src"); ok && strings.TrimSpace(v) != "" {
				return v
			}
		}
		if v := firstURL(c); v != "" {
			return v
		}
	}
	return ""
}
