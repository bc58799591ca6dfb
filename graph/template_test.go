package graph

import "testing"

func TestFillTemplate(t *testing.T) {
	files := map[string]string{"logo": "logo file.png"}
	for _, c := range []struct {
		markdown string
		depth    int
		want     string
	}{
		{"# T\n\n![Logo]({{logo}})\n\nText\n", 0, "# T\n\n![Logo](.gitbook/assets/logo%20file.png)\n\nText\n"},
		{"![Logo]({{logo}})\n", 2, "![Logo](../../.gitbook/assets/logo%20file.png)\n"},
		{"# T\n![]({{cover}})\nText", 0, "# T\nText"}, // a reference not given: its line is left out
		{"No references {{ not one }}\n", 1, "No references {{ not one }}\n"},
	} {
		if got := fillTemplate(c.markdown, files, c.depth); got != c.want {
			t.Errorf("fillTemplate(%q, %d) = %q, want %q", c.markdown, c.depth, got, c.want)
		}
	}
}
