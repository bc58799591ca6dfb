package wholeserver_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// A list's totalCount tells the number of items of the whole list: were it
// counted past what the caller may read, it would tell of objects no marker
// can show (how many private spaces a collection holds). So the walk
// checks the totals it met against the lists themselves: the first live
// paths (listsPerField) that end at each list field with a totalCount are
// queried again, their end with a page
// large enough for the whole list, and the list's count (the items the
// caller got) must equal its totalCount, for the owner, the reader and the
// other tenant alike. The paths above the end keep the walk's pages, so
// each total is checked for lists the walk saw.

// totalsPage is the page size of the lists checked: larger than any list of
// the fixture.
const totalsPage = 100

// listsPerField is how many paths to each list field (Type.field, with its
// arguments) checkTotals checks: the walk meets a list by hundreds of
// paths (a space's change requests below each of its parents), and the
// first it meets, the shortest, each reach the list from another object.
const listsPerField = 3

// keepLists notes the paths of live that end at a list with a totalCount,
// the first listsPerField of each list field.
func (w *walker) keepLists(live []*walkPath) {
	if w.listsOf == nil {
		w.listsOf = map[string]int{}
	}
	for _, p := range live {
		last := p.last()
		field := last.parent + "." + last.field + last.args
		if w.listsOf[field] >= listsPerField {
			continue
		}
		for _, typ := range w.schema.concrete(last.typ) {
			if slices.ContainsFunc(typ.Fields, func(f introField) bool { return f.Name == "totalCount" }) {
				w.lists = append(w.lists, p)
				w.listsOf[field]++
				break
			}
		}
	}
}

// checkTotals queries each list kept by keepLists whole and fails the test
// when a list's count differs from its totalCount.
func (w *walker) checkTotals() {
	w.t.Helper()
	texts := map[*walkPath]string{}
	var paths []*walkPath
	for _, p := range w.lists {
		last := p.last()
		if !strings.Contains(last.args, "limit: 5") {
			w.t.Fatalf("%s: a list walked without limit: 5 (%s)", p, last.args)
		}
		last.args = strings.Replace(last.args, "limit: 5", fmt.Sprintf("limit: %d", totalsPage), 1)
		whole := &walkPath{steps: append(p.steps[:len(p.steps)-1:len(p.steps)-1], last)}
		texts[whole] = whole.chain("{ count totalCount pageInfo { hasNextPage } }")
		paths = append(paths, whole)
	}
	var mu sync.Mutex
	checked, tooCostly := 0, 0
	var wrong []string
	// check queries paths under aliases of their own in one request, and
	// one by one when the request is refused as a whole.
	var check func(batch []*walkPath) struct{}
	check = func(batch []*walkPath) struct{} {
		var b strings.Builder
		b.WriteString("{\n")
		for i, p := range batch {
			fmt.Fprintf(&b, "a%d: %s\n", i, texts[p])
		}
		b.WriteString("}")
		data, _, ok := w.runBatch(b.String(), nil)
		switch {
		case !ok:
			return struct{}{} // a failure of the walk, which it reports
		case data == nil && len(batch) > 1:
			for _, p := range batch {
				check([]*walkPath{p})
			}
			return struct{}{}
		}
		mu.Lock()
		defer mu.Unlock()
		if data == nil {
			// Refused: a list of lists of lists past the complexity
			// limit, which ran nothing.
			tooCostly++
			return struct{}{}
		}
		for i, p := range batch {
			for _, v := range ends(data[fmt.Sprintf("a%d", i)], p.steps[1:]) {
				list, _ := v.(map[string]any)
				if list == nil {
					continue
				}
				count, total := list["count"], list["totalCount"]
				info, _ := list["pageInfo"].(map[string]any)
				if more, _ := info["hasNextPage"].(bool); more {
					wrong = append(wrong, fmt.Sprintf("%s: more than %d items, the fixture holds fewer", p, totalsPage))
					continue
				}
				checked++
				if count != total {
					wrong = append(wrong, fmt.Sprintf("%s: %v items listed, totalCount %v", p, count, total))
				}
			}
		}
		return struct{}{}
	}
	parallel(pack(paths, func(p *walkPath) int { return countTokens(texts[p]) }), check)
	w.t.Logf("totalCount checked against the whole list on %d lists of %d paths (%d paths refused as too costly)", checked, len(paths), tooCostly)
	if len(wrong) > 0 {
		w.t.Errorf("%d totals differ from their lists (a total counting what the caller cannot list tells of it):\n%s",
			len(wrong), strings.Join(firstN(wrong, 20), "\n"))
	}
	if len(w.lists) > 0 && checked == 0 {
		w.t.Errorf("no total was checked of the %d lists the walk met", len(w.lists))
	}
}
