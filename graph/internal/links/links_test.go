package links

import (
	"fmt"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/store"
)

func TestOf(t *testing.T) {
	guide, readme := "guide", "README.md"
	pages := []*store.RevisionPage{
		{ID: "intro", Slug: "intro", Position: 0, GitPath: &readme},
		{ID: "guide", Slug: "guide", Position: 1},
		{ID: "setup", Slug: "setup", ParentID: &guide},
	}
	files := []*store.RevisionFile{{ID: "f1", Name: "a.png"}}
	tree := store.NewPageTree(pages)
	ix := NewIndex(tree, files, "https://app.test/")
	markdown := strings.Join([]string{
		"[intro](../README.md) and [guide](../guide) and [self](#top)",
		"![image](../.gitbook/assets/a.png) [gone](missing.md)",
		"[app](https://app.test/o/1) [out](https://other.test/x) <https://auto.test>",
		"| a |\n|---|\n| [cell](setup.md) |",
	}, "\n\n")
	var got []string
	for _, l := range ix.Of(tree.Page("setup"), markdown) {
		target := l.URL
		switch {
		case l.Page != nil:
			target = "page " + l.Page.ID
		case l.File != nil:
			target = "file " + l.File.ID
		}
		got = append(got, l.Status+" "+target)
	}
	want := []string{"ok page intro", "ok page guide", "ok file f1", "broken missing.md",
		"in-app https://app.test/o/1", "ok https://other.test/x", "ok https://auto.test", "ok page setup"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("links:\n%q\nwant:\n%q", got, want)
	}
}
