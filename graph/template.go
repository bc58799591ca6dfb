package graph

import (
	"context"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Space templates: starting content applied to a space's content, or to a
// change request's (POST S/content/template, spec 4.4). The catalogue is
// built in; spaceTemplates lists it. Applying a template adds its pages
// after the existing top-level pages, as one new revision, like any edit
// (editors; never in a locked space). A template's markdown may name
// content references ({{name}}) that the caller fills with files of the
// content (params.contentRefs); a line naming a reference left unfilled is
// left out.

// spaceTemplate is one template of the catalogue.
type spaceTemplate struct {
	ID, Title, Subtitle, Emoji string
	// ContentRefs are the names of the file references its markdown uses.
	ContentRefs []string
	Pages       []templatePage
}

type templatePage struct {
	Title, Emoji, Description, Markdown string
	Pages                               []templatePage
}

var spaceTemplates = []spaceTemplate{
	{
		ID: "product-docs", Title: "Product documentation", Emoji: "📘",
		Subtitle: "An overview, a quick start and guides for a product", ContentRefs: []string{"logo"},
		Pages: []templatePage{
			{Title: "Overview", Emoji: "👋", Description: "What the product does and who it is for",
				Markdown: "# Overview\n\n![Logo]({{logo}})\n\nDescribe your product in a few sentences: the problem it solves and who it is for.\n\n" +
					"## Where to go next\n\n* [Quick start](quick-start.md): up and running in five minutes\n* [Guides](guides/README.md): the tasks people do most\n"},
			{Title: "Quick start", Emoji: "🚀", Description: "Up and running in five minutes",
				Markdown: "# Quick start\n\n1. Install the product.\n2. Configure it.\n3. Try the first task.\n"},
			{Title: "Guides", Emoji: "🧭", Markdown: "# Guides\n\nStep-by-step guides for the tasks people do most.\n",
				Pages: []templatePage{
					{Title: "First guide", Markdown: "# First guide\n\nWhat the reader will achieve, then the steps.\n"},
				}},
		},
	},
	{
		ID: "api-reference", Title: "API reference", Emoji: "🔌",
		Subtitle: "Authentication, errors and endpoints of an API",
		Pages: []templatePage{
			{Title: "Introduction", Markdown: "# Introduction\n\nThe API's base URL, versioning and conventions.\n"},
			{Title: "Authentication", Markdown: "# Authentication\n\nHow to get a token and send it: `Authorization: Bearer <token>`.\n"},
			{Title: "Errors", Markdown: "# Errors\n\n| Status | Meaning |\n| --- | --- |\n| 400 | Bad input |\n| 401 | Missing or unknown token |\n| 404 | Not found |\n"},
			{Title: "Endpoints", Markdown: "# Endpoints\n\nOne page per resource.\n"},
		},
	},
	{
		ID: "knowledge-base", Title: "Knowledge base", Emoji: "💡",
		Subtitle: "Answers to common questions, by topic", ContentRefs: []string{"cover"},
		Pages: []templatePage{
			{Title: "Welcome", Markdown: "# Welcome\n\n![]({{cover}})\n\nSearch or browse the topics below.\n"},
			{Title: "FAQ", Markdown: "# Frequently asked questions\n\n## How do I get started?\n\nSee the welcome page.\n"},
			{Title: "Troubleshooting", Markdown: "# Troubleshooting\n\nKnown problems and their fixes.\n"},
		},
	},
}

func templateByID(id string) *spaceTemplate {
	if i := slices.IndexFunc(spaceTemplates, func(t spaceTemplate) bool { return t.ID == id }); i >= 0 {
		return &spaceTemplates[i]
	}
	return nil
}

func (r *queryResolver) SpaceTemplates(context.Context) ([]*model.SpaceTemplate, error) {
	out := make([]*model.SpaceTemplate, len(spaceTemplates))
	for i, t := range spaceTemplates {
		out[i] = &model.SpaceTemplate{ID: t.ID, Title: t.Title, Subtitle: t.Subtitle, Emoji: t.Emoji,
			ContentRefs: append([]string{}, t.ContentRefs...)}
	}
	return out, nil
}

// templateRef matches a content reference in a template's markdown.
var templateRef = regexp.MustCompile(`\{\{([a-z][a-z0-9_-]*)\}\}`)

// templateFileRefs reads params.contentRefs: each name one the template
// uses, each reference a file ({kind: file, file: id}).
func templateFileRefs(t *spaceTemplate, refs map[string]any) (map[string]string, error) {
	out := map[string]string{}
	for name, v := range refs {
		field := "params.contentRefs." + name
		if !slices.Contains(t.ContentRefs, name) {
			if len(t.ContentRefs) == 0 {
				return nil, Invalid(field, "template %s takes no content references", t.ID)
			}
			return nil, Invalid(field, "template %s takes only %s", t.ID, strings.Join(t.ContentRefs, ", "))
		}
		ref, _ := v.(map[string]any)
		file, _ := ref["file"].(string)
		if ref["kind"] != "file" || file == "" || len(ref) != 2 {
			return nil, Invalid(field, `must be a file reference: {"kind": "file", "file": "<file id>"}`)
		}
		out[name] = file
	}
	return out, nil
}

func (r *mutationResolver) ApplySpaceTemplate(ctx context.Context, spaceID string, input model.ApplySpaceTemplateInput) (bool, error) {
	t := templateByID(input.ID)
	if t == nil {
		ids := make([]string, len(spaceTemplates))
		for i, t := range spaceTemplates {
			ids[i] = t.ID
		}
		return false, Invalid("id", "no template %q (templates: %s)", input.ID, strings.Join(ids, ", "))
	}
	var refs map[string]any
	if p, _ := input.Params.ValueOK(); p != nil {
		refs, _ = p.ContentRefs.ValueOK()
	}
	files, err := templateFileRefs(t, refs)
	if err != nil {
		return false, err
	}
	crID, _ := input.ChangeRequestID.ValueOK()
	now := r.now()
	_, _, err = r.editContent(ctx, spaceID, crID, func(tree *store.PageTree, c *store.Content) error {
		names := map[string]string{} // reference name → file name
		for ref, id := range files {
			i := slices.IndexFunc(c.Files, func(f *store.RevisionFile) bool { return f.ID == id })
			if i < 0 {
				return Invalid("params.contentRefs."+ref, "no file %s in this content", id)
			}
			names[ref] = c.Files[i].Name
		}
		// Place the pages first: a reference's link is relative to the
		// file of the page that holds it.
		bodies := map[*store.RevisionPage]string{}
		var add func(parent *string, pages []templatePage)
		add = func(parent *string, pages []templatePage) {
			for _, tp := range pages {
				p := &store.RevisionPage{ID: store.NewID(), ParentID: parent, Type: store.PageDocument, Title: tp.Title,
					CreatedAt: now, UpdatedAt: now}
				if tp.Emoji != "" {
					p.Emoji = &tp.Emoji
				}
				if tp.Description != "" {
					p.Description = &tp.Description
				}
				t := store.NewPageTree(c.Pages)
				_ = setSlug(t, p, nil) // a derived slug is always accepted
				c.Pages = append(c.Pages, p)
				_ = placePage(store.NewPageTree(c.Pages), p, nil) // at the end: no position to refuse
				bodies[p] = tp.Markdown
				add(&p.ID, tp.Pages)
			}
		}
		add(nil, t.Pages)
		tree = store.NewPageTree(c.Pages)
		for p, markdown := range bodies {
			dir := path.Dir(layoutFileOf(tree, p))
			body, err := store.SaveBody(ctx, r.DB, fillTemplate(markdown, names, dir))
			if err != nil {
				return err
			}
			p.BodySHA256 = body
		}
		return nil
	})
	return err == nil, err
}

// fillTemplate replaces the content references of markdown with links to
// their files' layout paths (.gitbook/assets/<name>), relative to dir, the
// directory of the page's file; lines naming a reference not given are
// left out.
func fillTemplate(markdown string, files map[string]string, dir string) string {
	up := ""
	if dir != "." {
		up = strings.Repeat("../", strings.Count(dir, "/")+1)
	}
	var out []string
	for _, line := range strings.SplitAfter(markdown, "\n") {
		missing := false
		line = templateRef.ReplaceAllStringFunc(line, func(m string) string {
			name, ok := files[templateRef.FindStringSubmatch(m)[1]]
			if !ok {
				missing = true
				return m
			}
			return up + assetsDir + pathEscapeSegments(name)
		})
		if !missing {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}

// pathEscapeSegments escapes a file name for a markdown link destination.
func pathEscapeSegments(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, " ", "%20"), ")", "%29")
}
