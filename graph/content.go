package graph

import (
	"context"
	"errors"
	"regexp"
	"slices"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/internal/document"
	"github.com/docsapi/docsapi/graph/internal/gitlayout"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// A space's content: immutable revisions of a page tree. Reads resolve a
// revision's tree once per request (a loader keyed by revision) and page
// bodies in one batch. Edits (editors and above, on a live space) copy the
// current revision's tree rows into a new revision with the change applied,
// under the space's row lock, and make it the space's content: no revision
// is ever changed.

const (
	maxPageTitle       = 255
	maxPageDescription = 1000
	maxPageMarkdown    = 1 << 20
)

var pageSlug = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// The computed argument of the content reads asks for content
// that is not computed; no content is computed here (no page comes from a
// content source), so both values read the same revision. The schema says
// so (Revision).

func (r *spaceResolver) Content(ctx context.Context, s *store.Space, _ bool) (*store.Revision, error) {
	return store.GetRevision(ctx, r.DB, s.OrganizationID, s.ID, s.RevisionID)
}

func (r *spaceResolver) RevisionByID(ctx context.Context, s *store.Space, id string, _ bool) (*store.Revision, error) {
	// SECURITY: a visitor reads a space's live revision, never its past
	// ones or its change requests'.
	if VisitorFrom(ctx) != nil && id != s.RevisionID {
		return nil, NotFound("revision")
	}
	rev, err := store.GetRevision(ctx, r.DB, s.OrganizationID, s.ID, id)
	return rev, orNotFound(err, "revision")
}

type revisionResolver struct{ *Resolver }

var _ generated.RevisionResolver = (*revisionResolver)(nil)

func (r *Resolver) Revision() generated.RevisionResolver { return &revisionResolver{r} }

// tree is the request's indexed page tree of rev.
func (r *Resolver) tree(ctx context.Context, rev *store.Revision) (*store.PageTree, error) {
	return r.loaders(ctx).PageTree.Load(ctx, orgKey(rev.OrganizationID, rev.ID))()
}

// nodes wraps pages of a tree for GraphQL.
func nodes(rev *store.Revision, t *store.PageTree, pages []*store.RevisionPage, format *model.DocumentFormat) []*model.PageNode {
	out := make([]*model.PageNode, len(pages))
	for i, p := range pages {
		out[i] = &model.PageNode{RevisionPage: p, Revision: rev, Tree: t, Format: format}
	}
	return out
}

func (r *revisionResolver) Pages(ctx context.Context, rev *store.Revision) ([]*model.PageNode, error) {
	t, err := r.tree(ctx, rev)
	if err != nil {
		return nil, err
	}
	return nodes(rev, t, t.Children(nil), nil), nil
}

func (r *revisionResolver) AllPages(ctx context.Context, rev *store.Revision) ([]*model.PageNode, error) {
	t, err := r.tree(ctx, rev)
	if err != nil {
		return nil, err
	}
	ordered := make([]*store.RevisionPage, 0, len(t.Pages))
	var walk func(parent *string)
	walk = func(parent *string) {
		for _, p := range t.Children(parent) {
			ordered = append(ordered, p)
			walk(&p.ID)
		}
	}
	walk(nil)
	return nodes(rev, t, ordered, nil), nil
}

func (r *revisionResolver) ReusableContents(context.Context, *store.Revision) ([]map[string]any, error) {
	return []map[string]any{}, nil
}

func (r *revisionResolver) Variables(context.Context, *store.Revision) (map[string]any, error) {
	return map[string]any{}, nil
}

func (r *revisionResolver) Urls(ctx context.Context, rev *store.Revision) (*model.RevisionURLs, error) {
	u := &model.RevisionURLs{App: r.URLs.App("/s/" + pathEscape(rev.SpaceID) + "/~/revisions/" + pathEscape(rev.ID))}
	s, err := store.GetSpace(ctx, r.DB, rev.SpaceID)
	if err != nil {
		return nil, err
	}
	if s.Visibility != store.VisibilityPrivate {
		published := r.URLs.Published("/s/" + pathEscape(s.ID))
		u.Published = &published
		if s.Visibility == store.VisibilityPublic {
			u.Public = &published
		}
	}
	return u, nil
}

// The evaluated argument of page reads asks for the body's expressions
// evaluated; markdown bodies hold none and revisions have no variables, so
// every value gives the same body. The schema says so (DocumentEvaluation),
// and the scalar rejects any value but true, false and "deterministic-only".

func (r *revisionResolver) Page(ctx context.Context, rev *store.Revision, id string, format *model.DocumentFormat, _ *model.DocumentEvaluation) (*model.PageNode, error) {
	t, err := r.tree(ctx, rev)
	if err != nil {
		return nil, err
	}
	p := t.Page(id)
	if p == nil {
		return nil, NotFound("page")
	}
	return &model.PageNode{RevisionPage: p, Revision: rev, Tree: t, Format: format}, nil
}

func (r *revisionResolver) PageByPath(ctx context.Context, rev *store.Revision, path string, format *model.DocumentFormat, _ *model.DocumentEvaluation) (*model.PageNode, error) {
	t, err := r.tree(ctx, rev)
	if err != nil {
		return nil, err
	}
	p := t.ByPath(path)
	if p == nil {
		return nil, NotFound("page")
	}
	return &model.PageNode{RevisionPage: p, Revision: rev, Tree: t, Format: format}, nil
}

type revisionPageResolver struct{ *Resolver }

var _ generated.RevisionPageResolver = (*revisionPageResolver)(nil)

func (r *Resolver) RevisionPage() generated.RevisionPageResolver { return &revisionPageResolver{r} }

func (r *revisionPageResolver) Path(_ context.Context, p *model.PageNode) (string, error) {
	return p.Tree.Path(p.ID), nil
}

func (r *revisionPageResolver) Urls(_ context.Context, p *model.PageNode) (*model.RevisionPageURLs, error) {
	return &model.RevisionPageURLs{App: r.URLs.App("/s/" + pathEscape(p.Revision.SpaceID) + "/" + p.Tree.Path(p.ID))}, nil
}

func (r *revisionPageResolver) Pages(_ context.Context, p *model.PageNode) ([]*model.PageNode, error) {
	return nodes(p.Revision, p.Tree, p.Tree.Children(&p.ID), nil), nil
}

func (r *revisionPageResolver) Parent(_ context.Context, p *model.PageNode) (*string, error) {
	return p.ParentID, nil
}

func (r *revisionPageResolver) SourcePath(_ context.Context, p *model.PageNode) (string, error) {
	return gitlayout.PathOf(p.Tree, p.RevisionPage), nil
}

func (r *revisionPageResolver) Markdown(ctx context.Context, p *model.PageNode) (*string, error) {
	if p.RevisionPage.Type != store.PageDocument || !p.Wants(model.DocumentFormatMarkdown) {
		return nil, nil
	}
	body, err := r.body(ctx, p.RevisionPage)
	return &body, err
}

func (r *revisionPageResolver) Document(ctx context.Context, p *model.PageNode) (map[string]any, error) {
	if p.RevisionPage.Type != store.PageDocument || !p.Wants(model.DocumentFormatDocument) {
		return nil, nil
	}
	body, err := r.body(ctx, p.RevisionPage)
	if err != nil {
		return nil, err
	}
	return document.FromMarkdown(body), nil
}

// body is a page's markdown ("" for an empty page).
func (r *Resolver) body(ctx context.Context, p *store.RevisionPage) (string, error) {
	if p.BodySHA256 == nil {
		return "", nil
	}
	return r.loaders(ctx).PageBody.Load(ctx, orgKey(p.OrganizationID, *p.BodySHA256))()
}

// Editing.

// editContent makes a new revision from the current content of space
// spaceID — or of its change request crID, when not nil — with edit applied
// to a copy of its pages and files, and makes it that content; it returns
// the new revision and its page tree. base, when not nil, is the revision
// the caller based the edit on (baseRevision): checked under the row lock
// against the content's current revision, so of two edits from the same
// base one is made and the other refused (StaleBase).
func (r *Resolver) editContent(ctx context.Context, spaceID string, crID, base *string, edit func(t *store.PageTree, c *store.Content) error) (*store.Revision, *store.PageTree, error) {
	s, err := r.space(ctx, spaceID)
	if err != nil {
		return nil, nil, err
	}
	// SECURITY: editing content needs the edit role on the space.
	if err := r.requireSpaceRole(ctx, s, store.RoleEdit); err != nil {
		return nil, nil, err
	}
	caller, _ := CallerFrom(ctx)
	var rev *store.Revision
	var tree *store.PageTree
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		s, err := store.LockSpace(ctx, tx, s.OrganizationID, spaceID)
		if err != nil {
			return err
		}
		if s.DeletedAt != nil {
			return NotFound("space")
		}
		if s.EditMode == store.EditModeLocked {
			return Conflict("the space is locked: its content cannot be edited (set editMode to live first)")
		}
		from := s.RevisionID
		var cr *store.ChangeRequest
		if crID != nil {
			if cr, err = r.lockedChangeRequest(ctx, tx, s, *crID); err != nil {
				return err
			}
			if cr.Status == store.CRMerged || cr.Status == store.CRArchived {
				return Conflict("change request #%d is %s: its content cannot change", cr.Number, cr.Status)
			}
			from = cr.Revision
		}
		if base != nil && *base != from {
			return StaleBase(*base, from)
		}
		current, err := store.LoadContent(ctx, tx, s.OrganizationID, from)
		if err != nil {
			return err
		}
		content := current.Copy()
		if err := edit(store.NewPageTree(content.Pages), &content); err != nil {
			return err
		}
		if err := store.EnsureBodies(ctx, tx, s.OrganizationID, newBodies(current, content)); err != nil {
			return err
		}
		rev = &store.Revision{ID: store.NewID(), OrganizationID: s.OrganizationID, SpaceID: s.ID, Parents: []string{from}, Type: "edits",
			CreatedBy: &caller.User.ID, CreatedAt: r.now()}
		if err := store.CreateRevision(ctx, tx, rev, content); err != nil {
			return err
		}
		tree = store.NewPageTree(content.Pages)
		if cr != nil {
			cr.Revision, cr.UpdatedAt = rev.ID, r.now()
			if err := store.UpdateChangeRequest(ctx, tx, cr, "revision"); err != nil {
				return err
			}
			if err := r.recordLive(ctx, tx, store.LiveEvent{Type: store.LiveChangeRequestUpdated, OrganizationID: s.OrganizationID,
				SpaceID: &s.ID, ChangeRequestID: &cr.ID, RevisionID: &rev.ID}); err != nil {
				return err
			}
			return store.AddContributor(ctx, tx, cr.OrganizationID, cr.ID, caller.User.ID)
		}
		s.RevisionID, s.UpdatedAt = rev.ID, r.now()
		if err := store.UpdateSpace(ctx, tx, s, "revision_id"); err != nil {
			return err
		}
		// Pages renamed or moved leave redirects from where they were.
		if err := r.recordPageMoves(ctx, tx, s, current.Pages, tree); err != nil {
			return err
		}
		return r.recordLive(ctx, tx, store.LiveEvent{Type: store.LiveContentUpdated, OrganizationID: s.OrganizationID,
			SpaceID: &s.ID, RevisionID: &rev.ID})
	})
	return rev, tree, err
}

// newBodies are the digests of the bodies content shows that before does
// not: those the edit stored.
func newBodies(before, content store.Content) []string {
	old := map[string]bool{}
	for _, p := range before.Pages {
		old[store.StringOf(p.BodySHA256)] = true
	}
	var out []string
	for _, p := range content.Pages {
		if p.BodySHA256 != nil && !old[*p.BodySHA256] {
			out = append(out, *p.BodySHA256)
		}
	}
	return out
}

// pageNode is page id of a freshly made revision, for a mutation's answer.
func pageNode(rev *store.Revision, t *store.PageTree, id string) *model.PageNode {
	return &model.PageNode{RevisionPage: t.Page(id), Revision: rev, Tree: t}
}

func (r *mutationResolver) CreatePage(ctx context.Context, spaceID string, crID *string, input model.CreatePageInput, base *string) (*model.PageNode, error) {
	if err := checkLength("title", input.Title, 1, maxPageTitle); err != nil {
		return nil, err
	}
	typ := store.PageDocument
	if t, _ := input.Type.ValueOK(); t != nil {
		typ = string(*t)
	}
	markdown, err := pageMarkdown(typ, input.Markdown)
	if err != nil {
		return nil, err
	}
	now := r.now()
	page := &store.RevisionPage{ID: store.NewID(), Type: typ, Title: input.Title, CreatedAt: now, UpdatedAt: now}
	p := &patch{}
	setOptional(p, "description", "description", input.Description, &page.Description, length("description", 0, maxPageDescription))
	setOptional(p, "emoji", "emoji", input.Emoji, &page.Emoji, length("emoji", 0, 50))
	setRequired(p, "hidden", "hidden", input.Hidden, &page.Hidden, nil)
	setRequired(p, "noIndex", "no_index", input.NoIndex, &page.NoIndex, nil)
	setRequired(p, "noRobotsIndex", "no_robots_index", input.NoRobotsIndex, &page.NoRobotsIndex, nil)
	var slug *string
	setOptional(p, "slug", "slug", input.Slug, &slug, checkSlug)
	if p.err != nil {
		return nil, p.err
	}
	parent, _ := input.Parent.ValueOK()
	position, _ := input.Position.ValueOK()
	if page.BodySHA256, err = store.SaveSpaceBody(ctx, r.DB, spaceID, markdown); err != nil {
		return nil, err
	}
	rev, t, err := r.editContent(ctx, spaceID, crID, base, func(t *store.PageTree, c *store.Content) error {
		if err := checkParent(t, parent, ""); err != nil {
			return err
		}
		page.ParentID = parent
		if err := setSlug(t, page, slug); err != nil {
			return err
		}
		c.Pages = append(c.Pages, page)
		return placePage(store.NewPageTree(c.Pages), page, position)
	})
	if err != nil {
		return nil, err
	}
	return pageNode(rev, t, page.ID), nil
}

func (r *mutationResolver) UpdatePage(ctx context.Context, spaceID string, crID *string, pageID string, input model.UpdatePageInput, base *string) (*model.PageNode, error) {
	var digest *string
	markdown, markdownSet := input.Markdown.ValueOK()
	if markdownSet {
		if markdown == nil {
			return nil, Invalid("markdown", "must not be null (send an empty string for an empty page)")
		}
		if len(*markdown) > maxPageMarkdown {
			return nil, Invalid("markdown", "must be at most %d bytes", maxPageMarkdown)
		}
		var err error
		if digest, err = store.SaveSpaceBody(ctx, r.DB, spaceID, *markdown); err != nil {
			return nil, err
		}
	}
	rev, t, err := r.editContent(ctx, spaceID, crID, base, func(t *store.PageTree, _ *store.Content) error {
		page := t.Page(pageID)
		if page == nil {
			return NotFound("page")
		}
		p := &patch{}
		setRequired(p, "title", "title", input.Title, &page.Title, length("title", 1, maxPageTitle))
		setOptional(p, "description", "description", input.Description, &page.Description, length("description", 0, maxPageDescription))
		setOptional(p, "emoji", "emoji", input.Emoji, &page.Emoji, length("emoji", 0, 50))
		setRequired(p, "hidden", "hidden", input.Hidden, &page.Hidden, nil)
		setRequired(p, "noIndex", "no_index", input.NoIndex, &page.NoIndex, nil)
		setRequired(p, "noRobotsIndex", "no_robots_index", input.NoRobotsIndex, &page.NoRobotsIndex, nil)
		var slug *string
		setOptional(p, "slug", "slug", input.Slug, &slug, checkSlug)
		if p.err != nil {
			return p.err
		}
		if markdownSet {
			if page.Type != store.PageDocument && *markdown != "" {
				return Invalid("markdown", "a group has no body")
			}
			page.BodySHA256 = digest
		}
		if slug != nil {
			if err := setSlug(t, page, slug); err != nil {
				return err
			}
		}
		page.UpdatedAt = r.now()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return pageNode(rev, t, pageID), nil
}

func (r *mutationResolver) MovePage(ctx context.Context, spaceID string, crID *string, pageID string, input model.MovePageInput, base *string) (*model.PageNode, error) {
	parent, parentSet := input.Parent.ValueOK()
	position, _ := input.Position.ValueOK()
	rev, t, err := r.editContent(ctx, spaceID, crID, base, func(t *store.PageTree, c *store.Content) error {
		page := t.Page(pageID)
		if page == nil {
			return NotFound("page")
		}
		if parentSet {
			if err := checkParent(t, parent, pageID); err != nil {
				return err
			}
			if !sameContainer(page.ParentID, parent) {
				page.ParentID = parent
				// Keep the slug unique among the new siblings.
				if err := setSlug(t, page, nil); err != nil {
					return err
				}
			}
		}
		page.UpdatedAt = r.now()
		return placePage(store.NewPageTree(c.Pages), page, position)
	})
	if err != nil {
		return nil, err
	}
	return pageNode(rev, t, pageID), nil
}

func (r *mutationResolver) DeletePage(ctx context.Context, spaceID string, crID *string, pageID string, base *string) (bool, error) {
	found := false
	_, _, err := r.editContent(ctx, spaceID, crID, base, func(t *store.PageTree, c *store.Content) error {
		if t.Page(pageID) == nil {
			return errNoPage
		}
		found = true
		c.Pages = slices.DeleteFunc(c.Pages, func(p *store.RevisionPage) bool { return t.Within(p.ID, pageID) })
		return nil
	})
	if errors.Is(err, errNoPage) {
		return false, nil // nothing to delete: no new revision either
	}
	return found, err
}

var errNoPage = errors.New("no such page")

// pageMarkdown checks the body given for a new page of type typ.
func pageMarkdown(typ string, in interface{ ValueOK() (*string, bool) }) (string, error) {
	v, _ := in.ValueOK()
	if v == nil {
		return "", nil
	}
	if typ != store.PageDocument && *v != "" {
		return "", Invalid("markdown", "a group has no body")
	}
	if len(*v) > maxPageMarkdown {
		return "", Invalid("markdown", "must be at most %d bytes", maxPageMarkdown)
	}
	return *v, nil
}

func checkSlug(s string) error {
	if len(s) > 100 || !pageSlug.MatchString(s) {
		return Invalid("slug", "must be lower-case letters, digits and single dashes, at most 100 characters")
	}
	return nil
}

// maxPageDepth bounds the nesting of pages, so one query (and the REST
// documents) can read a whole tree.
const maxPageDepth = 8

// checkParent checks parent (nil: the top level) can hold page id ("" for a
// new page): it exists, is not the page or below it, and the page's subtree
// stays within maxPageDepth levels.
func checkParent(t *store.PageTree, parent *string, id string) error {
	if parent == nil {
		return nil
	}
	if t.Page(*parent) == nil {
		return Invalid("parent", "no such page in this space")
	}
	if id != "" && t.Within(*parent, id) {
		return Invalid("parent", "a page cannot move under itself or one of its pages")
	}
	height := 1
	if id != "" {
		height = t.Height(id)
	}
	if t.Depth(*parent)+height > maxPageDepth {
		return Invalid("parent", "pages nest at most %d levels deep", maxPageDepth)
	}
	return nil
}

// setSlug gives page the slug asked for (which siblings must not use), or
// one derived from its title, made unique among its siblings.
func setSlug(t *store.PageTree, page *store.RevisionPage, asked *string) error {
	var taken []string
	for _, sib := range t.Children(page.ParentID) {
		if sib.ID != page.ID {
			taken = append(taken, sib.Slug)
		}
	}
	if asked != nil {
		if slices.Contains(taken, *asked) {
			return Invalid("slug", "%q is the slug of another page here", *asked)
		}
		page.Slug = *asked
		return nil
	}
	page.Slug = uniquePath(slugify(page.Title, "page"), taken)
	return nil
}

// placePage puts page among its siblings at position (default: last) and
// renumbers them. t must include page.
func placePage(t *store.PageTree, page *store.RevisionPage, position *model.PagePosition) error {
	siblings := slices.DeleteFunc(slices.Clone(t.Children(page.ParentID)), func(p *store.RevisionPage) bool { return p.ID == page.ID })
	at := len(siblings)
	if position != nil {
		before, after := position.Before.Value(), position.After.Value()
		var target *string
		switch {
		case before != nil && after != nil:
			return Invalid("position", "give either before or after, not both")
		case before != nil:
			target = before
		case after != nil:
			target = after
		}
		if target != nil {
			i := slices.IndexFunc(siblings, func(p *store.RevisionPage) bool { return p.ID == *target })
			if i < 0 {
				return Invalid("position", "page %s is not a sibling at the destination", *target)
			}
			at = i
			if after != nil {
				at++
			}
		}
	}
	for i, p := range slices.Insert(siblings, at, page) {
		p.Position = i
	}
	return nil
}
