package graph

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/internal/document"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Comments on a space's content or on a change request's. Readers of the
// space see them; the comment role posts and replies; a comment's author
// edits it; its author or an editor resolves it; its author or an admin
// deletes it. A page target must exist in the content commented on.

const (
	maxCommentBody = 100_000
	// maxCommentDocument bounds a body given as a document, in bytes of JSON.
	maxCommentDocument = 1 << 20
)

// thread is where comments live: a space's content, or a change request's.
type thread struct {
	space *store.Space
	cr    *store.ChangeRequest // nil: the space's content
}

func (t thread) crID() *string {
	if t.cr == nil {
		return nil
	}
	return &t.cr.ID
}

func (t thread) revision() string {
	if t.cr != nil {
		return t.cr.Revision
	}
	return t.space.RevisionID
}

// threadOf reads the thread of a mutation: the space (which the caller must
// hold at least min on) and, with crRef, its change request.
func (r *Resolver) threadOf(ctx context.Context, spaceID string, crRef *string, min store.MemberRole) (thread, store.MemberRole, error) {
	s, err := r.space(ctx, spaceID)
	if err != nil {
		return thread{}, "", err
	}
	role, err := r.spaceRole(ctx, s)
	if err != nil {
		return thread{}, "", err
	}
	if !role.AtLeast(min) {
		return thread{}, "", Forbidden("this needs the %s role or higher on this space", min)
	}
	t := thread{space: s}
	if crRef != nil {
		if t.cr, err = store.GetChangeRequest(ctx, r.DB, s, *crRef); err != nil {
			return thread{}, "", orNotFound(err, "change request")
		}
	}
	return t, role, nil
}

func (r *spaceResolver) Comment(ctx context.Context, s *store.Space, id string) (*model.CommentNode, error) {
	// SECURITY: a visitor reads what a space publishes, not its discussions.
	if VisitorFrom(ctx) != nil {
		return nil, NotFound("comment")
	}
	return r.comment(ctx, thread{space: s}, id)
}

func (r *spaceResolver) CommentList(ctx context.Context, s *store.Space, page *string, limit *int, _ *int, _ *string, order *model.ListOrder, status *model.CommentStatusFilter, targetPage *string, authors []string) (*model.CommentList, error) {
	if VisitorFrom(ctx) != nil {
		return notForVisitors[*model.CommentNode](), nil
	}
	return r.commentList(ctx, thread{space: s}, page, limit, order, status, targetPage, authors)
}

// The space of a change request shown is loaded already: reading the
// change request was allowed on it (authorize.go).
func (r *changeRequestResolver) Comment(ctx context.Context, cr *store.ChangeRequest, id string) (*model.CommentNode, error) {
	s, err := r.loaders(ctx).Space.Load(ctx, cr.SpaceID)()
	if err != nil {
		return nil, orNotFound(err, "space")
	}
	return r.comment(ctx, thread{space: s, cr: cr}, id)
}

func (r *changeRequestResolver) CommentList(ctx context.Context, cr *store.ChangeRequest, page *string, limit *int, _ *int, _ *string, order *model.ListOrder, status *model.CommentStatusFilter, targetPage *string, authors []string) (*model.CommentList, error) {
	s, err := r.loaders(ctx).Space.Load(ctx, cr.SpaceID)()
	if err != nil {
		return nil, orNotFound(err, "space")
	}
	return r.commentList(ctx, thread{space: s, cr: cr}, page, limit, order, status, targetPage, authors)
}

func (r *Resolver) comment(ctx context.Context, t thread, id string) (*model.CommentNode, error) {
	c, err := store.GetComment(ctx, r.DB, t.space.OrganizationID, t.space.ID, t.crID(), id)
	return &model.CommentNode{Comment: c}, orNotFound(err, "comment")
}

// primeSpace caches a live space just read for the rest of the request
// (Prime keeps a row already loaded, which is as new).
func (r *Resolver) primeSpace(ctx context.Context, s *store.Space) {
	if s.DeletedAt == nil {
		r.loaders(ctx).Space.Prime(ctx, s.ID, s)
	}
}

func (r *Resolver) commentList(ctx context.Context, t thread, page *string, limit *int, order *model.ListOrder, status *model.CommentStatusFilter, targetPage *string, authors []string) (*model.CommentList, error) {
	f := store.CommentFilter{Page: targetPage, Authors: authors, Desc: isDesc(order)}
	if status != nil && *status != model.CommentStatusFilterAll {
		f.Status = string(*status)
	}
	comments, err := paginate(page, limit, listQuery[*store.Comment]{
		read: func(p store.Page) ([]*store.Comment, error) {
			return store.ListComments(ctx, r.DB, t.space.OrganizationID, t.space.ID, t.crID(), f, p)
		},
		key: func(c *store.Comment) store.Keyset { return store.Keyset{Time: c.PostedAt, ID: c.ID} },
		prime: func(comments []*store.Comment) error {
			// Every comment's read rule and permissions ask for its space:
			// the one at hand, read once for the whole page.
			r.primeSpace(ctx, t.space)
			return r.preloadComments(ctx, comments)
		},
	})
	if err != nil {
		return nil, err
	}
	return mapList(comments, func(c *store.Comment) (*model.CommentNode, error) { return &model.CommentNode{Comment: c}, nil })
}

// preloadComments asks at once for what the page's comments show of their
// replies, reactions and people, as selected: one batch of each for the
// whole page. Left to the comments' own resolvers, the batches are what
// the loaders' time window gathers, which a busy machine splits.
func (r *Resolver) preloadComments(ctx context.Context, comments []*store.Comment) error {
	selected := selectedOfItems(ctx)
	if len(comments) == 0 || !(selected["replies"] || selected["repliers"] || selected["reactions"] || selected["postedBy"] || selected["resolvedBy"]) {
		return nil
	}
	l := r.loaders(ctx)
	keys := make([]string, len(comments))
	var people []string
	for i, c := range comments {
		keys[i] = orgKey(c.OrganizationID, c.ID)
		if selected["postedBy"] && c.PostedBy != nil {
			people = append(people, *c.PostedBy)
		}
		if selected["resolvedBy"] && c.ResolvedBy != nil {
			people = append(people, *c.ResolvedBy)
		}
	}
	var replies func() ([][]*store.CommentReply, []error)
	var reactions func() ([][]*store.Reaction, []error)
	if selected["replies"] || selected["repliers"] {
		replies = l.CommentReplies.LoadMany(ctx, keys)
	}
	if selected["reactions"] {
		reactions = l.Reactions.LoadMany(ctx, keys)
	}
	if replies != nil && selected["repliers"] {
		lists, errs := replies()
		if err := firstError(errs); err != nil {
			return err
		}
		for _, list := range lists {
			for _, x := range list {
				if x.PostedBy != nil {
					people = append(people, *x.PostedBy)
				}
			}
		}
	}
	if reactions != nil {
		lists, errs := reactions()
		if err := firstError(errs); err != nil {
			return err
		}
		for _, list := range lists {
			for _, x := range list {
				people = append(people, x.UserID)
			}
		}
	}
	if len(people) > 0 {
		// Queued, not waited for: the comments' resolvers wait.
		l.User.LoadMany(ctx, people)
	}
	return nil
}

// firstError is the first error of a loader's LoadMany, or nil.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkBody checks the body of a comment or a reply: markdown, or a
// document, kept as given (its text stands for it where markdown is read).
// Neither, GitBook's empty document, is refused: a comment says something.
func checkBody(in *model.CommentBodyInput) (markdown string, doc json.RawMessage, err error) {
	if in == nil {
		return "", nil, Invalid("body", "is required")
	}
	md, _ := in.Markdown.ValueOK()
	d, _ := in.Document.ValueOK()
	switch {
	case md != nil && d != nil:
		return "", nil, Invalid("body", `is markdown or a document, not both`)
	case md != nil:
		if err := checkLength("body.markdown", *md, 1, maxCommentBody); err != nil {
			return "", nil, err
		}
		return *md, nil, nil
	case d != nil:
		if len(d) > maxCommentDocument {
			return "", nil, Invalid("body.document", "must be a JSON document of at most %d bytes", maxCommentDocument)
		}
		var m map[string]any
		if err := json.Unmarshal(d, &m); err != nil {
			return "", nil, Invalid("body.document", "must be a JSON document")
		}
		if nodes, _ := m["nodes"].([]any); len(nodes) == 0 {
			return "", nil, Invalid("body.document", "has no blocks: a comment says something")
		}
		text := strings.TrimSpace(document.Text(m))
		if err := checkLength("body.document", text, 0, maxCommentBody); err != nil {
			return "", nil, err
		}
		return text, json.RawMessage(d), nil
	}
	return "", nil, Invalid("body", "%s", EmptyCommentBody)
}

// EmptyCommentBody is why a body with neither markdown nor a document
// (GitBook's empty document) is refused (docs/api-coverage.md lists it).
const EmptyCommentBody = `is empty: a comment says something, in {"markdown": "..."} or {"document": {...}}`

func (r *mutationResolver) PostComment(ctx context.Context, spaceID string, crRef *string, input model.PostCommentInput) (*model.CommentNode, error) {
	// SECURITY: the comment role or higher discusses content.
	t, _, err := r.threadOf(ctx, spaceID, crRef, store.RoleComment)
	if err != nil {
		return nil, err
	}
	body, doc, err := checkBody(input.Body)
	if err != nil {
		return nil, err
	}
	caller, _ := CallerFrom(ctx)
	c := &store.Comment{ID: store.NewID(), SpaceID: t.space.ID, ChangeRequestID: t.crID(), RevisionID: t.revision(),
		Body: body, BodyDocument: doc, PostedBy: &caller.User.ID, PostedAt: r.now(), Status: store.CommentOpen}
	if page, _ := input.Page.ValueOK(); page != nil {
		rev, err := store.GetRevision(ctx, r.DB, t.space.OrganizationID, t.space.ID, t.revision())
		if err != nil {
			return nil, err
		}
		tree, err := r.tree(ctx, rev)
		if err != nil {
			return nil, err
		}
		if tree.Page(*page) == nil {
			return nil, Invalid("page", "no such page in this content")
		}
		c.PageID = page
	}
	if node, _ := input.Node.ValueOK(); node != nil {
		c.NodeID = node
	}
	if cell, _ := input.TableCell.ValueOK(); cell != nil {
		c.TableCell, _ = json.Marshal(map[string]string{"record": cell.Record, "definition": cell.Definition})
	}
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		if err := store.InsertRow(ctx, tx, c); err != nil {
			return err
		}
		return r.recordLive(ctx, tx, store.LiveEvent{Type: store.LiveCommentPosted, OrganizationID: t.space.OrganizationID,
			SpaceID: &t.space.ID, ChangeRequestID: c.ChangeRequestID, CommentID: &c.ID})
	})
	if err != nil {
		return nil, err
	}
	return &model.CommentNode{Comment: c}, nil
}

// reactions reads the added and removed reactions of an update.
func reactions(added, removed interface{ ValueOK() ([]string, bool) }) ([]string, []string, error) {
	a, _ := added.ValueOK()
	d, _ := removed.ValueOK()
	for _, e := range slices.Concat(a, d) {
		if err := checkLength("addedReactions", e, 1, 32); err != nil {
			return nil, nil, err
		}
	}
	return a, d, nil
}

func (r *mutationResolver) UpdateComment(ctx context.Context, spaceID string, crRef *string, id string, input model.UpdateCommentInput) (*model.CommentNode, error) {
	t, role, err := r.threadOf(ctx, spaceID, crRef, store.RoleRead)
	if err != nil {
		return nil, err
	}
	c, err := r.comment(ctx, t, id)
	if err != nil {
		return nil, err
	}
	caller, _ := CallerFrom(ctx)
	author := c.PostedBy != nil && *c.PostedBy == caller.User.ID
	added, removed, err := reactions(input.AddedReactions, input.RemovedReactions)
	if err != nil {
		return nil, err
	}
	var columns []string
	if b, set := input.Body.ValueOK(); set {
		// SECURITY: only the author edits a comment's text.
		if !author {
			return nil, Forbidden("only its author edits a comment")
		}
		if c.Body, c.BodyDocument, err = checkBody(b); err != nil {
			return nil, err
		}
		now := r.now()
		c.EditedAt = &now
		columns = append(columns, "body", "body_document", "edited_at")
	}
	if resolved, set := input.Resolved.ValueOK(); set {
		if resolved == nil {
			return nil, Invalid("resolved", "must be true or false")
		}
		// SECURITY: its author, or an editor, resolves a comment.
		if !author && !role.AtLeast(store.RoleEdit) {
			return nil, Forbidden("only its author or an editor resolves a comment")
		}
		if *resolved {
			now := r.now()
			c.Status, c.ResolvedAt, c.ResolvedBy = store.CommentResolved, &now, &caller.User.ID
		} else {
			c.Status, c.ResolvedAt, c.ResolvedBy = store.CommentOpen, nil, nil
		}
		columns = append(columns, "status", "resolved_at", "resolved_by")
	}
	if len(added)+len(removed) > 0 && !role.AtLeast(store.RoleComment) {
		return nil, Forbidden("reacting needs the comment role or higher")
	}
	if len(columns) > 0 {
		err := store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
			if err := store.UpdateRow(ctx, tx, c.Comment, columns...); err != nil {
				return err
			}
			if resolved, _ := input.Resolved.ValueOK(); resolved == nil || !*resolved {
				return nil
			}
			return r.recordLive(ctx, tx, store.LiveEvent{Type: store.LiveCommentResolved, OrganizationID: t.space.OrganizationID,
				SpaceID: &t.space.ID, ChangeRequestID: c.ChangeRequestID, CommentID: &c.ID})
		})
		if err != nil {
			return nil, err
		}
	}
	return c, store.React(ctx, r.DB, c.OrganizationID, c.ID, caller.User.ID, added, removed, r.now())
}

func (r *mutationResolver) DeleteComment(ctx context.Context, spaceID string, crRef *string, id string) (bool, error) {
	t, role, err := r.threadOf(ctx, spaceID, crRef, store.RoleRead)
	if err != nil {
		return false, err
	}
	c, err := r.comment(ctx, t, id)
	if isNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	caller, _ := CallerFrom(ctx)
	// SECURITY: its author, or an admin, deletes a comment.
	if (c.PostedBy == nil || *c.PostedBy != caller.User.ID) && !role.AtLeast(store.RoleAdmin) {
		return false, Forbidden("only its author or an admin deletes a comment")
	}
	return store.DeleteComment(ctx, r.DB, c.OrganizationID, c.ID)
}

func (r *mutationResolver) PostCommentReply(ctx context.Context, spaceID string, crRef *string, commentID string, input model.PostCommentReplyInput) (*model.ReplyNode, error) {
	// SECURITY: the comment role or higher replies.
	t, _, err := r.threadOf(ctx, spaceID, crRef, store.RoleComment)
	if err != nil {
		return nil, err
	}
	c, err := r.comment(ctx, t, commentID)
	if err != nil {
		return nil, err
	}
	body, doc, err := checkBody(input.Body)
	if err != nil {
		return nil, err
	}
	caller, _ := CallerFrom(ctx)
	reply := &store.CommentReply{ID: store.NewID(), CommentID: c.ID, Body: body, BodyDocument: doc, PostedBy: &caller.User.ID, PostedAt: r.now()}
	if err := store.InsertRow(ctx, r.DB, reply); err != nil {
		return nil, orNotFound(err, "comment") // deleted meanwhile
	}
	return &model.ReplyNode{CommentReply: reply, Comment: c.Comment}, nil
}

// replyOf reads reply id of a comment of the thread.
func (r *Resolver) replyOf(ctx context.Context, t thread, commentID, id string) (*model.ReplyNode, error) {
	c, err := r.comment(ctx, t, commentID)
	if err != nil {
		return nil, err
	}
	replies, err := r.loaders(ctx).CommentReplies.Load(ctx, orgKey(c.OrganizationID, c.ID))()
	if err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(replies, func(x *store.CommentReply) bool { return x.ID == id }); i >= 0 {
		return &model.ReplyNode{CommentReply: replies[i], Comment: c.Comment}, nil
	}
	return nil, NotFound("reply")
}

func (r *mutationResolver) UpdateCommentReply(ctx context.Context, spaceID string, crRef *string, commentID, id string, input model.UpdateCommentReplyInput) (*model.ReplyNode, error) {
	t, role, err := r.threadOf(ctx, spaceID, crRef, store.RoleRead)
	if err != nil {
		return nil, err
	}
	reply, err := r.replyOf(ctx, t, commentID, id)
	if err != nil {
		return nil, err
	}
	caller, _ := CallerFrom(ctx)
	added, removed, err := reactions(input.AddedReactions, input.RemovedReactions)
	if err != nil {
		return nil, err
	}
	if b, set := input.Body.ValueOK(); set {
		// SECURITY: only the author edits a reply.
		if reply.PostedBy == nil || *reply.PostedBy != caller.User.ID {
			return nil, Forbidden("only its author edits a reply")
		}
		if reply.Body, reply.BodyDocument, err = checkBody(b); err != nil {
			return nil, err
		}
		now := r.now()
		reply.EditedAt = &now
		if err := store.UpdateRow(ctx, r.DB, reply.CommentReply, "body", "body_document", "edited_at"); err != nil {
			return nil, err
		}
	}
	if len(added)+len(removed) > 0 && !role.AtLeast(store.RoleComment) {
		return nil, Forbidden("reacting needs the comment role or higher")
	}
	return reply, store.React(ctx, r.DB, reply.OrganizationID, reply.ID, caller.User.ID, added, removed, r.now())
}

func (r *mutationResolver) DeleteCommentReply(ctx context.Context, spaceID string, crRef *string, commentID, id string) (bool, error) {
	t, role, err := r.threadOf(ctx, spaceID, crRef, store.RoleRead)
	if err != nil {
		return false, err
	}
	reply, err := r.replyOf(ctx, t, commentID, id)
	if isNotFound(err) && err.(*Error).Message == NotFound("reply").Message {
		return false, nil
	} else if err != nil {
		return false, err
	}
	caller, _ := CallerFrom(ctx)
	// SECURITY: its author, or an admin, deletes a reply.
	if (reply.PostedBy == nil || *reply.PostedBy != caller.User.ID) && !role.AtLeast(store.RoleAdmin) {
		return false, Forbidden("only its author or an admin deletes a reply")
	}
	return store.DeleteReply(ctx, r.DB, reply.OrganizationID, reply.CommentID, reply.ID)
}

// Fields.

type commentResolver struct{ *Resolver }

var _ generated.CommentResolver = (*commentResolver)(nil)

func (r *Resolver) Comment() generated.CommentResolver { return &commentResolver{r} }

func (r *Resolver) userOrNil(ctx context.Context, id *string) (*store.User, error) {
	if id == nil {
		return nil, nil
	}
	return r.loaders(ctx).User.Load(ctx, *id)()
}

func (r *commentResolver) PostedBy(ctx context.Context, c *model.CommentNode) (*store.User, error) {
	return r.userOrNil(ctx, c.PostedBy)
}

func (r *commentResolver) ResolvedBy(ctx context.Context, c *model.CommentNode) (*store.User, error) {
	return r.userOrNil(ctx, c.ResolvedBy)
}

func (r *commentResolver) Reactions(ctx context.Context, c *model.CommentNode) ([]*model.CommentReaction, error) {
	return r.reactionsOf(ctx, c.OrganizationID, c.ID)
}

// reactionsOf groups a target's reactions by emoji, in the order first used.
func (r *Resolver) reactionsOf(ctx context.Context, orgID, target string) ([]*model.CommentReaction, error) {
	rows, err := r.loaders(ctx).Reactions.Load(ctx, orgKey(orgID, target))()
	if err != nil {
		return nil, err
	}
	out := []*model.CommentReaction{}
	for _, x := range rows {
		i := slices.IndexFunc(out, func(g *model.CommentReaction) bool { return g.Emoji == x.Emoji })
		if i < 0 {
			out = append(out, &model.CommentReaction{Emoji: x.Emoji})
			i = len(out) - 1
		}
		u, err := r.loaders(ctx).User.Load(ctx, x.UserID)()
		if err != nil {
			return nil, err
		}
		out[i].Count++
		out[i].Users = append(out[i].Users, &model.CommentReactionUser{User: u, ReactedAt: x.ReactedAt})
	}
	return out, nil
}

func (r *commentResolver) Replies(ctx context.Context, c *model.CommentNode) (int, error) {
	replies, err := r.loaders(ctx).CommentReplies.Load(ctx, orgKey(c.OrganizationID, c.ID))()
	return len(replies), err
}

func (r *commentResolver) Repliers(ctx context.Context, c *model.CommentNode) ([]*model.CommentReplier, error) {
	replies, err := r.loaders(ctx).CommentReplies.Load(ctx, orgKey(c.OrganizationID, c.ID))()
	if err != nil {
		return nil, err
	}
	out := []*model.CommentReplier{}
	for _, x := range replies {
		if x.PostedBy == nil {
			continue
		}
		i := slices.IndexFunc(out, func(p *model.CommentReplier) bool { return p.User.ID == *x.PostedBy })
		if i < 0 {
			u, err := r.loaders(ctx).User.Load(ctx, *x.PostedBy)()
			if err != nil {
				return nil, err
			}
			out = append(out, &model.CommentReplier{User: u})
			i = len(out) - 1
		}
		out[i].Count++
		out[i].UpdatedAt = laterOf(out[i].UpdatedAt, x.PostedAt)
	}
	return out, nil
}

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// bodyIn renders a body in format (default markdown): a body given as a
// document is answered as given in the document format.
func bodyIn(markdown string, doc json.RawMessage, format *model.DocumentFormat) *model.CommentBody {
	if format != nil && *format == model.DocumentFormatDocument {
		if len(doc) > 0 && string(doc) != "null" {
			var m map[string]any
			if json.Unmarshal(doc, &m) == nil {
				return &model.CommentBody{Document: m}
			}
		}
		return &model.CommentBody{Document: document.FromMarkdown(markdown)}
	}
	return &model.CommentBody{Markdown: &markdown}
}

func (r *commentResolver) Body(_ context.Context, c *model.CommentNode, format *model.DocumentFormat) (*model.CommentBody, error) {
	return bodyIn(c.Body, c.BodyDocument, format), nil
}

func (r *commentResolver) Target(_ context.Context, c *model.CommentNode) (*model.CommentTarget, error) {
	t := &model.CommentTarget{Space: c.SpaceID, Revision: c.RevisionID, ChangeRequest: c.ChangeRequestID}
	if c.PageID != nil {
		t.Page = &model.CommentTargetRef{ID: *c.PageID}
	}
	if c.NodeID != nil {
		t.Node = &model.CommentTargetRef{ID: *c.NodeID}
	}
	if len(c.TableCell) > 0 {
		_ = json.Unmarshal(c.TableCell, &t.TableCell)
	}
	return t, nil
}

// commentPath is the API path of a comment.
func commentPath(c *store.Comment) string {
	base := "/v1/spaces/" + pathEscape(c.SpaceID)
	if c.ChangeRequestID != nil {
		base += "/change-requests/" + pathEscape(*c.ChangeRequestID)
	}
	return base + "/comments/" + pathEscape(c.ID)
}

func (r *commentResolver) Urls(_ context.Context, c *model.CommentNode) (*model.CommentURLs, error) {
	return &model.CommentURLs{Location: r.URLs.API(commentPath(c.Comment))}, nil
}

// commentPermissions is what the caller may do with a comment or reply by
// author, on space spaceID.
// The space comes from the request's loader: a page of comments of one
// space reads it once, not once per comment.
func (r *Resolver) commentPermissions(ctx context.Context, spaceID string, author *string) (*model.CommentPermissions, error) {
	s, err := r.loaders(ctx).Space.Load(ctx, spaceID)()
	if err != nil {
		return nil, orNotFound(err, "space")
	}
	g, err := callerGrantee(ctx, s.OrganizationID)
	if err != nil {
		return nil, err
	}
	role, err := r.spaceRoleOf(ctx, g, s)
	if err != nil {
		return nil, err
	}
	own := author != nil && *author == g.userID
	return &model.CommentPermissions{View: role != "", Edit: own, Reply: role.AtLeast(store.RoleComment),
		Delete: own || role.AtLeast(store.RoleAdmin)}, nil
}

func (r *commentResolver) Permissions(ctx context.Context, c *model.CommentNode) (*model.CommentPermissions, error) {
	return r.commentPermissions(ctx, c.SpaceID, c.PostedBy)
}

func (r *commentResolver) ReplyList(ctx context.Context, c *model.CommentNode, page *string, limit *int, _ *int, _ *string) (*model.CommentReplyList, error) {
	replies, err := r.loaders(ctx).CommentReplies.Load(ctx, orgKey(c.OrganizationID, c.ID))()
	if err != nil {
		return nil, err
	}
	got, err := paginateOrdered(replies, page, limit, func(x *store.CommentReply) string { return x.ID })
	if err != nil {
		return nil, err
	}
	return mapList(got, func(x *store.CommentReply) (*model.ReplyNode, error) {
		return &model.ReplyNode{CommentReply: x, Comment: c.Comment}, nil
	})
}

func (r *commentResolver) Reply(ctx context.Context, c *model.CommentNode, id string) (*model.ReplyNode, error) {
	replies, err := r.loaders(ctx).CommentReplies.Load(ctx, orgKey(c.OrganizationID, c.ID))()
	if err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(replies, func(x *store.CommentReply) bool { return x.ID == id }); i >= 0 {
		return &model.ReplyNode{CommentReply: replies[i], Comment: c.Comment}, nil
	}
	return nil, NotFound("reply")
}

type commentReplyResolver struct{ *Resolver }

var _ generated.CommentReplyResolver = (*commentReplyResolver)(nil)

func (r *Resolver) CommentReply() generated.CommentReplyResolver { return &commentReplyResolver{r} }

func (r *commentReplyResolver) PostedBy(ctx context.Context, x *model.ReplyNode) (*store.User, error) {
	return r.userOrNil(ctx, x.PostedBy)
}

func (r *commentReplyResolver) Reactions(ctx context.Context, x *model.ReplyNode) ([]*model.CommentReaction, error) {
	return r.reactionsOf(ctx, x.OrganizationID, x.ID)
}

func (r *commentReplyResolver) Body(_ context.Context, x *model.ReplyNode, format *model.DocumentFormat) (*model.CommentBody, error) {
	return bodyIn(x.Body, x.BodyDocument, format), nil
}

func (r *commentReplyResolver) Urls(_ context.Context, x *model.ReplyNode) (*model.CommentURLs, error) {
	return &model.CommentURLs{Location: r.URLs.API(commentPath(x.Comment) + "/replies/" + pathEscape(x.ID))}, nil
}

func (r *commentReplyResolver) Permissions(ctx context.Context, x *model.ReplyNode) (*model.CommentPermissions, error) {
	return r.commentPermissions(ctx, x.Comment.SpaceID, x.PostedBy)
}
