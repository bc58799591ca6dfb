package gitlayout

import (
	"fmt"
	"strings"
	"testing"
)

// outline lists pages as "title (path) description | markdown", nested by
// indentation.
func outline(pages []*Page, depth int) string {
	var b strings.Builder
	for _, p := range pages {
		hidden := ""
		if p.Hidden {
			hidden = " [hidden]"
		}
		fmt.Fprintf(&b, "%s%s%s (%s) %s | %q\n", strings.Repeat("  ", depth), p.Title, hidden, p.Path, p.Description, p.Markdown)
		b.WriteString(outline(p.Pages, depth+1))
	}
	return b.String()
}

func TestRead(t *testing.T) {
	files := map[string]File{
		"docs/.gitbook.yaml": {Data: []byte("root: ./book\n")},
		"docs/book/SUMMARY.md": {Data: []byte("# Table of contents\n\n* [Intro](README.md)\n\n## Guides <a href=\"#guides\" id=\"guides\"></a>\n\n" +
			"* [Setup](guides/setup.md)\n  * [Linux](guides/linux.md)\n* [Use](guides/use.md)\n")},
		"docs/book/README.md":             {Data: []byte("# Welcome\n\nHello\n")},
		"docs/book/guides/setup.md":       {Data: []byte("---\ndescription: How to set up\n---\n\n# Setup\n\nSteps\n"), OID: "o1"},
		"docs/book/guides/linux.md":       {Data: []byte("---\nhidden: true\nicon: penguin\n---\n\nJust Linux\n")},
		"docs/book/.gitbook/assets/a.png": {Data: []byte("png")},
		"other/README.md":                 {Data: []byte("# Elsewhere\n")},
	}
	c := Read(files, "docs")
	want := `Intro (README.md)  | "Hello\n"
Guides ()  | ""
  Setup (guides/setup.md) How to set up | "Steps\n"
    Linux [hidden] (guides/linux.md)  | "Just Linux\n"
  Use (guides/use.md)  | ""
`
	if got := outline(c.Pages, 0); got != want {
		t.Errorf("pages:\n%s\nwant:\n%s", got, want)
	}
	if len(c.Assets) != 1 || c.Assets[0].Path != AssetsDir+"a.png" {
		t.Errorf("assets: %+v", c.Assets)
	}
	if c.Pages[1].Pages[0].OID != "o1" {
		t.Errorf("oid of setup: %q", c.Pages[1].Pages[0].OID)
	}
}

func TestWriteThenRead(t *testing.T) {
	in := Content{Pages: []*Page{
		{Title: "Intro", Path: "README.md", Markdown: "Hello"},
		{Title: "Guides", Group: true, Pages: []*Page{
			{Title: "Setup", Path: "guides/setup/README.md", Description: "How: to set up", Markdown: "Steps\n", Pages: []*Page{
				{Title: "Linux", Path: "guides/setup/linux.md", Hidden: true},
			}},
		}},
	}, Assets: []File{{Path: AssetsDir + "a.png", Data: []byte("png")}}}
	written := Write(in)
	files := map[string]File{}
	for p, data := range written {
		files[p] = File{Path: p, Data: data}
	}
	out := Read(files, "")
	// Markdown comes back with a final newline.
	in.Pages[0].Markdown = "Hello\n"
	if got, want := outline(out.Pages, 0), outline(in.Pages, 0); got != want {
		t.Errorf("read back:\n%s\nwant:\n%s", got, want)
	}
	if len(out.Assets) != 1 || string(out.Assets[0].Data) != "png" {
		t.Errorf("assets: %+v", out.Assets)
	}
}
