package graph

import (
	"context"
	"slices"

	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Global object identification: `node(id:)` and `nodes(ids:)` find objects
// of every type implementing Node from their ids alone.
//
// Ids carry no type (store.NodeTypes says which table holds each), so a
// lookup is one query for the types of all the ids, then one read per type
// present, whatever the number of ids. Each object then passes its type's
// read rule (authorize.go), as wherever else it is reached: what the caller
// may not read is null, like what does not exist. Both are read the same
// way up to the rule; only the rule's own reads (the caller's access to the
// space or organization) differ.

// maxNodes bounds `nodes`: a page's worth, as lists have.
const maxNodes = 100

// nodeLoader reads the objects of one Node type with these ids: by id, those
// that exist.
type nodeLoader func(ctx context.Context, r *Resolver, ids []string) (map[string]model.Node, error)

// nodeLoaders read each Node type (store.NodeTypeNames) as its other reads
// do: through the request's loaders where it has one, so that what a
// request already read is not read again.
var nodeLoaders = map[string]nodeLoader{
	"Organization":               fromLoader(func(l *Loaders) *loader[*store.Organization] { return &l.Organization }),
	"Space":                      fromLoader(func(l *Loaders) *loader[*store.Space] { return &l.Space }),
	"Site":                       fromLoader(func(l *Loaders) *loader[*store.Site] { return &l.Site }),
	"Team":                       fromRows(func(t *store.Team) string { return t.ID }, asNode[*store.Team]),
	"OrganizationInvite":         fromRows(func(i *store.Invite) string { return i.ID }, asNode[*store.Invite]),
	"Collection":                 fromRows(func(c *store.Collection) string { return c.ID }, asNode[*store.Collection]),
	"Revision":                   fromRows(func(x *store.Revision) string { return x.ID }, asNode[*store.Revision]),
	"ChangeRequest":              fromRows(func(cr *store.ChangeRequest) string { return cr.ID }, asNode[*store.ChangeRequest]),
	"Comment":                    fromRows(func(c *store.Comment) string { return c.ID }, func(c *store.Comment) model.Node { return &model.CommentNode{Comment: c} }),
	"CommentReply":               loadReplyNodes,
	"SiteSectionGroup":           fromRows(func(g *store.SiteSectionGroup) string { return g.ID }, asNode[*store.SiteSectionGroup]),
	"SiteSection":                fromRows(func(s *store.SiteSection) string { return s.ID }, asNode[*store.SiteSection]),
	"SiteSpace":                  fromRows(func(s *store.SiteSpace) string { return s.ID }, asNode[*store.SiteSpace]),
	"IntegrationInstallation":    fromRows(func(i *store.IntegrationInstallation) string { return i.ID }, asNode[*store.IntegrationInstallation]),
	"IntegrationEvent":           fromRows(func(e *store.IntegrationEvent) string { return e.ID }, asNode[*store.IntegrationEvent]),
	"OpenAPISpec":                fromRows(func(s *store.OpenAPISpec) string { return s.ID }, asNode[*store.OpenAPISpec]),
	"Translation":                fromRows(func(t *store.Translation) string { return t.ID }, asNode[*store.Translation]),
	"ConversationIssue":          fromRows(func(i *store.ConversationIssue) string { return i.ID }, asNode[*store.ConversationIssue]),
	"ConversationsIssuesCluster": fromRows(func(c *store.IssuesCluster) string { return c.ID }, asNode[*store.IssuesCluster]),
	"SAMLProvider":               fromRows(func(p *store.SAMLProvider) string { return p.ID }, asNode[*store.SAMLProvider]),
}

func asNode[T any](x T) model.Node { return x }

// fromLoader reads through one of the request's id loaders (a space that
// is deleted is not found there, as everywhere).
func fromLoader[T any](get func(*Loaders) *loader[T]) nodeLoader {
	return func(ctx context.Context, r *Resolver, ids []string) (map[string]model.Node, error) {
		values, errs := get(r.loaders(ctx)).LoadMany(ctx, ids)()
		out := make(map[string]model.Node, len(ids))
		for i, id := range ids {
			switch {
			case errs == nil || errs[i] == nil:
				out[id] = values[i]
			case !isNotFound(errs[i]):
				return nil, errs[i]
			}
		}
		return out, nil
	}
}

// fromRows reads T's rows, each shown as view makes it.
func fromRows[T any](id func(*T) string, view func(*T) model.Node) nodeLoader {
	return func(ctx context.Context, r *Resolver, ids []string) (map[string]model.Node, error) {
		rows, err := store.NodesByIDs[T](ctx, r.DB, ids)
		if err != nil {
			return nil, err
		}
		out := make(map[string]model.Node, len(rows))
		for _, row := range rows {
			out[id(row)] = view(row)
		}
		return out, nil
	}
}

// loadReplyNodes reads replies with the comments they answer (whose space
// decides who reads them).
func loadReplyNodes(ctx context.Context, r *Resolver, ids []string) (map[string]model.Node, error) {
	replies, err := store.NodesByIDs[store.CommentReply](ctx, r.DB, ids)
	if err != nil || len(replies) == 0 {
		return nil, err
	}
	commentIDs := make([]string, len(replies))
	for i, x := range replies {
		commentIDs[i] = x.CommentID
	}
	comments, err := store.NodesByIDs[store.Comment](ctx, r.DB, slices.Compact(slices.Sorted(slices.Values(commentIDs))))
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*store.Comment, len(comments))
	for _, c := range comments {
		byID[c.ID] = c
	}
	out := make(map[string]model.Node, len(replies))
	for _, x := range replies {
		if c := byID[x.CommentID]; c != nil {
			out[x.ID] = &model.ReplyNode{CommentReply: x, Comment: c}
		}
	}
	return out, nil
}

func (r *queryResolver) Node(ctx context.Context, id string) (model.Node, error) {
	nodes, err := r.nodes(ctx, []string{id})
	if err != nil {
		return nil, err
	}
	return nodes[0], nil
}

func (r *queryResolver) Nodes(ctx context.Context, ids []string) ([]model.Node, error) {
	if len(ids) > maxNodes {
		return nil, Invalid("ids", "at most %d ids at a time (%d given)", maxNodes, len(ids))
	}
	return r.nodes(ctx, ids)
}

// nodes finds the objects with these ids that the caller may read, in
// order: nil for the others.
func (r *Resolver) nodes(ctx context.Context, ids []string) ([]model.Node, error) {
	if _, err := CallerFrom(ctx); err != nil {
		return nil, err
	}
	unique := slices.Compact(slices.Sorted(slices.Values(ids)))
	types, err := store.NodeTypes(ctx, r.DB, unique)
	if err != nil {
		return nil, err
	}
	byType := map[string][]string{}
	for _, id := range unique {
		if typ, ok := types[id]; ok {
			byType[typ] = append(byType[typ], id)
		}
	}
	found := make(map[string]model.Node, len(unique))
	for typ, ids := range byType {
		objects, err := nodeLoaders[typ](ctx, r, ids)
		if err != nil {
			return nil, err
		}
		for id, obj := range objects {
			found[id] = obj
		}
	}
	// SECURITY: each object passes its type's read rule; what fails it is
	// answered as what does not exist.
	v := r.viewer(ctx)
	out := make([]model.Node, len(ids))
	for i, id := range ids {
		obj, ok := found[id]
		if !ok {
			continue
		}
		readable, err := v.mayRead(obj)
		if err != nil {
			return nil, err
		}
		if readable {
			out[i] = obj
		}
	}
	return out, nil
}
