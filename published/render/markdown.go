package render

import (
	"regexp"
	"sort"
	"strings"
)

// Markdown is a page's markdown for readers that take markdown rather than
// HTML (machines: a page's .md address, llms-full.txt): as written, front
// matter left out, with each destination Options.Links resolves replaced by
// the address it gives. The destinations are those Render resolves, found
// in the source: markdown links and images (inline ones and link reference
// definitions), the url and src of {% %} tags ({% content-ref %},
// {% file %}, {% embed %}) and the href and src of raw HTML. Code is left
// as written: fenced blocks, raw <pre> blocks, HTML comments and code
// spans (an indented code block is not told from an indented paragraph:
// GitBook writes fences).
//
// Nothing is sanitized: the answer is text for machines, served as such.
func Markdown(markdown string, opts Options) string {
	markdown = strings.TrimPrefix(markdown, "\uFEFF")
	markdown, _ = frontMatter(markdown)
	if opts.Links == nil {
		return markdown
	}
	var (
		out  strings.Builder
		code verbatim
	)
	out.Grow(len(markdown) + len(markdown)/8)
	for rest := markdown; rest != ""; {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i+1], rest[i+1:]
		} else {
			rest = ""
		}
		content := strings.TrimRight(line, "\r\n")
		if _, body := splitPrefix(content); code.next(content, body) != outside {
			out.WriteString(line)
			continue
		}
		out.WriteString(resolveLine(line, opts.Links))
	}
	return out.String()
}

// destination is where a destination stands in a line.
type destination struct {
	start, end int
	// bracketed: written between < and > (which stay).
	bracketed bool
}

var (
	// referenceDefinition is a link reference definition: "[label]: dest",
	// after up to three spaces and blockquote markers.
	referenceDefinition = regexp.MustCompile(`^[ >]{0,8}\[[^\]]+\]:[ \t]*`)
	// destinationAttribute is an HTML attribute or a tag's argument that
	// holds a destination, quoted.
	destinationAttribute = regexp.MustCompile(`(?i)\b(?:href|src|url)[ \t]*=[ \t]*(?:"([^"]*)"|'([^']*)')`)
)

// resolveLine replaces the destinations of one line (outside its code
// spans) that links resolves.
func resolveLine(line string, links Links) string {
	if !strings.ContainsAny(line, "](=") {
		return line
	}
	spans := codeSpans(line)
	inCode := func(i int) bool { // spans are in order
		k := sort.Search(len(spans), func(k int) bool { return spans[k][1] > i })
		return k < len(spans) && spans[k][0] <= i
	}
	var found []destination
	if m := referenceDefinition.FindStringIndex(line); m != nil && !inCode(m[0]) {
		if d, ok := destinationAt(line, m[1]); ok {
			found = append(found, d)
		}
	}
	for off := 0; ; {
		i := strings.Index(line[off:], "](")
		if i < 0 {
			break
		}
		at := off + i
		off = at + 2
		if inCode(at) || (at > 0 && line[at-1] == '\\') {
			continue
		}
		start := off
		for start < len(line) && (line[start] == ' ' || line[start] == '\t') {
			start++
		}
		if d, ok := destinationAt(line, start); ok {
			found = append(found, d)
		}
	}
	for _, m := range destinationAttribute.FindAllStringSubmatchIndex(line, -1) {
		if inCode(m[0]) {
			continue
		}
		if m[2] >= 0 {
			found = append(found, destination{start: m[2], end: m[3]})
		} else {
			found = append(found, destination{start: m[4], end: m[5]})
		}
	}
	if len(found) == 0 {
		return line
	}
	sort.Slice(found, func(i, j int) bool { return found[i].start < found[j].start })
	var b strings.Builder
	pos := 0
	for _, d := range found {
		if d.start < pos {
			continue // within one replaced already
		}
		written := line[d.start:d.end]
		href, ok := links.Resolve(destOf(unescapeBackslashes(written)))
		if !ok {
			continue
		}
		if !d.bracketed && strings.ContainsAny(href, " ()<>") && !strings.ContainsAny(href, "<>") {
			href = "<" + href + ">"
		}
		b.WriteString(line[pos:d.start])
		b.WriteString(href)
		pos = d.end
	}
	b.WriteString(line[pos:])
	return b.String()
}

// destinationAt reads a markdown link destination starting at line[i]:
// between < and >, or up to a space or an unbalanced ')'.
func destinationAt(line string, i int) (destination, bool) {
	if i >= len(line) {
		return destination{}, false
	}
	if line[i] == '<' {
		j := strings.IndexAny(line[i+1:], "<>\n")
		if j < 0 || line[i+1+j] != '>' {
			return destination{}, false
		}
		return destination{start: i + 1, end: i + 1 + j, bracketed: true}, j > 0
	}
	depth, j := 0, i
loop:
	for ; j < len(line); j++ {
		switch c := line[j]; {
		case c == '\\' && j+1 < len(line):
			j++
		case c == '(':
			depth++
		case c == ')':
			if depth == 0 {
				break loop
			}
			depth--
		case c <= ' ':
			break loop
		}
	}
	return destination{start: i, end: j}, j > i
}

// unescapeBackslashes undoes markdown's backslash escapes of punctuation.
func unescapeBackslashes(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
