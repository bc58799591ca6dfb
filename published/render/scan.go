package render

import (
	"bytes"
	"strings"

	"github.com/goccy/go-yaml"
)

// scanned is the markdown prepared for goldmark.
type scanned struct {
	src         []byte
	tags        map[int]tagInfo // by offset of a tag's "{%" in src
	description string
}

// tagInfo is what the scan knows of a tag that goldmark's block parser
// cannot: whether an opener has a matching end tag later on. Whether
// {% embed %} or {% file %} is a container or stands alone depends on it.
type tagInfo struct {
	paired bool
}

// scan strips the front matter and rewrites the markdown so that every
// {% tag %} outside code stands on a line of its own, with the indentation
// and blockquote markers of the line it came from. GitBook's git sync
// writes tags on their own lines already; hand-written pages often put
// "{% hint %} text {% endhint %}" on one line, which a block parser could
// not close. Code (fenced blocks, raw <pre>, code spans) is left alone: a
// tag there is literal text.
//
// Where a tag follows raw HTML without a blank line, a blank line is put
// before it: otherwise the tag would be swallowed by the HTML block, as
// CommonMark ends those only at a blank line.
func scan(markdown string) scanned {
	var sc scanned
	markdown = strings.ReplaceAll(markdown, "\x00", "\uFFFD")
	markdown = strings.TrimPrefix(markdown, "\uFEFF")
	markdown, sc.description = frontMatter(markdown)

	type token struct {
		name   string
		end    bool
		offset int
	}
	var (
		out      bytes.Buffer
		toks     []token
		code     verbatim
		afterRaw bool // the current block began with raw HTML
	)
	out.Grow(len(markdown) + len(markdown)/16)

	for rest := markdown; rest != ""; {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i+1], rest[i+1:]
		} else {
			rest = ""
		}
		content := strings.TrimRight(line, "\r\n")
		prefix, body := splitPrefix(content)

		switch code.next(content, body) {
		case openedFence:
			afterRaw = false
			fallthrough
		case inside:
			out.WriteString(line)
			continue
		case openedRaw:
			afterRaw = true
			out.WriteString(line)
			continue
		}
		if strings.TrimSpace(content) == "" {
			afterRaw = false
			out.WriteString(line)
			continue
		}

		found := findTags(body)
		if len(found) == 0 {
			if strings.HasPrefix(body, "<") {
				afterRaw = true
			}
			out.WriteString(line)
			continue
		}

		// Cut the line into text and tags, each on its own line.
		cont := continuationPrefix(prefix)
		pfx := prefix
		pos := 0
		emitText := func(s string) {
			s = strings.TrimSpace(s)
			if s == "" {
				return
			}
			out.WriteString(pfx)
			out.WriteString(s)
			out.WriteByte('\n')
			if strings.HasPrefix(s, "<") {
				afterRaw = true
			}
			pfx = cont
		}
		for _, f := range found {
			emitText(body[pos:f.start])
			if afterRaw {
				out.WriteString(strings.TrimRight(cont, " \t"))
				out.WriteByte('\n')
				afterRaw = false
			}
			out.WriteString(pfx)
			toks = append(toks, token{name: f.tag.name, end: f.tag.end, offset: out.Len()})
			out.WriteString(body[f.start:f.stop])
			out.WriteByte('\n')
			pfx = cont
			pos = f.stop
		}
		emitText(body[pos:])
	}

	// Pair each end tag with the nearest open tag of its name, as brackets.
	sc.tags = make(map[int]tagInfo, len(toks))
	stacks := map[string][]int{}
	for i, t := range toks {
		if !t.end {
			stacks[t.name] = append(stacks[t.name], i)
			sc.tags[t.offset] = tagInfo{}
			continue
		}
		if s := stacks[t.name]; len(s) > 0 {
			sc.tags[toks[s[len(s)-1]].offset] = tagInfo{paired: true}
			stacks[t.name] = s[:len(s)-1]
		}
	}
	sc.src = out.Bytes()
	return sc
}

// verbatim follows the blocks of markdown, line by line, whose lines are
// taken as written (no tag, link or anything else in them counts): fenced
// code, and the raw HTML blocks that run to an end marker (<pre>,
// <script>, comments...).
type verbatim struct {
	fenceCh  byte   // '`' or '~' while inside a fenced code block
	fenceLen int    // length of its opening fence
	rawEnd   string // closing tag of a raw <pre>, <script>… block we are in
}

// Where a line stands (verbatim.next).
const (
	outside = iota
	inside
	openedFence
	openedRaw
)

// next tells where the next line stands, given its content (without its
// line break) and its body (after its container prefix): inside a
// verbatim block (its end included), opening one, or outside.
func (v *verbatim) next(content, body string) int {
	switch {
	case v.fenceCh != 0:
		if closesFence(body, v.fenceCh, v.fenceLen) {
			v.fenceCh = 0
		}
		return inside
	case v.rawEnd != "":
		if containsFold(content, v.rawEnd) {
			v.rawEnd = ""
		}
		return inside
	}
	if ch, n := opensFence(body); n > 0 {
		v.fenceCh, v.fenceLen = ch, n
		return openedFence
	}
	if end := rawBlockEnd(body); end != "" {
		if !containsFold(body, end) {
			v.rawEnd = end
		}
		return openedRaw
	}
	return outside
}

// frontMatter removes a leading YAML front matter block and returns its
// description.
func frontMatter(md string) (rest, description string) {
	if !strings.HasPrefix(md, "---\n") && !strings.HasPrefix(md, "---\r\n") {
		return md, ""
	}
	body := md[strings.IndexByte(md, '\n')+1:]
	for off := 0; off < len(body); {
		end := strings.IndexByte(body[off:], '\n')
		line := body[off:]
		next := len(body)
		if end >= 0 {
			line, next = body[off:off+end], off+end+1
		}
		if l := strings.TrimRight(line, " \t\r"); l == "---" || l == "..." {
			var fm struct {
				Description string `yaml:"description"`
			}
			// A front matter that is not valid YAML is still front matter:
			// it is dropped, without a description.
			_ = yaml.Unmarshal([]byte(body[:off]), &fm)
			return body[next:], strings.TrimSpace(fm.Description)
		}
		off = next
	}
	return md, ""
}

// splitPrefix splits a line into its container prefix (indentation,
// blockquote markers, a list marker) and the rest.
func splitPrefix(line string) (prefix, body string) {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '>') {
		i++
	}
	if n := listMarker(line[i:]); n > 0 {
		i += n
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
	}
	return line[:i], line[i:]
}

// listMarker returns the length of a list marker ("* ", "- ", "+ ", "1. ",
// "2) ") at the start of s, without the space, or 0.
func listMarker(s string) int {
	if len(s) >= 2 && (s[0] == '*' || s[0] == '-' || s[0] == '+') && (s[1] == ' ' || s[1] == '\t') {
		return 1
	}
	n := 0
	for n < len(s) && n < 9 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n > 0 && n+1 < len(s) && (s[n] == '.' || s[n] == ')') && (s[n+1] == ' ' || s[n+1] == '\t') {
		return n + 1
	}
	return 0
}

// continuationPrefix is the prefix for the further lines cut from a line:
// a list marker becomes spaces, so the pieces stay in the list item.
func continuationPrefix(prefix string) string {
	b := []byte(prefix)
	for i, c := range b {
		if c != ' ' && c != '\t' && c != '>' {
			b[i] = ' '
		}
	}
	return string(b)
}

// opensFence reports a fenced code block's opening fence.
func opensFence(body string) (ch byte, n int) {
	if body == "" || (body[0] != '`' && body[0] != '~') {
		return 0, 0
	}
	ch = body[0]
	for n < len(body) && body[n] == ch {
		n++
	}
	if n < 3 || (ch == '`' && strings.IndexByte(body[n:], '`') >= 0) {
		return 0, 0
	}
	return ch, n
}

func closesFence(body string, ch byte, n int) bool {
	i := 0
	for i < len(body) && body[i] == ch {
		i++
	}
	return i >= n && strings.TrimSpace(body[i:]) == ""
}

// rawBlockEnd returns the end marker of the CommonMark HTML blocks that run
// to an explicit end rather than to a blank line (types 1 and 2).
func rawBlockEnd(body string) string {
	if strings.HasPrefix(body, "<!--") {
		return "-->"
	}
	for _, name := range [...]string{"pre", "script", "style", "textarea"} {
		if len(body) > len(name) && body[0] == '<' && strings.EqualFold(body[1:1+len(name)], name) {
			if len(body) == len(name)+1 {
				return "</" + name + ">"
			}
			switch body[1+len(name)] {
			case ' ', '\t', '>':
				return "</" + name + ">"
			}
		}
	}
	return ""
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), sub)
}

type foundTag struct {
	start, stop int
	tag         tag
}

// findTags finds the block tags of a line, skipping code spans and leaving
// out expressions ({% vars.x %}), which stay inline.
func findTags(body string) []foundTag {
	if !strings.Contains(body, "{%") {
		return nil
	}
	spans := codeSpans(body)
	var found []foundTag
	for off, si := 0, 0; off < len(body); {
		i := strings.Index(body[off:], "{%")
		if i < 0 {
			break
		}
		start := off + i
		for si < len(spans) && spans[si][1] <= start {
			si++
		}
		if si < len(spans) && spans[si][0] <= start {
			off = spans[si][1] // inside a code span: skip the span
			continue
		}
		t, n, ok := parseTag(body[start:])
		if !ok {
			off = start + 2
			continue
		}
		if !t.expr {
			found = append(found, foundTag{start: start, stop: start + n, tag: t})
		}
		off = start + n
	}
	return found
}

// codeSpans returns the byte ranges of the code spans of a line, in order:
// a run of n backticks up to the next run of exactly n. Runs are indexed by
// length so that a line of many unmatched runs stays linear.
func codeSpans(s string) [][2]int {
	type run struct{ start, n int }
	var runs []run
	for i := 0; i < len(s); {
		switch {
		case s[i] == '\\':
			i += 2
		case s[i] == '`':
			n := 0
			for i+n < len(s) && s[i+n] == '`' {
				n++
			}
			runs = append(runs, run{i, n})
			i += n
		default:
			i++
		}
	}
	byLen := map[int][]int{}
	for k, r := range runs {
		byLen[r.n] = append(byLen[r.n], k)
	}
	next := map[int]int{} // per length, how far byLen has been consumed
	var spans [][2]int
	for k := 0; k < len(runs); {
		r := runs[k]
		list, p := byLen[r.n], next[r.n]
		for p < len(list) && list[p] <= k {
			p++
		}
		next[r.n] = p
		if p == len(list) {
			k++
			continue
		}
		j := list[p]
		spans = append(spans, [2]int{r.start, runs[j].start + runs[j].n})
		k = j + 1
	}
	return spans
}
