package graph

import (
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/docsapi/docsapi/store"
)

// GitBook's repository layout, both ways: .gitbook.yaml names the root
// directory and the README and SUMMARY files; SUMMARY.md gives the page
// tree (## headings are groups, nested list items are pages linking to
// their markdown files); a page file starts with optional front matter
// (description) and a # title; files live in .gitbook/assets.

// repoFile is a file of a repository's tree.
type repoFile struct {
	path string
	data []byte
	oid  string
}

// layoutPage is a page read from, or written to, a repository.
type layoutPage struct {
	title, description, markdown string
	group                        bool
	path, oid                    string // the page's file (empty for groups)
	pages                        []*layoutPage
}

// layoutContent is a repository's content in the layout.
type layoutContent struct {
	pages  []*layoutPage
	assets []repoFile
}

const assetsDir = ".gitbook/assets/"

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
)

// readLayout reads the content of a repository's files, with project the
// directory to read from ("" for the root).
func readLayout(files map[string]repoFile, project string) layoutContent {
	root := strings.Trim(path.Clean("/"+project), "/")
	cfg := gitbookConfig{}
	if f, ok := files[path.Join(root, ".gitbook.yaml")]; ok {
		_ = yaml.Unmarshal(f.data, &cfg) // a broken config reads as the defaults
	}
	root = strings.Trim(path.Clean("/"+path.Join(root, cfg.Root)), "/")
	readme, summary := orDefault(cfg.Structure.Readme, "README.md"), orDefault(cfg.Structure.Summary, "SUMMARY.md")
	var out layoutContent
	for p, f := range files {
		if rel, ok := within(p, root); ok && strings.HasPrefix(rel, assetsDir) {
			out.assets = append(out.assets, repoFile{path: rel, data: f.data, oid: f.oid})
		}
	}
	slices.SortFunc(out.assets, func(a, b repoFile) int { return strings.Compare(a.path, b.path) })
	page := func(title, rel string) *layoutPage {
		p := &layoutPage{title: title, path: rel}
		if f, ok := files[path.Join(root, rel)]; ok {
			p.oid = f.oid
			p.description, p.markdown = splitPageFile(string(f.data))
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
			p.title, p.markdown = titleOf(p.markdown, strings.TrimSuffix(path.Base(rel), ".md"))
			out.pages = append(out.pages, p)
		}
		return out
	}
	// A stack of (indent, page) for the nesting of list items.
	type level struct {
		indent int
		page   *layoutPage
	}
	var stack []level
	var group *layoutPage
	add := func(p *layoutPage, indent int) {
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		switch {
		case len(stack) > 0:
			parent := stack[len(stack)-1].page
			parent.pages = append(parent.pages, p)
		case group != nil:
			group.pages = append(group.pages, p)
		default:
			out.pages = append(out.pages, p)
		}
		stack = append(stack, level{indent, p})
	}
	for _, line := range strings.Split(string(s.data), "\n") {
		if m := groupTitle.FindStringSubmatch(line); m != nil {
			group = &layoutPage{title: m[1], group: true}
			out.pages = append(out.pages, group)
			stack = nil
			continue
		}
		if m := summaryItem.FindStringSubmatch(line); m != nil {
			indent := len(strings.ReplaceAll(m[1], "\t", "    "))
			p := page(m[2], strings.TrimPrefix(path.Clean("/"+m[3]), "/"))
			_, p.markdown = titleOf(p.markdown, m[2])
			add(p, indent)
		}
	}
	return out
}

// writeLayout renders content as repository files (paths relative to the
// project directory).
func writeLayout(c layoutContent) map[string][]byte {
	files := map[string][]byte{
		".gitbook.yaml": []byte("root: ./\n\nstructure:\n  readme: README.md\n  summary: SUMMARY.md\n"),
	}
	var summary strings.Builder
	summary.WriteString("# Table of contents\n\n")
	var list func(pages []*layoutPage, depth int)
	list = func(pages []*layoutPage, depth int) {
		for _, p := range pages {
			summary.WriteString(strings.Repeat("  ", depth) + "* [" + p.title + "](" + p.path + ")\n")
			files[p.path] = []byte(pageFile(p))
			list(p.pages, depth+1)
		}
	}
	for _, p := range c.pages {
		if p.group {
			summary.WriteString("\n## " + p.title + "\n\n")
			list(p.pages, 0)
			continue
		}
		list([]*layoutPage{p}, 0)
	}
	files["SUMMARY.md"] = []byte(summary.String())
	if _, ok := files["README.md"]; !ok {
		files["README.md"] = []byte("# " + "Introduction\n")
	}
	for _, a := range c.assets {
		files[a.path] = a.data
	}
	return files
}

// pageFile is a page's markdown file: front matter, title, body.
func pageFile(p *layoutPage) string {
	var b strings.Builder
	if p.description != "" {
		d, _ := yaml.Marshal(map[string]string{"description": p.description})
		b.WriteString("---\n" + string(d) + "---\n\n")
	}
	b.WriteString("# " + p.title + "\n")
	if p.markdown != "" {
		b.WriteString("\n" + p.markdown)
		if !strings.HasSuffix(p.markdown, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// splitPageFile separates a page file's front matter description from the rest.
func splitPageFile(text string) (description, rest string) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if strings.HasPrefix(text, "---\n") {
		if end := strings.Index(text[4:], "\n---\n"); end >= 0 {
			var fm struct {
				Description string `yaml:"description"`
			}
			_ = yaml.Unmarshal([]byte(text[4:4+end]), &fm)
			return fm.Description, strings.TrimLeft(text[4+end+5:], "\n")
		}
	}
	return "", text
}

// titleOf takes a leading # title off markdown: the title (fallback when
// there is none) and the rest.
func titleOf(markdown, fallback string) (string, string) {
	first, rest, _ := strings.Cut(markdown, "\n")
	if m := firstTitle.FindStringSubmatch(first); m != nil {
		return m[1], strings.TrimLeft(rest, "\n")
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

// exportLayout turns a revision's content into the layout: each page's file
// is where it was imported from, else its path in the revision (.md, or
// /README.md when it has pages under it).
func exportLayout(t *store.PageTree, bodies map[string]string, files []*store.RevisionFile, asset func(*store.RevisionFile) ([]byte, error)) (layoutContent, error) {
	var out layoutContent
	var walk func(parent *string) []*layoutPage
	walk = func(parent *string) []*layoutPage {
		var pages []*layoutPage
		for _, p := range t.Children(parent) {
			lp := &layoutPage{title: p.Title, group: p.Type == store.PageGroup, description: str(p.Description), markdown: bodies[str(p.BodySHA256)]}
			lp.pages = walk(&p.ID)
			if !lp.group {
				lp.path = layoutFileOf(t, p)
			}
			pages = append(pages, lp)
		}
		return pages
	}
	out.pages = walk(nil)
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
		out.assets = append(out.assets, repoFile{path: assetsDir + name, data: data})
	}
	return out, nil
}
