package render

import (
	"strings"
	"testing"
)

// Markdown resolves the destinations Render resolves, in the markdown as
// written, and nothing in code.
func TestMarkdownResolvesDestinations(t *testing.T) {
	t.Parallel()
	links := &fakeLinks{routes: map[string]string{
		"setup.md":                         "https://docs.example.com/setup",
		"quickstart.md#anchor":             "https://docs.example.com/quickstart#anchor",
		"../.gitbook/assets/image (1).png": "https://docs.example.com/~gitbook/files/abc/image%20%281%29.png",
		"ref.md":                           "https://docs.example.com/ref",
		"with space.md":                    "https://docs.example.com/a b",
	}}
	tests := []struct {
		name, md, want string
	}{
		{"inline link", "Read [the setup](setup.md) next.\n", "Read [the setup](https://docs.example.com/setup) next.\n"},
		{"link with a title", `[s](setup.md "Set up")`, `[s](https://docs.example.com/setup "Set up")`},
		{"link with an anchor", "[a](quickstart.md#anchor)", "[a](https://docs.example.com/quickstart#anchor)"},
		{"image in angle brackets", "![Alt](<../.gitbook/assets/image (1).png>)", "![Alt](<https://docs.example.com/~gitbook/files/abc/image%20%281%29.png>)"},
		{"image percent-encoded and escaped", `![Alt](../.gitbook/assets/image%20\(1\).png)`, "![Alt](https://docs.example.com/~gitbook/files/abc/image%20%281%29.png)"},
		{"reference definition", "[r][x]\n\n[x]: ref.md\n", "[r][x]\n\n[x]: https://docs.example.com/ref\n"},
		{"raw HTML", `<img src="../.gitbook/assets/image (1).png" alt="i"> <a href='setup.md'>s</a>`,
			`<img src="https://docs.example.com/~gitbook/files/abc/image%20%281%29.png" alt="i"> <a href='https://docs.example.com/setup'>s</a>`},
		{"content-ref", "{% content-ref url=\"setup.md\" %}\n[setup.md](setup.md)\n{% endcontent-ref %}\n",
			"{% content-ref url=\"https://docs.example.com/setup\" %}\n[setup.md](https://docs.example.com/setup)\n{% endcontent-ref %}\n"},
		{"in a list and a quote", "- [s](setup.md)\n> [s](setup.md)\n", "- [s](https://docs.example.com/setup)\n> [s](https://docs.example.com/setup)\n"},
		{"an address with a space is bracketed", "[x](<with space.md>) [y](with%20space.md)", "[x](<https://docs.example.com/a b>) [y](<https://docs.example.com/a b>)"},
		{"unresolved stays", "[x](other.md) [y](https://example.com/a?b=1) [z](#here)", "[x](other.md) [y](https://example.com/a?b=1) [z](#here)"},
		{"code span", "`[x](setup.md)` and [y](setup.md)", "`[x](setup.md)` and [y](https://docs.example.com/setup)"},
		{"fenced code", "```md\n[x](setup.md)\n```\n[y](setup.md)\n", "```md\n[x](setup.md)\n```\n[y](https://docs.example.com/setup)\n"},
		{"raw pre", "<pre>\n<a href=\"setup.md\">x</a>\n</pre>\n", "<pre>\n<a href=\"setup.md\">x</a>\n</pre>\n"},
		{"escaped bracket", `\](setup.md)`, `\](setup.md)`},
		{"front matter left out", "---\ndescription: D\n---\n\n[s](setup.md)\n", "\n[s](https://docs.example.com/setup)\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Markdown(tc.md, Options{Links: links}); got != tc.want {
				t.Errorf("Markdown(%q)\n got %q\nwant %q", tc.md, got, tc.want)
			}
		})
	}
	if got := Markdown("[s](setup.md)", Options{}); got != "[s](setup.md)" {
		t.Errorf("without Links: %q", got)
	}
}

// Markdown stays linear on hostile input.
func TestMarkdownLargeInput(t *testing.T) {
	t.Parallel()
	md := strings.Repeat("[a](b.md) `x` ](((( <a href=\"c\"> ", 20000)
	if got := Markdown(md, Options{Links: &fakeLinks{}}); len(got) != len(md) {
		t.Errorf("%d bytes in, %d out", len(md), len(got))
	}
}
