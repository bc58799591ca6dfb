package published

import (
	"net/url"
	"path"
	"strings"
	"time"
)

// contentData is PublishedContent's answer.
type contentData struct {
	Space *struct {
		ID      string `json:"id"`
		Title   string `json:"title"`
		Content struct {
			ID        string     `json:"id"`
			CreatedAt time.Time  `json:"createdAt"`
			AllPages  []*page    `json:"allPages"`
			Files     []*fileRef `json:"files"`
		} `json:"content"`
	} `json:"space"`
}

type page struct {
	ID     string  `json:"id"`
	Title  string  `json:"title"`
	Emoji  *string `json:"emoji"`
	Type   string  `json:"type"`
	Slug   string  `json:"slug"`
	Path   string  `json:"path"`
	Parent *string `json:"parent"`
	Hidden bool    `json:"hidden"`
	// NoIndex and NoRobotsIndex: the page asks not to be indexed (by
	// search and assistants, by search engines' robots).
	NoIndex       bool      `json:"noIndex"`
	NoRobotsIndex bool      `json:"noRobotsIndex"`
	UpdatedAt     time.Time `json:"updatedAt"`
	Description   *string   `json:"description"`
	SourcePath    string    `json:"sourcePath"`

	children []*page
}

type fileRef struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	ContentType string `json:"contentType"`
	Size        int64  `json:"size"`
	SHA256      string `json:"sha256"`
	Git         *struct {
		Path *string `json:"path"`
	} `json:"git"`
}

// pageData is PublishedPage's answer.
type pageData struct {
	Space *struct {
		Revision *struct {
			ID   string    `json:"id"`
			Page *pageBody `json:"pageByPath"`
		} `json:"revisionById"`
	} `json:"space"`
}

type pageBody struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	UpdatedAt time.Time `json:"updatedAt"`
	Markdown  *string   `json:"markdown"`
	Layout    struct {
		Title           bool `json:"title"`
		Description     bool `json:"description"`
		TableOfContents bool `json:"tableOfContents"`
		Outline         bool `json:"outline"`
		Pagination      bool `json:"pagination"`
	} `json:"layout"`
}

// Page types (GraphQL PageType).
const (
	pageDocument = "document"
	pageGroup    = "group"
)

// content is a space's live revision as a site space shows it: its page
// tree, and its pages and files by the paths links name them by.
type content struct {
	spaceID    string
	revisionID string
	createdAt  time.Time
	top        []*page
	// ordered are the pages depth first, as allPages lists them.
	ordered []*page
	pages   map[string]*page // by id
	byPath  map[string]*page
	// bySource indexes pages by their markdown file (sourcePath), files by
	// their path in the layout: what relative links name.
	bySource   map[string]*page
	fileByPath map[string]*fileRef
	fileByName map[string]*fileRef
}

func newContent(d *contentData) *content {
	c := &content{spaceID: d.Space.ID, revisionID: d.Space.Content.ID, createdAt: d.Space.Content.CreatedAt,
		ordered: d.Space.Content.AllPages, byPath: map[string]*page{}, bySource: map[string]*page{},
		fileByPath: map[string]*fileRef{}, fileByName: map[string]*fileRef{}}
	byID := make(map[string]*page, len(c.ordered))
	c.pages = byID
	for _, p := range c.ordered {
		byID[p.ID] = p
		c.byPath[p.Path] = p
		c.bySource[p.SourcePath] = p
	}
	for _, p := range c.ordered {
		if p.Parent == nil || byID[*p.Parent] == nil {
			c.top = append(c.top, p)
		} else {
			parent := byID[*p.Parent]
			parent.children = append(parent.children, p)
		}
	}
	for _, f := range d.Space.Content.Files {
		c.fileByName[f.Name] = f
		c.fileByPath[assetsDir+f.Name] = f
		if f.Git != nil && f.Git.Path != nil {
			c.fileByPath[*f.Git.Path] = f
		}
	}
	return c
}

// assetsDir is where GitBook's layout keeps a space's files.
const assetsDir = ".gitbook/assets/"

// frontPage is the page a site space's address shows: its first document
// in the tree that is not hidden.
func (c *content) frontPage() *page {
	for _, p := range c.ordered {
		if p.Type == pageDocument && !c.hidden(p) {
			return p
		}
	}
	return nil
}

// hidden tells whether p, or a page above it, is hidden: left out of the
// navigation, though its address works.
func (c *content) hidden(p *page) bool {
	for p != nil {
		if p.Hidden {
			return true
		}
		if p.Parent == nil {
			return false
		}
		p = c.byID(*p.Parent)
	}
	return false
}

func (c *content) byID(id string) *page { return c.pages[id] }

// listed tells whether p is offered to search engines and machines
// (sitemaps, llms.txt): a document of the navigation (neither hidden nor
// under a hidden page) that does not ask to stay out of indexes.
func (c *content) listed(p *page) bool {
	return p.Type == pageDocument && !c.hidden(p) && !p.NoIndex && !p.NoRobotsIndex
}

// firstDocumentUnder is the first document at or under p (a group's
// address leads there).
func (c *content) firstDocumentUnder(p *page) *page {
	if p.Type == pageDocument {
		return p
	}
	for _, child := range p.children {
		if d := c.firstDocumentUnder(child); d != nil {
			return d
		}
	}
	return nil
}

// reading are the documents in reading order, hidden ones left out: what
// "previous" and "next" walk.
func (c *content) reading() []*page {
	var out []*page
	for _, p := range c.ordered {
		if p.Type == pageDocument && !c.hidden(p) {
			out = append(out, p)
		}
	}
	return out
}

// ancestors are the pages above p, outermost first.
func (c *content) ancestors(p *page) []*page {
	var out []*page
	for p.Parent != nil {
		if p = c.byID(*p.Parent); p == nil {
			break
		}
		out = append([]*page{p}, out...)
	}
	return out
}

// links resolves the destinations of page from's markdown to the addresses
// of this site (render.Links): relative links to pages and files of the
// revision, as GitBook's git layout names them; anything else is kept.
type links struct {
	c *content
	// from is the folder of the page's markdown file.
	from string
	// pageURL and fileURL make the addresses of a page and a file.
	pageURL func(*page) string
	fileURL func(*fileRef) string
}

func (l links) Resolve(dest string) (string, bool) {
	u, err := url.Parse(dest)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Path == "" || strings.HasPrefix(u.Path, "/") {
		return "", false
	}
	target := path.Clean(path.Join(l.from, u.Path))
	fragment := ""
	if u.Fragment != "" {
		fragment = "#" + url.PathEscape(u.Fragment)
	}
	if p := l.page(target); p != nil {
		return l.pageURL(p) + fragment, true
	}
	if f := l.file(target); f != nil {
		return l.fileURL(f), true
	}
	return "", false
}

// page is the page a link's target names: its markdown file, its path
// with .md, or its path.
func (l links) page(target string) *page {
	if p := l.c.bySource[target]; p != nil {
		return p
	}
	if p := l.c.bySource[target+"/README.md"]; p != nil {
		return p
	}
	return l.c.byPath[strings.TrimSuffix(target, ".md")]
}

// file is the file a link's target names: its path in the layout, or its
// name under any .gitbook/assets folder (git sync writes paths relative to
// each page, so the same file is reached from many folders).
func (l links) file(target string) *fileRef {
	if f := l.c.fileByPath[target]; f != nil {
		return f
	}
	if dir, name := path.Split(target); strings.HasSuffix(dir, "/"+assetsDir) || dir == assetsDir {
		return l.c.fileByName[name]
	}
	return nil
}
