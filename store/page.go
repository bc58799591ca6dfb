package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Page asks for one page of a list: at most Limit items following After.
// Lists are read with keyset pagination, so page 1,000 costs what page 1 does.
type Page struct {
	Limit int
	After *Keyset
}

// scan reads into q's model the page q selects (ordered and limited by
// byCreation, byPosition, byTime or bySeq). No list function counts its
// rows: a list's `count` is the length of its page (the specification,
// 1.2), and totals are kept by the database (content_counts.go).
func (p Page) scan(ctx context.Context, q *bun.SelectQuery) error {
	return translate(q.Scan(ctx))
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
	if p.After != nil {
		q = q.Where("(?.created_at, ?.id) > (?, ?)", bun.Ident(t), bun.Ident(t), p.After.Time, p.After.ID)
	}
	return q.OrderExpr("?.created_at, ?.id", bun.Ident(t), bun.Ident(t)).Limit(int64(p.Limit) + 1)
}

// byPosition is byCreation for lists ordered by position.
func (p Page) byPosition(q *bun.SelectQuery, t string) *bun.SelectQuery {
	if p.After != nil {
		q = q.Where("(?.position, ?.id) > (?, ?)", bun.Ident(t), bun.Ident(t), p.After.Pos, p.After.ID)
	}
	return q.OrderExpr("?.position, ?.id", bun.Ident(t), bun.Ident(t)).Limit(int64(p.Limit) + 1)
}

// byTime orders q by (col, idCol) — ascending, or descending with desc — and
// applies p, fetching one row more than asked. col must be non-null in every
// row listed.
func (p Page) byTime(q *bun.SelectQuery, col, idCol string, desc bool) *bun.SelectQuery {
	cmp, dir := ">", "ASC"
	if desc {
		cmp, dir = "<", "DESC"
	}
	if p.After != nil {
		q = q.Where("(?, ?) "+cmp+" (?, ?)", bun.Safe(col), bun.Safe(idCol), p.After.Time, p.After.ID)
	}
	return q.OrderExpr("? "+dir+", ? "+dir, bun.Safe(col), bun.Safe(idCol)).Limit(int64(p.Limit) + 1)
}
