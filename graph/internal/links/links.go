// Package links finds the links of a page's markdown (links, images and
// autolinks) and resolves them within a revision. A relative link is
// resolved against the page's file in GitBook's layout (gitlayout.PathOf):
// it leads to a page or a file of the revision, or nowhere (broken).
// Absolute links lead outside (ok), or into this application (in-app).
package links

import (
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/yuin/goldmark/ast"

	"github.com/docsapi/docsapi/graph/internal/document"
	"github.com/docsapi/docsapi/graph/internal/gitlayout"
	"github.com/docsapi/docsapi/store"
)

// Link is where one link of a page leads.
type Link struct {
	// Status is ok, broken or in-app.
	Status string
	// One of Page, File and URL names the target.
	Page *store.RevisionPage
	File *store.RevisionFile
	URL  string
}

// Index resolves the links of the pages of one revision.
type Index struct {
	tree      *store.PageTree
	files     []*store.RevisionFile
	byFile    map[string]*store.RevisionPage
	appPrefix string
}

// NewIndex indexes the pages of tree t and its files; absolute links that
// start with appPrefix, the application's address, are in-app.
func NewIndex(t *store.PageTree, files []*store.RevisionFile, appPrefix string) *Index {
	byFile := map[string]*store.RevisionPage{}
	for _, p := range t.Pages {
		byFile[gitlayout.PathOf(t, p)] = p
		byFile[t.Path(p.ID)] = p
	}
	return &Index{tree: t, files: files, byFile: byFile, appPrefix: appPrefix}
}

// Of lists the links of page p, whose markdown is given, in document order.
// Links to an anchor of the page itself are left out.
func (ix *Index) Of(p *store.RevisionPage, markdown string) []Link {
	var out []Link
	dir := path.Dir(gitlayout.PathOf(ix.tree, p))
	for _, dest := range destinations(markdown) {
		l := Link{Status: "ok"}
		u, err := url.Parse(dest)
		switch {
		case err != nil:
			l.Status, l.URL = "broken", dest
		case u.Scheme != "":
			l.URL = dest
			if strings.HasPrefix(dest, ix.appPrefix) {
				l.Status = "in-app"
			}
		case u.Path == "":
			continue // an anchor of the same page
		default:
			target := path.Clean(path.Join(dir, u.Path))
			if page := ix.byFile[target]; page != nil {
				l.Page = page
			} else if page := ix.byFile[strings.TrimSuffix(target, ".md")]; page != nil {
				l.Page = page
			} else if i := slices.IndexFunc(ix.files, func(f *store.RevisionFile) bool {
				return target == gitlayout.AssetsDir+f.Name || target == store.StringOf(f.GitPath) || path.Base(target) == f.Name && strings.Contains(target, ".gitbook/assets")
			}); i >= 0 {
				l.File = ix.files[i]
			} else {
				l.Status, l.URL = "broken", dest
			}
		}
		out = append(out, l)
	}
	return out
}

// destinations lists the link and image destinations of markdown.
func destinations(markdown string) []string {
	source := []byte(markdown)
	var out []string
	_ = ast.Walk(document.ParseMarkdown(source), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link:
			out = append(out, string(n.Destination))
		case *ast.Image:
			out = append(out, string(n.Destination))
		case *ast.AutoLink:
			out = append(out, string(n.URL(source)))
		}
		return ast.WalkContinue, nil
	})
	return out
}
