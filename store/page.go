package store

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"
)

// Page asks for one page of a list: at most Limit items following After.
// Lists are read with keyset pagination, so page 1,000 costs what page 1 does.
type Page struct {
	Limit int
	After *Keyset
	// Total, when set, asks a list function for the number of rows of the
	// whole list instead of a page: it counts into *Total the rows its
	// filters select (the same filters as its pages: one where-building for
	// both), ignoring Limit and After, and returns no rows. See CountPage.
	Total *int
}

// CountPage is the Page that asks a list function for its total, and the
// total once the function returned. A list function that does not count
// leaves it unset: the total is then an error, never a silent 0.
func CountPage() (Page, func() (int, error)) {
	n := -1
	return Page{Total: &n}, func() (int, error) {
		if n < 0 {
			return 0, errors.New("store: this list function does not count its rows (Page.Total)")
		}
		return n, nil
	}
}

// counting reports whether p asks for the total rather than a page.
func (p Page) counting() bool { return p.Total != nil }

// scan reads into q's model the page q selects (ordered and limited by
// byCreation, byPosition, byTime or bySeq), or, when p counts, the number
// of rows q selects into *p.Total: bun's Count keeps q's joins and
// conditions and drops its columns, order and limit.
func (p Page) scan(ctx context.Context, q *bun.SelectQuery) error {
	if !p.counting() {
		return translate(q.Scan(ctx))
	}
	n, err := q.Count(ctx)
	if err != nil {
		return translate(err)
	}
	*p.Total = int(n)
	return nil
}

// none is the answer of a list that is known to be empty without a query
// (no rows to scan; a total of 0 when p counts).
func (p Page) none() error {
	if p.counting() {
		*p.Total = 0
	}
	return nil
}

// Keyset is the sort key of the last item of a page. Lists ordered by creation
// use Time, lists ordered by position use Pos; ID breaks ties so the order is total.
type Keyset struct {
	Time time.Time `json:"t,omitzero"`
	Pos  int       `json:"p,omitempty"`
	ID   string    `json:"i"`
}

// byCreation orders q by (created_at, id) of table alias t and applies p,
// fetching one row more than asked so the caller knows whether a next page exists.
func (p Page) byCreation(q *bun.SelectQuery, t string) *bun.SelectQuery {
	if p.counting() {
		return q
	}
	if p.After != nil {
		q = q.Where("(?.created_at, ?.id) > (?, ?)", bun.Ident(t), bun.Ident(t), p.After.Time, p.After.ID)
	}
	return q.OrderExpr("?.created_at, ?.id", bun.Ident(t), bun.Ident(t)).Limit(int64(p.Limit) + 1)
}

// byPosition is byCreation for lists ordered by position.
func (p Page) byPosition(q *bun.SelectQuery, t string) *bun.SelectQuery {
	if p.counting() {
		return q
	}
	if p.After != nil {
		q = q.Where("(?.position, ?.id) > (?, ?)", bun.Ident(t), bun.Ident(t), p.After.Pos, p.After.ID)
	}
	return q.OrderExpr("?.position, ?.id", bun.Ident(t), bun.Ident(t)).Limit(int64(p.Limit) + 1)
}

// byTime orders q by (col, idCol) — ascending, or descending with desc — and
// applies p, fetching one row more than asked. col must be non-null in every
// row listed.
func (p Page) byTime(q *bun.SelectQuery, col, idCol string, desc bool) *bun.SelectQuery {
	if p.counting() {
		return q
	}
	cmp, dir := ">", "ASC"
	if desc {
		cmp, dir = "<", "DESC"
	}
	if p.After != nil {
		q = q.Where("(?, ?) "+cmp+" (?, ?)", bun.Safe(col), bun.Safe(idCol), p.After.Time, p.After.ID)
	}
	return q.OrderExpr("? "+dir+", ? "+dir, bun.Safe(col), bun.Safe(idCol)).Limit(int64(p.Limit) + 1)
}
