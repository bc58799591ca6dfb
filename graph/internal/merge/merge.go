// Package merge three-way merges the content of a space: two descendants
// of a base revision (a change request and main) become one. The page tree
// merges by page id, field by field (a page moved on one side and edited on
// the other keeps both); bodies merge by lines (diff3); files merge by id.
// Changes on both sides to the same field or the same lines, a page deleted
// on one side and changed on the other, and a page added under one deleted
// elsewhere are conflicts, named by page (ConflictError).
package merge

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/docsapi/docsapi/store"
)

// Result is the outcome of a merge of pages without conflicts.
type Result struct {
	Pages []*store.RevisionPage
	// Bodies holds, by page id, the merged markdown of the pages whose body
	// was merged from both sides: their BodySHA256 is to be set once saved.
	Bodies map[string]string
}

// ConflictError is a merge refused because changes on both sides clash.
type ConflictError struct {
	// Pages lists the ids of the pages in conflict, sorted.
	Pages []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("conflicting changes to %d page(s): %s", len(e.Pages), strings.Join(e.Pages, ", "))
}

// Pages merges the pages of ours and theirs, two descendants of base; body
// gives a page's markdown. The error is a *ConflictError when changes clash.
func Pages(base, ours, theirs []*store.RevisionPage, body func(*store.RevisionPage) string) (Result, error) {
	index := func(pages []*store.RevisionPage) map[string]*store.RevisionPage {
		m := make(map[string]*store.RevisionPage, len(pages))
		for _, p := range pages {
			m[p.ID] = p
		}
		return m
	}
	b, o, t := index(base), index(ours), index(theirs)
	ids := map[string]bool{}
	for _, m := range []map[string]*store.RevisionPage{b, o, t} {
		for id := range m {
			ids[id] = true
		}
	}
	res := Result{Bodies: map[string]string{}}
	conflict := map[string]bool{}
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		bp, op, tp := b[id], o[id], t[id]
		switch {
		case bp == nil && op != nil && tp != nil: // added on both sides (same id): only if identical
			if !samePage(op, tp, body) {
				conflict[id] = true
			}
			res.Pages = append(res.Pages, clonePage(op))
		case bp == nil && op != nil:
			res.Pages = append(res.Pages, clonePage(op))
		case bp == nil && tp != nil:
			res.Pages = append(res.Pages, clonePage(tp))
		case op == nil && tp == nil: // deleted on both sides
		case op == nil: // deleted in ours: a conflict if theirs changed it
			if !samePage(bp, tp, body) {
				conflict[id] = true
			}
		case tp == nil:
			if !samePage(bp, op, body) {
				conflict[id] = true
			}
		default:
			merged, ok := mergePage(bp, op, tp)
			if !ok {
				conflict[id] = true
			}
			bb, ob, tb := body(bp), body(op), body(tp)
			switch {
			case ob == bb:
				merged.BodySHA256 = tp.BodySHA256
			case tb == bb || tb == ob:
				merged.BodySHA256 = op.BodySHA256
			default:
				text, ok := mergeLines(bb, ob, tb)
				if !ok {
					conflict[id] = true
				}
				res.Bodies[id] = text
			}
			res.Pages = append(res.Pages, merged)
		}
	}
	// Every parent must survive, and no page may end up below itself.
	kept := map[string]*store.RevisionPage{}
	for _, p := range res.Pages {
		kept[p.ID] = p
	}
	for _, p := range res.Pages {
		if p.ParentID != nil && kept[*p.ParentID] == nil {
			conflict[*p.ParentID] = true
			conflict[p.ID] = true
		}
		seen := 0
		for q := p; q != nil && q.ParentID != nil; q = kept[*q.ParentID] {
			if seen++; seen > len(res.Pages) || *q.ParentID == p.ID {
				conflict[p.ID] = true
				break
			}
		}
	}
	if len(conflict) > 0 {
		return Result{}, &ConflictError{Pages: slices.Sorted(maps.Keys(conflict))}
	}
	fixSlugs(res.Pages)
	return res, nil
}

// Files merges the files of ours and theirs, two descendants of base. Files
// never change once uploaded, so a merge only adds the files either side
// added and drops those either side deleted.
func Files(base, ours, theirs []*store.RevisionFile) []*store.RevisionFile {
	has := func(files []*store.RevisionFile, id string) bool {
		return slices.ContainsFunc(files, func(f *store.RevisionFile) bool { return f.ID == id })
	}
	var out []*store.RevisionFile
	for _, side := range [][]*store.RevisionFile{ours, theirs} {
		for _, f := range side {
			inBase := has(base, f.ID)
			deleted := inBase && (!has(ours, f.ID) || !has(theirs, f.ID))
			if !deleted && !has(out, f.ID) {
				c := *f
				out = append(out, &c)
			}
		}
	}
	return out
}

// mergePage merges the tree attributes of a page changed on both sides;
// false when one attribute was changed differently on both.
func mergePage(b, o, t *store.RevisionPage) (*store.RevisionPage, bool) {
	m := clonePage(o)
	ok := true
	pick := func(base, ours, theirs string) string {
		v, good := merge3(base, ours, theirs)
		ok = ok && good
		return v
	}
	m.ParentID = store.NullString(pick(store.StringOf(b.ParentID), store.StringOf(o.ParentID), store.StringOf(t.ParentID)))
	m.Type = pick(b.Type, o.Type, t.Type)
	m.Title = pick(b.Title, o.Title, t.Title)
	m.Slug = pick(b.Slug, o.Slug, t.Slug)
	m.Emoji = store.NullString(pick(store.StringOf(b.Emoji), store.StringOf(o.Emoji), store.StringOf(t.Emoji)))
	m.Description = store.NullString(pick(store.StringOf(b.Description), store.StringOf(o.Description), store.StringOf(t.Description)))
	for _, flag := range pageFlags {
		v, good := merge3(*flag(b), *flag(o), *flag(t))
		ok = ok && good
		*flag(m) = v
	}
	// Positions only order siblings: theirs wins a disagreement.
	m.Position, _ = merge3(b.Position, o.Position, t.Position)
	if m.Position != o.Position && m.Position != t.Position {
		m.Position = t.Position
	}
	m.UpdatedAt = maxTime(o, t)
	return m, ok
}

// merge3 merges one value changed on up to two sides; false when both sides
// changed it differently (ours is kept then).
func merge3[T comparable](base, ours, theirs T) (T, bool) {
	switch {
	case ours == theirs, theirs == base:
		return ours, true
	case ours == base:
		return theirs, true
	}
	return ours, false
}

// mergeLines merges two edits of text by lines (diff3); false when both
// sides changed the same lines differently (the text is then ours).
func mergeLines(base, ours, theirs string) (string, bool) {
	o, a, b := splitLines(base), splitLines(ours), splitLines(theirs)
	ma, mb := lineMatches(o, a), lineMatches(o, b)
	var out []string
	lo, la, lb := 0, 0, 0
	for lo < len(o) || la < len(a) || lb < len(b) {
		// A run of base lines kept in place on both sides.
		k := 0
		for lo+k < len(o) && ma[lo+k] == la+k && mb[lo+k] == lb+k {
			k++
		}
		if k > 0 {
			out = append(out, o[lo:lo+k]...)
			lo, la, lb = lo+k, la+k, lb+k
			continue
		}
		// Up to the next base line both sides still have.
		i := lo
		for i < len(o) && (ma[i] < la || mb[i] < lb) {
			i++
		}
		ea, eb := len(a), len(b)
		if i < len(o) {
			ea, eb = ma[i], mb[i]
		}
		oc, ac, bc := o[lo:i], a[la:ea], b[lb:eb]
		switch {
		case slices.Equal(ac, oc):
			out = append(out, bc...)
		case slices.Equal(bc, oc), slices.Equal(ac, bc):
			out = append(out, ac...)
		default:
			return ours, false
		}
		lo, la, lb = i, ea, eb
	}
	return strings.Join(out, "\n"), true
}

// lineMatches maps each line of base to the line of other it matches in a
// longest matching alignment, or -1.
func lineMatches(base, other []string) []int {
	m := make([]int, len(base))
	for i := range m {
		m[i] = -1
	}
	matcher := difflib.NewMatcherWithJunk(base, other, false, nil)
	for _, blk := range matcher.GetMatchingBlocks() {
		for k := range blk.Size {
			m[blk.A+k] = blk.B + k
		}
	}
	return m
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// fixSlugs makes slugs unique among siblings again (pages added on both
// sides may share one): later pages, by id, get a suffix.
func fixSlugs(pages []*store.RevisionPage) {
	slices.SortFunc(pages, func(a, b *store.RevisionPage) int { return cmp.Compare(a.ID, b.ID) })
	taken := map[string][]string{}
	for _, p := range pages {
		key := store.StringOf(p.ParentID)
		p.Slug = uniqueSlug(p.Slug, taken[key])
		taken[key] = append(taken[key], p.Slug)
	}
}

// pageFlags are a page's yes/no attributes, merged alike.
var pageFlags = []func(*store.RevisionPage) *bool{
	func(p *store.RevisionPage) *bool { return &p.Hidden },
	func(p *store.RevisionPage) *bool { return &p.NoIndex },
	func(p *store.RevisionPage) *bool { return &p.NoRobotsIndex },
}

// samePage tells whether two versions of a page are the same in every
// attribute and body (positions aside: they only order siblings).
func samePage(a, b *store.RevisionPage, body func(*store.RevisionPage) string) bool {
	return store.StringOf(a.ParentID) == store.StringOf(b.ParentID) && a.Type == b.Type && a.Title == b.Title && a.Slug == b.Slug &&
		store.StringOf(a.Emoji) == store.StringOf(b.Emoji) && store.StringOf(a.Description) == store.StringOf(b.Description) &&
		a.Hidden == b.Hidden && a.NoIndex == b.NoIndex && a.NoRobotsIndex == b.NoRobotsIndex &&
		body(a) == body(b)
}

// uniqueSlug returns slug, or slug-2, slug-3... whichever is not taken.
func uniqueSlug(slug string, taken []string) string {
	candidate := slug
	for n := 2; slices.Contains(taken, candidate); n++ {
		candidate = slug + "-" + strconv.Itoa(n)
	}
	return candidate
}

func clonePage(p *store.RevisionPage) *store.RevisionPage {
	c := *p
	return &c
}

func maxTime(a, b *store.RevisionPage) time.Time {
	if a.UpdatedAt.After(b.UpdatedAt) {
		return a.UpdatedAt
	}
	return b.UpdatedAt
}
