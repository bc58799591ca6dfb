package graph

import (
	"fmt"
	"slices"
	"testing"

	"github.com/docsapi/docsapi/store"
)

// A list through paginate, from a stand-in for a store call: pages follow
// each other by their cursors, rows the caller may not see are read past,
// priming sees the page's items only, and mapList keeps the cursors.
func TestPaginate(t *testing.T) {
	var rows []string
	for i := range 7 {
		rows = append(rows, fmt.Sprintf("r%d", i))
	}
	reads := 0
	// As the store's list functions: the rows after p.After, p.Limit and
	// one more when more exist.
	read := func(p store.Page) ([]string, error) {
		reads++
		start := 0
		if p.After != nil {
			start = slices.Index(rows, p.After.ID) + 1
		}
		return rows[start:min(len(rows), start+p.Limit+1)], nil
	}
	key := func(r string) store.Keyset { return store.Keyset{ID: r} }
	hidden := func(r string) bool { return r == "r1" || r == "r2" }
	var primed []string
	q := listQuery[string]{
		read:    read,
		key:     key,
		visible: func(r string) (bool, error) { return !hidden(r), nil },
		prime:   func(items []string) error { primed = append(primed, items...); return nil },
	}
	limit := 2
	var got []string
	var page *string
	for range len(rows) {
		list, err := paginate(page, &limit, q)
		if err != nil {
			t.Fatal(err)
		}
		if list.Count() > limit {
			t.Fatalf("a page of %d items for a limit of %d", list.Count(), limit)
		}
		got = append(got, list.Items...)
		views, err := mapList(list, func(r string) (int, error) { return len(r), nil })
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range views.Edges() {
			if e.Cursor != list.Edges()[i].Cursor {
				t.Fatalf("mapList changed the cursor of item %d", i)
			}
		}
		if list.Next == nil {
			break
		}
		page = &list.Next.Page
	}
	if want := []string{"r0", "r3", "r4", "r5", "r6"}; !slices.Equal(got, want) || !slices.Equal(primed, want) {
		t.Fatalf("listed %v, primed %v; want %v", got, primed, want)
	}
	if reads < 3 {
		t.Fatalf("%d reads: the page after r0 needs a read past the hidden rows", reads)
	}

	// Bad page arguments are refused before anything is read.
	before := reads
	bad, tooMany := "not a cursor", MaxPageSize+1
	if _, err := paginate(&bad, nil, q); err == nil || reads != before {
		t.Fatalf("a bad cursor: err %v, %d reads", err, reads-before)
	}
	if _, err := paginate(nil, &tooMany, q); err == nil || reads != before {
		t.Fatalf("a limit over %d: err %v, %d reads", MaxPageSize, err, reads-before)
	}
}
