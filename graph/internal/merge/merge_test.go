package merge

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/store"
)

// tpage builds a page for merge tests; its body is held in its BodySHA256
// ("sha-of-<body>"), which testBody reads back.
func tpage(id, parent, title, body string) *store.RevisionPage {
	p := &store.RevisionPage{ID: id, Type: store.PageDocument, Title: title, Slug: strings.ToLower(title)}
	if parent != "" {
		p.ParentID = &parent
	}
	sha := "sha-of-" + body
	p.BodySHA256 = &sha
	return p
}

func testBody(p *store.RevisionPage) string {
	return strings.TrimPrefix(store.StringOf(p.BodySHA256), "sha-of-")
}

// resultBody is a merged page's body: merged text, or its own.
func resultBody(r Result, id string) string {
	if b, ok := r.Bodies[id]; ok {
		return b
	}
	i := slices.IndexFunc(r.Pages, func(p *store.RevisionPage) bool { return p.ID == id })
	if i < 0 {
		return "<deleted>"
	}
	return testBody(r.Pages[i])
}

func TestMergeContent(t *testing.T) {
	base := []*store.RevisionPage{
		tpage("a", "", "A", "one\ntwo\nthree\nfour\nfive"),
		tpage("b", "", "B", "bee"),
		tpage("c", "", "C", "sea"),
	}
	edit := func(pages []*store.RevisionPage, id string, f func(p *store.RevisionPage)) []*store.RevisionPage {
		out := make([]*store.RevisionPage, 0, len(pages))
		for _, p := range pages {
			c := clonePage(p)
			if c.ID == id {
				f(c)
			}
			out = append(out, c)
		}
		return out
	}
	setBody := func(b string) func(*store.RevisionPage) {
		return func(p *store.RevisionPage) { sha := "sha-of-" + b; p.BodySHA256 = &sha }
	}
	remove := func(pages []*store.RevisionPage, id string) []*store.RevisionPage {
		return slices.DeleteFunc(slices.Clone(pages), func(p *store.RevisionPage) bool { return p.ID == id })
	}
	for _, c := range []struct {
		name         string
		ours, theirs []*store.RevisionPage
		conflicts    []string
		check        func(t *testing.T, r Result)
	}{
		{name: "edits to different pages both survive",
			ours:   edit(base, "b", setBody("bee 2")),
			theirs: edit(base, "c", setBody("sea 2")),
			check: func(t *testing.T, r Result) {
				if resultBody(r, "b") != "bee 2" || resultBody(r, "c") != "sea 2" {
					t.Errorf("bodies: %q %q", resultBody(r, "b"), resultBody(r, "c"))
				}
			}},
		{name: "edits to different parts of one page both survive",
			ours:   edit(base, "a", setBody("ONE\ntwo\nthree\nfour\nfive")),
			theirs: edit(base, "a", setBody("one\ntwo\nthree\nfour\nFIVE")),
			check: func(t *testing.T, r Result) {
				if got := resultBody(r, "a"); got != "ONE\ntwo\nthree\nfour\nFIVE" {
					t.Errorf("merged body: %q", got)
				}
			}},
		{name: "lines added in different places both survive",
			ours:   edit(base, "a", setBody("zero\none\ntwo\nthree\nfour\nfive")),
			theirs: edit(base, "a", setBody("one\ntwo\nthree\nthree and a half\nfour\nfive")),
			check: func(t *testing.T, r Result) {
				if got := resultBody(r, "a"); got != "zero\none\ntwo\nthree\nthree and a half\nfour\nfive" {
					t.Errorf("merged body: %q", got)
				}
			}},
		{name: "the same lines changed both ways conflict",
			ours:      edit(base, "a", setBody("one\nTWO\nthree\nfour\nfive")),
			theirs:    edit(base, "a", setBody("one\n2\nthree\nfour\nfive")),
			conflicts: []string{"a"}},
		{name: "the same change on both sides is no conflict",
			ours:   edit(base, "a", setBody("one\nTWO\nthree\nfour\nfive")),
			theirs: edit(base, "a", setBody("one\nTWO\nthree\nfour\nfive")),
			check: func(t *testing.T, r Result) {
				if got := resultBody(r, "a"); got != "one\nTWO\nthree\nfour\nfive" {
					t.Errorf("body: %q", got)
				}
			}},
		{name: "a page moved on one side and edited on the other keeps both",
			ours:   edit(base, "c", func(p *store.RevisionPage) { parent := "a"; p.ParentID = &parent }),
			theirs: edit(base, "c", setBody("sea 2")),
			check: func(t *testing.T, r Result) {
				i := slices.IndexFunc(r.Pages, func(p *store.RevisionPage) bool { return p.ID == "c" })
				if store.StringOf(r.Pages[i].ParentID) != "a" || resultBody(r, "c") != "sea 2" {
					t.Errorf("page c: parent %q, body %q", store.StringOf(r.Pages[i].ParentID), resultBody(r, "c"))
				}
			}},
		{name: "deleting a page edited elsewhere conflicts",
			ours:      remove(base, "b"),
			theirs:    edit(base, "b", setBody("bee 2")),
			conflicts: []string{"b"}},
		{name: "deleting an untouched page deletes it",
			ours:   remove(base, "b"),
			theirs: edit(base, "c", setBody("sea 2")),
			check: func(t *testing.T, r Result) {
				if resultBody(r, "b") != "<deleted>" {
					t.Error("page b survived")
				}
			}},
		{name: "renamed both ways conflicts",
			ours:      edit(base, "b", func(p *store.RevisionPage) { p.Title = "Bee" }),
			theirs:    edit(base, "b", func(p *store.RevisionPage) { p.Title = "Bea" }),
			conflicts: []string{"b"}},
		{name: "a page added under one deleted elsewhere conflicts",
			ours:      remove(base, "c"),
			theirs:    append(slices.Clone(base), tpage("d", "c", "D", "new")),
			conflicts: []string{"c", "d"}},
		{name: "pages added on both sides with one slug get distinct slugs",
			ours:   append(slices.Clone(base), tpage("x1", "", "Intro", "x")),
			theirs: append(slices.Clone(base), tpage("x2", "", "Intro", "y")),
			check: func(t *testing.T, r Result) {
				var slugs []string
				for _, p := range r.Pages {
					if p.Title == "Intro" {
						slugs = append(slugs, p.Slug)
					}
				}
				if fmt.Sprint(slugs) != "[intro intro-2]" {
					t.Errorf("slugs: %v", slugs)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Pages(base, c.ours, c.theirs, testBody)
			var conflicts []string
			if err != nil {
				var ce *ConflictError
				if !errors.As(err, &ce) {
					t.Fatalf("error %v, want a conflict or none", err)
				}
				conflicts = ce.Pages
			}
			if fmt.Sprint(conflicts) != fmt.Sprint(c.conflicts) && !(len(conflicts) == 0 && len(c.conflicts) == 0) {
				t.Fatalf("conflicts %v, want %v", conflicts, c.conflicts)
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

func TestMergeLines(t *testing.T) {
	for _, c := range []struct {
		base, ours, theirs, want string
		ok                       bool
	}{
		{"", "a", "", "a", true},
		{"a\nb", "a\nb", "a\nb\nc", "a\nb\nc", true},
		{"a\nb\nc", "a\nc", "a\nb\nc\nd", "a\nc\nd", true},
		{"a\nb\nc", "x\nb\nc", "a\nb\ny", "x\nb\ny", true},
		{"a\nb\nc", "a\nx\nc", "a\ny\nc", "", false},
		{"a", "", "b", "", false},
	} {
		got, ok := mergeLines(c.base, c.ours, c.theirs)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("mergeLines(%q, %q, %q) = %q, %v; want %q, %v", c.base, c.ours, c.theirs, got, ok, c.want, c.ok)
		}
	}
}

func TestFiles(t *testing.T) {
	files := func(ids ...string) []*store.RevisionFile {
		out := make([]*store.RevisionFile, len(ids))
		for i, id := range ids {
			out[i] = &store.RevisionFile{ID: id}
		}
		return out
	}
	// ours added c, theirs deleted b and added d.
	got := Files(files("a", "b"), files("a", "b", "c"), files("a", "d"))
	var ids []string
	for _, f := range got {
		ids = append(ids, f.ID)
	}
	if fmt.Sprint(ids) != "[a c d]" {
		t.Errorf("files %v, want [a c d]", ids)
	}
}
