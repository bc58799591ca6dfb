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

// listQuery is how a resolver describes one of its lists to paginate: where
// its rows come from, how they are ordered, and what the page needs before
// it is answered. Only read and key are required.
type listQuery[T any] struct {
	// read reads the rows after p.After in the list's order, p.Limit of
	// them and one more when more exist (the store's list functions do so),
	// so that paginate knows whether there is a next page.
	read func(p store.Page) ([]T, error)
	// key is the sort key of a row, which its cursor carries: the columns
	// the store orders the list by, then the row's ID.
	key func(T) store.Keyset
	// visible, for lists whose rows the caller may not all see, keeps those
	// they may: paginate then reads on until the page is full (pageVisible).
	visible func(T) (bool, error)
	// prime is given the page's items (never the look-ahead row) before the
	// page is answered: to prime loaders with them, or to read what every
	// item will be asked for in one batch for the page rather than one
	// query per item.
	prime func(items []T) error
	// total is the list's totalCount, for the lists that have one
	// (total_count.go).
	total func(context.Context) (int, error)
}

// paginate answers a list: it checks the `page` and `limit` arguments,
// reads the page, primes what the page needs and makes the list's page
// (items, next cursor, page info, total). Every list of the schema is
// answered by it, as entgql's Paginate answers every list of ent's GraphQL
// example, so that cursors, limits and their errors behave the same on every
// list, and a resolver says only what is its own: its store call, its
// order and its priming. (A list its caller may read nothing of is answered
// empty without it, its page unchecked: notForVisitors.) The page's `count`
// is the number of its items (model.List.Count), whatever the list.
//
// The page arguments are checked before the store is read: a bad cursor or
// limit costs no query. A resolver checks its other arguments before
// calling paginate.
func paginate[T any](page *string, limit *int, q listQuery[T]) (*model.List[T], error) {
	p, err := pageArgs(page, limit)
	if err != nil {
		return nil, err
	}
	var rows []T
	if q.visible != nil {
		rows, err = pageVisible(p, q.read, q.visible, q.key)
	} else {
		rows, err = q.read(p)
	}
	if err != nil {
		return nil, err
	}
	items, next, info := pageOf(rows, p, q.key)
	if q.prime != nil {
		if err := q.prime(items); err != nil {
			return nil, err
		}
	}
	return &model.List[T]{Items: items, Next: next, PageInfo: info, Total: q.total}, nil
}

// mapList is the page l with each item made into the schema's view of it
// (a grant into a user's or team's permission, a comment into its node):
// the same page, cursors and total, item for item.
func mapList[T, V any](l *model.List[T], view func(T) (V, error)) (*model.List[V], error) {
	items := make([]V, len(l.Items))
	for i, x := range l.Items {
		v, err := view(x)
		if err != nil {
			return nil, err
		}
		items[i] = v
	}
	return &model.List[V]{Items: items, Next: l.Next, PageInfo: l.PageInfo, Total: l.Total}, nil
}

// paginateOrdered answers a list held whole in memory, in its order (a
// site's structure, search results, links, a revision's files: each
// bounded, and read whole to answer any page, so its total is its length).
// The cursor names the last item and its index: a page continues after
// that item, or from its index if it was removed meanwhile, so no item is
// repeated or skipped by the move of another.
func paginateOrdered[T any](all []T, page *string, limit *int, id func(T) string) (*model.List[T], error) {
	index := make(map[string]int, len(all))
	for i, x := range all {
		index[id(x)] = i
	}
	return paginate(page, limit, listQuery[T]{
		read: func(p store.Page) ([]T, error) {
			start := 0
			if p.After != nil {
				if i, ok := index[p.After.ID]; ok {
					start = i + 1
				} else if pos := p.After.Pos; pos >= 0 && pos < len(all) {
					// The cursor's position is the client's: one out of the
					// list (or at math.MaxInt, where +1 overflows) is no index.
					start = pos + 1
				} else if pos >= len(all) {
					start = len(all)
				}
			}
			return all[start:min(len(all), start+p.Limit+1)], nil
		},
		key:   func(x T) store.Keyset { return store.Keyset{Pos: index[id(x)], ID: id(x)} },
		total: totalIs(len(all)),
	})
}

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

// pageOf (paginate's) cuts the rows a store list returned (one more than asked, when more
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

// pageVisible reads a page of a list whose rows the reader may not all see:
// it fetches batches of the underlying list until it has one more visible
// row than asked (or the list ends), so keyset pagination stays exact.
// Every row fetched is looked at, the store's look-ahead row included: when
// the reader sees the whole first batch, a page costs one query.
func pageVisible[T any](p store.Page, fetch func(store.Page) ([]T, error), visible func(T) (bool, error), key func(T) store.Keyset) ([]T, error) {
	var out []T
	q := p
	for {
		rows, err := fetch(q)
		if err != nil {
			return nil, err
		}
		for _, row := range rows {
			ok, err := visible(row)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, row)
				if len(out) > p.Limit {
					return out, nil
				}
			}
		}
		if len(rows) <= q.Limit {
			return out, nil
		}
		k := key(rows[len(rows)-1])
		q.After = &k
	}
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
