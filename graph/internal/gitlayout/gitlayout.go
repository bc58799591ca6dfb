// Package gitlayout reads and writes GitBook's repository layout:
// .gitbook.yaml names the root directory and the README and SUMMARY files;
// SUMMARY.md gives the page tree (## headings are groups, nested list items
// are pages linking to their markdown files); a page file starts with
// optional front matter (description) and a # title; files live in
// .gitbook/assets.
package gitlayout

import (
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/docsapi/docsapi/store"
)

// File is a file of a repository's tree.
type File struct {
	Path string
	Data []byte
	OID  string
}

// Page is a page read from, or written to, a repository.
type Page struct {
	Title, Description, Markdown string
	Group                        bool
	// Hidden: left out of the published table of contents (front matter
	// hidden: true, as GitBook writes it).
	Hidden    bool
	Path, OID string // the page's file (empty for groups)
	Pages     []*Page
}

// Content is a repository's content in the layout.
type Content struct {
	Pages  []*Page
	Assets []File
}

// AssetsDir is the directory of files (images, attachments), with its
// trailing slash.
const AssetsDir = ".gitbook/assets/"

type gitbookConfig struct {
	Root      string `yaml:"root"`
	Structure struct {
		Readme  string `yaml:"readme"`
		Summary string `yaml:"summary"`
	} `yaml:"structure"`
}

var (
	summaryItem = regexp.MustCompile(`^(\s*)[*+-]\s+\[(.*?)\]\((.*?)\)\s*$`)
	groupTitle  = regexp.MustCompile(`^##\s+(.+?)\s*#*\s*$`)
	firstTitle  = regexp.MustCompile(`^#\s+(.+?)\s*#*\s*$`)
	// headingAnchor is the empty anchor GitBook's git sync appends to a
	// heading to keep its id (`## Get started <a href="#start" id="start"></a>`):
	// no part of the title.
	headingAnchor = regexp.MustCompile(`\s*<a\s[^>]*>\s*</a>\s*$`)
)

// Read reads the content of a repository's files, by path, with project
// the directory to read from ("" for the root).
func Read(files map[string]File, project string) Content {
	root := strings.Trim(path.Clean("/"+project), "/")
	cfg := gitbookConfig{}
	if f, ok := files[path.Join(root, ".gitbook.yaml")]; ok {
		_ = yaml.Unmarshal(f.Data, &cfg) // a broken config reads as the defaults
	}
	root = strings.Trim(path.Clean("/"+path.Join(root, cfg.Root)), "/")
	readme, summary := orDefault(cfg.Structure.Readme, "README.md"), orDefault(cfg.Structure.Summary, "SUMMARY.md")
	var out Content
	for p, f := range files {
		if rel, ok := within(p, root); ok && strings.HasPrefix(rel, AssetsDir) {
			out.Assets = append(out.Assets, File{Path: rel, Data: f.Data, OID: f.OID})
		}
	}
	slices.SortFunc(out.Assets, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	page := func(title, rel string) *Page {
		p := &Page{Title: title, Path: rel}
		if f, ok := files[path.Join(root, rel)]; ok {
			p.OID = f.OID
			var fm frontMatter
			fm, p.Markdown = splitPageFile(string(f.Data))
			p.Description, p.Hidden = fm.Description, fm.Hidden
		}
		return p
	}
	s, ok := files[path.Join(root, summary)]
	if !ok {
		// No summary: the README, then every other markdown file, by path.
		var rels []string
		for p := range files {
			if rel, ok := within(p, root); ok && strings.HasSuffix(rel, ".md") && rel != readme && rel != summary {
				rels = append(rels, rel)
			}
		}
		slices.Sort(rels)
		if _, ok := files[path.Join(root, readme)]; ok {
			rels = append([]string{readme}, rels...)
		}
		for _, rel := range rels {
			p := page("", rel)
			p.Title, p.Markdown = titleOf(p.Markdown, strings.TrimSuffix(path.Base(rel), ".md"))
			out.Pages = append(out.Pages, p)
		}
		return out
	}
	// A stack of (indent, page) for the nesting of list items.
	type level struct {
		indent int
		page   *Page
	}
	var stack []level
	var group *Page
	add := func(p *Page, indent int) {
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		switch {
		case len(stack) > 0:
			parent := stack[len(stack)-1].page
			parent.Pages = append(parent.Pages, p)
		case group != nil:
			group.Pages = append(group.Pages, p)
		default:
			out.Pages = append(out.Pages, p)
		}
		stack = append(stack, level{indent, p})
	}
	for _, line := range strings.Split(string(s.Data), "\n") {
		if m := groupTitle.FindStringSubmatch(line); m != nil {
			group = &Page{Title: headingAnchor.ReplaceAllString(m[1], ""), Group: true}
			out.Pages = append(out.Pages, group)
			stack = nil
			continue
		}
		if m := summaryItem.FindStringSubmatch(line); m != nil {
			indent := len(strings.ReplaceAll(m[1], "\t", "    "))
			p := page(m[2], strings.TrimPrefix(path.Clean("/"+m[3]), "/"))
			_, p.Markdown = titleOf(p.Markdown, m[2])
			add(p, indent)
		}
	}
	return out
}

// Write renders content as repository files, by path (relative to the
// project directory).
func Write(c Content) map[string][]byte {
	files := map[string][]byte{
		".gitbook.yaml": []byte("root: ./\n\nstructure:\n  readme: README.md\n  summary: SUMMARY.md\n"),
	}
	var summary strings.Builder
	summary.WriteString("# Table of contents\n\n")
	var list func(pages []*Page, depth int)
	list = func(pages []*Page, depth int) {
		for _, p := range pages {
			summary.WriteString(strings.Repeat("  ", depth) + "* [" + p.Title + "](" + p.Path + ")\n")
			files[p.Path] = []byte(pageFile(p))
			list(p.Pages, depth+1)
		}
	}
	for _, p := range c.Pages {
		if p.Group {
			summary.WriteString("\n## " + p.Title + "\n\n")
			list(p.Pages, 0)
			continue
		}
		list([]*Page{p}, 0)
	}
	files["SUMMARY.md"] = []byte(summary.String())
	if _, ok := files["README.md"]; !ok {
		files["README.md"] = []byte("# " + "Introduction\n")
	}
	for _, a := range c.Assets {
		files[a.Path] = a.Data
	}
	return files
}

// frontMatter is what a page file's front matter says of the page, in
// GitBook's names; what else it holds is left alone.
type frontMatter struct {
	Description string `yaml:"description,omitempty"`
	Hidden      bool   `yaml:"hidden,omitempty"`
}

// pageFile is a page's markdown file: front matter, title, body.
func pageFile(p *Page) string {
	var b strings.Builder
	if fm := (frontMatter{Description: p.Description, Hidden: p.Hidden}); fm != (frontMatter{}) {
		d, _ := yaml.Marshal(fm)
		b.WriteString("---\n" + string(d) + "---\n\n")
	}
	b.WriteString("# " + p.Title + "\n")
	if p.Markdown != "" {
		b.WriteString("\n" + p.Markdown)
		if !strings.HasSuffix(p.Markdown, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// splitPageFile separates a page file's front matter from the rest.
func splitPageFile(text string) (fm frontMatter, rest string) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if strings.HasPrefix(text, "---\n") {
		if end := strings.Index(text[4:], "\n---\n"); end >= 0 {
			_ = yaml.Unmarshal([]byte(text[4:4+end]), &fm) // a broken one says nothing
			return fm, strings.TrimLeft(text[4+end+5:], "\n")
		}
	}
	return fm, text
}

// titleOf takes a leading # title off markdown: the title (fallback when
// there is none) and the rest.
func titleOf(markdown, fallback string) (string, string) {
	first, rest, _ := strings.Cut(markdown, "\n")
	if m := firstTitle.FindStringSubmatch(first); m != nil {
		return headingAnchor.ReplaceAllString(m[1], ""), strings.TrimLeft(rest, "\n")
	}
	return fallback, markdown
}

func within(p, root string) (string, bool) {
	if root == "" {
		return p, true
	}
	rel, ok := strings.CutPrefix(p, root+"/")
	return rel, ok
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Export turns a revision's content into the layout: each page's file is
// PathOf the page. bodies holds page markdown by digest; asset reads a
// file's bytes.
func Export(t *store.PageTree, bodies map[string]string, files []*store.RevisionFile, asset func(*store.RevisionFile) ([]byte, error)) (Content, error) {
	var out Content
	var walk func(parent *string) []*Page
	walk = func(parent *string) []*Page {
		var pages []*Page
		for _, p := range t.Children(parent) {
			lp := &Page{Title: p.Title, Group: p.Type == store.PageGroup, Description: store.StringOf(p.Description), Hidden: p.Hidden, Markdown: bodies[store.StringOf(p.BodySHA256)]}
			lp.Pages = walk(&p.ID)
			if !lp.Group {
				lp.Path = PathOf(t, p)
			}
			pages = append(pages, lp)
		}
		return pages
	}
	out.Pages = walk(nil)
	used := map[string]bool{}
	for _, f := range files {
		data, err := asset(f)
		if err != nil {
			return out, err
		}
		name := f.Name
		for n := 2; used[name]; n++ {
			ext := path.Ext(f.Name)
			name = strings.TrimSuffix(f.Name, ext) + "-" + strconv.Itoa(n) + ext
		}
		used[name] = true
		out.Assets = append(out.Assets, File{Path: AssetsDir + name, Data: data})
	}
	return out, nil
}

// PathOf is the file of page p of tree t in the layout: where it was
// imported from, else its path in the revision (.md, or /README.md when it
// has pages under it).
func PathOf(t *store.PageTree, p *store.RevisionPage) string {
	if p.GitPath != nil {
		return *p.GitPath
	}
	if len(t.Children(&p.ID)) > 0 {
		return t.Path(p.ID) + "/README.md"
	}
	return t.Path(p.ID) + ".md"
}
