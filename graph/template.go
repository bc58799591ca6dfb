package graph

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"github.com/docsapi/docsapi/graph/internal/gitlayout"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Space templates: starting content applied to a space's content, or to a
// change request's (POST /v1/spaces/{spaceId}/content/template). The
// catalogue is built in; spaceTemplates lists it. Applying a template adds
// its pages after the existing top-level pages, as one new revision, like
// any edit (editors; never in a locked space). A template's markdown may name
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
	// SECURITY: editors apply templates (editContent checks again).
	s, err := r.editableSpace(ctx, spaceID)
	if err != nil {
		return false, err
	}
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
	names, err := r.templateFileNames(ctx, s, crID, files)
	if err != nil {
		return false, err
	}
	// The bodies are stored before the edit's transaction, as createPage
	// does: a reference's link depends only on the page's depth in the
	// template, and files never change once uploaded.
	now := r.now()
	var pages []*store.RevisionPage
	var build func(parent *string, tps []templatePage, depth int) error
	build = func(parent *string, tps []templatePage, depth int) error {
		for _, tp := range tps {
			p := &store.RevisionPage{ID: store.NewID(), ParentID: parent, Type: store.PageDocument, Title: tp.Title,
				CreatedAt: now, UpdatedAt: now}
			if tp.Emoji != "" {
				p.Emoji = &tp.Emoji
			}
			if tp.Description != "" {
				p.Description = &tp.Description
			}
			dirDepth := depth // a page's file: <dir>/<slug>.md, or <dir>/<slug>/README.md with pages under it
			if len(tp.Pages) > 0 {
				dirDepth++
			}
			var err error
			if p.BodySHA256, err = store.SaveBody(ctx, r.DB, s.OrganizationID, fillTemplate(tp.Markdown, names, dirDepth)); err != nil {
				return err
			}
			pages = append(pages, p)
			if err := build(&p.ID, tp.Pages, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := build(nil, t.Pages, 0); err != nil {
		return false, err
	}
	base, _ := input.BaseRevision.ValueOK()
	_, _, err = r.editContent(ctx, spaceID, crID, base, func(_ *store.PageTree, c *store.Content) error {
		for ref, id := range files {
			if !slices.ContainsFunc(c.Files, func(f *store.RevisionFile) bool { return f.ID == id }) {
				return Invalid("params.contentRefs."+ref, "no file %s in this content", id)
			}
		}
		// Parents come before their pages: each is placed last among its
		// siblings, with a slug unique among them.
		for _, p := range pages {
			_ = setSlug(store.NewPageTree(c.Pages), p, nil) // a derived slug is always accepted
			c.Pages = append(c.Pages, p)
			_ = placePage(store.NewPageTree(c.Pages), p, nil) // at the end: no position to refuse
		}
		return nil
	})
	return err == nil, err
}

// templateFileNames reads the names of the files the references name, in
// the content of space s (or of its change request crID) the template goes to.
func (r *Resolver) templateFileNames(ctx context.Context, s *store.Space, crID *string, files map[string]string) (map[string]string, error) {
	revision := s.RevisionID
	if crID != nil {
		cr, err := store.GetChangeRequest(ctx, r.DB, s, *crID)
		if err != nil {
			return nil, orNotFound(err, "change request")
		}
		revision = cr.Revision
	}
	content, err := store.LoadContent(ctx, r.DB, s.OrganizationID, revision)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for ref, id := range files {
		i := slices.IndexFunc(content.Files, func(f *store.RevisionFile) bool { return f.ID == id })
		if i < 0 {
			return nil, Invalid("params.contentRefs."+ref, "no file %s in this content", id)
		}
		names[ref] = content.Files[i].Name
	}
	return names, nil
}

// fillTemplate replaces the content references of markdown with links to
// their files' layout paths (.gitbook/assets/<name>), relative to the
// directory of the page's file, depth levels below the root; lines naming a
// reference not given are left out.
func fillTemplate(markdown string, files map[string]string, depth int) string {
	up := strings.Repeat("../", depth)
	var out []string
	for _, line := range strings.SplitAfter(markdown, "\n") {
		missing := false
		line = templateRef.ReplaceAllStringFunc(line, func(m string) string {
			name, ok := files[templateRef.FindStringSubmatch(m)[1]]
			if !ok {
				missing = true
				return m
			}
			return up + gitlayout.AssetsDir + pathEscapeSegments(name)
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
