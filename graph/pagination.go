package graph

import (
	"context"
	"encoding/base64"
	"encoding/json"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/docsapi/docsapi/graph/engine"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Lists are keyset-paginated: `page` is an opaque cursor naming the last item
// of the previous page, so every page costs the same and no item is skipped
// or repeated while others are added.
//
// Every list is also a Relay connection: its `edges` are its items with
// their cursors (the cursor of an item is the `page` of the list after it),
// and `first`/`after` are the Relay names of `limit`/`page` (relayPaging).
const (
	DefaultPageSize = 50
	MaxPageSize     = 1000
)

// pageArgs validates the `page` and `limit` arguments of a list.
func pageArgs(page *string, limit *int) (store.Page, error) {
	p := store.Page{Limit: DefaultPageSize}
	if limit != nil {
		switch {
		case *limit < 0 || *limit > MaxPageSize:
			return p, Invalid("limit", "must be between 0 and %d", MaxPageSize)
		case *limit > 0:
			p.Limit = *limit
		}
	}
	if page != nil && *page != "" {
		raw, err := base64.RawURLEncoding.DecodeString(*page)
		var k store.Keyset
		if err != nil || json.Unmarshal(raw, &k) != nil || !validKeyset(k) {
			return p, Invalid("page", "is not a page identifier returned by this list")
		}
		p.After = &k
	}
	return p, nil
}

// validKeyset tells whether k could be a key this server wrote: a cursor
// is the client's to send, and its key ends up in SQL, where a NUL or a
// time before year 1 is an error of the database's, not a page.
func validKeyset(k store.Keyset) bool {
	return k.ID != "" && engine.TextProblem(k.ID) == "" && (k.Time.IsZero() || k.Time.UTC().Year() >= 1)
}

// pageOf cuts the rows a store list returned (one more than asked, when more
// exist) down to the page and says where the next one starts. Each item's
// cursor is made only if the edges are asked for.
func pageOf[T any](rows []T, p store.Page, key func(T) store.Keyset) (items []T, next *model.ListNext, info *model.PageInfo) {
	cursor := func(x T) string {
		k, _ := json.Marshal(key(x))
		return base64.RawURLEncoding.EncodeToString(k)
	}
	// hasPreviousPage says whether a cursor was given, as Relay's
	// specification allows, rather than looking back for items before it.
	info = &model.PageInfo{HasPreviousPage: p.After != nil}
	if len(rows) > p.Limit {
		rows = rows[:p.Limit]
		next = &model.ListNext{Page: cursor(rows[len(rows)-1])}
		info.HasNextPage = true
	}
	if len(rows) > 0 {
		start, end := cursor(rows[0]), cursor(rows[len(rows)-1])
		info.StartCursor, info.EndCursor = &start, &end
		info.CursorOf = func(i int) string { return cursor(rows[i]) }
	}
	if rows == nil {
		rows = []T{}
	}
	return rows, next, info
}

// relayPaging is the field middleware that lets every list take Relay's
// `first` and `after`: it hands them to the resolver as `limit` and `page`,
// which they name (so resolvers read only those, and ignore the Relay
// parameters gqlgen gives them). Both names of one argument with different
// values are a BAD_REQUEST: which one was meant is unknown.
type relayPaging struct {
	// lists are the fields taking both names.
	lists map[*ast.FieldDefinition]bool
}

var _ interface {
	graphql.HandlerExtension
	graphql.FieldInterceptor
} = (*relayPaging)(nil)

func newRelayPaging(schema *ast.Schema) *relayPaging {
	rp := &relayPaging{lists: map[*ast.FieldDefinition]bool{}}
	for _, t := range schema.Types {
		for _, f := range t.Fields {
			a := f.Arguments
			if a.ForName("first") != nil && a.ForName("after") != nil && a.ForName("limit") != nil && a.ForName("page") != nil {
				rp.lists[f] = true
			}
		}
	}
	return rp
}

func (*relayPaging) ExtensionName() string                   { return "RelayPaging" }
func (*relayPaging) Validate(graphql.ExecutableSchema) error { return nil }

func (rp *relayPaging) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !rp.lists[fc.Field.Definition] {
		return next(ctx)
	}
	// The arguments are parsed for each execution of the field: this map
	// is the resolver's own.
	first, _ := fc.Args["first"].(*int)
	limit, _ := fc.Args["limit"].(*int)
	after, _ := fc.Args["after"].(*string)
	page, _ := fc.Args["page"].(*string)
	if first != nil {
		if limit != nil && *limit != *first {
			return nil, BadRequest("first and limit are two names of the page size: give one of them (or the same value)")
		}
		fc.Args["limit"] = first
	}
	if after != nil {
		if page != nil && *page != *after {
			return nil, BadRequest("after and page are two names of the cursor: give one of them (or the same value)")
		}
		fc.Args["page"] = after
	}
	return next(ctx)
}
