package render

import (
	"fmt"
	"html/template"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// fakeLinks resolves the destinations listed in its map and records every
// destination it was asked about.
type fakeLinks struct {
	mu     sync.Mutex
	routes map[string]string
	titles map[string]string
	asked  []string
}

func (f *fakeLinks) Resolve(dest string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, dest)
	href, ok := f.routes[dest]
	return href, ok
}

func (f *fakeLinks) Title(dest string) (string, bool) {
	t, ok := f.titles[dest]
	return t, ok
}

func mustRender(t *testing.T, md string, opts Options) (*Result, *stats) {
	t.Helper()
	res, st, err := render(md, opts)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return res, st
}

// parse returns the element tree of a rendered page.
func parse(t *testing.T, s template.HTML) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader("<div>" + string(s) + "</div>"))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func classes(n *html.Node) []string {
	v, _ := attr(n, "class")
	return strings.Fields(v)
}

// findAll returns the elements having class cls.
func findAll(n *html.Node, cls string) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && hasClass(n, cls) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func hasAncestor(n *html.Node, cls string) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && hasClass(p, cls) {
			return true
		}
	}
	return false
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// outsideCode is the page without the content of code and pre elements,
// where {% … %} may legitimately appear as text.
var codeRE = regexp.MustCompile(`(?s)<pre[ >].*?</pre>|<code[ >].*?</code>`)

func outsideCode(s template.HTML) string { return codeRE.ReplaceAllString(string(s), "") }

func TestBlocks(t *testing.T) {
	tests := []struct {
		name    string
		md      string
		want    []string // substrings of the HTML
		notWant []string
		unknown int
	}{
		{
			name: "hint styles",
			md: "{% hint style=\"info\" %}\nI **am** info\n{% endhint %}\n\n{% hint style=\"success\" %}\nok\n{% endhint %}\n\n" +
				"{% hint style=\"warning\" %}\nw\n{% endhint %}\n\n{% hint style=\"danger\" %}\nd\n{% endhint %}\n\n{% hint %}\nplain\n{% endhint %}",
			want: []string{
				`<div class="gb-hint gb-hint-info" role="note" aria-label="Info"><div class="gb-hint-body">`,
				`<p>I <strong>am</strong> info</p>`,
				`class="gb-hint gb-hint-success" role="note" aria-label="Success"`,
				`class="gb-hint gb-hint-warning" role="note" aria-label="Warning"`,
				`class="gb-hint gb-hint-danger" role="note" aria-label="Danger"`,
			},
		},
		{
			name: "hint with an unknown style is info",
			md:   "{% hint style=\"bogus\" icon=\"books\" %}\nx\n{% endhint %}",
			want: []string{`class="gb-hint gb-hint-info"`},
		},
		{
			name: "tabs",
			md:   "{% tabs %}\n{% tab title=\"Windows\" icon=\"windows\" %}\nWin text\n{% endtab %}\n\n{% tab title=\"macOS\" %}\nMac text\n{% endtab %}\n{% endtabs %}",
			want: []string{
				`<div class="gb-tabs">`,
				`<div class="gb-tab"><div class="gb-tab-title">Windows</div><div class="gb-tab-panel">`,
				`<p>Win text</p>`,
				`<div class="gb-tab-title">macOS</div>`,
				`<p>Mac text</p>`,
			},
		},
		{
			name: "stepper",
			md:   "{% stepper %}\n{% step %}\n#### First\n\nDo this.\n{% endstep %}\n\n{% step %}\nThen that.\n{% endstep %}\n{% endstepper %}",
			want: []string{`<ol class="gb-stepper">`, `<li class="gb-step"><div class="gb-step-body">`, `<p>Do this.</p>`, `<p>Then that.</p>`, `</ol>`},
		},
		{
			name: "code block with caption, wrap and line numbers",
			md:   "{% code title=\"index.js\" overflow=\"wrap\" lineNumbers=\"true\" %}\n```javascript\nconst a = 1;\nlet b = 'x';\n```\n{% endcode %}",
			want: []string{
				`<figure class="gb-code gb-code-wrap gb-code-lines"><figcaption class="gb-code-title">index.js</figcaption>`,
				`<pre class="gb-pre" tabindex="0"><code><span class="gb-line"><span class="hl-kr">const</span>`,
				`<span class="hl-s1">&#39;x&#39;</span>`,
				`</code></pre>`,
				`</figure>`,
			},
			notWant: []string{"style="},
		},
		{
			name: "bare fence is framed too",
			md:   "```go\nfunc main() {}\n```",
			want: []string{`<div class="gb-code"><pre class="gb-pre" tabindex="0"><code><span class="hl-kd">func</span>`},
		},
		{
			name: "code block without a caption",
			md:   "{% code overflow=\"wrap\" %}\n```\nplain\n```\n{% endcode %}",
			want: []string{`<div class="gb-code gb-code-wrap">`, `<code>plain`},
		},
		{
			name: "embed without end tag is a card and nothing more",
			md:   "{% embed url=\"https://www.youtube.com/watch?v=abc\" %}\n\nAfter the embed.",
			want: []string{
				`<div class="gb-card gb-embed"><a class="gb-card-link" href="https://www.youtube.com/watch?v=abc" rel="nofollow noreferrer"><span class="gb-card-title">youtube.com</span>`,
				"</div>\n<p>After the embed.</p>",
			},
			notWant: []string{"<iframe"},
		},
		{
			name: "embed with a caption",
			md:   "{% embed url=\"https://codepen.io/x/pen/y\" %}\nA *caption*\n{% endembed %}",
			want: []string{`<span class="gb-card-title">codepen.io</span>`, `<div class="gb-card-caption">`, `<p>A <em>caption</em></p>`},
		},
		{
			name: "content-ref",
			md:   "{% content-ref url=\"../formatting/inline.md\" %}\n[inline.md](../formatting/inline.md)\n{% endcontent-ref %}",
			want: []string{`<div class="gb-card gb-content-ref"><a class="gb-card-link" href="../formatting/inline.md"><span class="gb-card-title">Inline</span></a></div>`},
		},
		{
			name: "content-ref keeps a real link text",
			md:   "{% content-ref url=\"setup/\" %}\n[Setting up](setup/)\n{% endcontent-ref %}",
			want: []string{`<span class="gb-card-title">Setting up</span>`},
		},
		{
			name: "file with caption",
			md:   "{% file src=\"../../.gitbook/assets/example (1).pdf\" %}\nThis is a caption.\n{% endfile %}",
			want: []string{
				`<div class="gb-card gb-file"><a class="gb-card-link" href="../../.gitbook/assets/example%20(1).pdf"><span class="gb-card-title">example (1).pdf</span><span class="gb-card-sub">Download</span></a>`,
				`<p>This is a caption.</p>`,
			},
		},
		{
			name: "file without end tag",
			md:   "{% file src=\"a.zip\" %}\n\ntext",
			want: []string{`<span class="gb-card-title">a.zip</span>`, "<p>text</p>"},
		},
		{
			name: "include, openapi, swagger",
			md: "{% include \"../.gitbook/includes/x.md\" %}\n\n{% openapi src=\"https://x/openapi.json\" path=\"/pet\" method=\"post\" %}\n[spec](https://x/openapi.json)\n{% endopenapi %}\n\n" +
				"{% swagger method=\"get\" path=\"/users\" summary=\"List users\" %}\n{% swagger-description %}\nAll of them.\n{% endswagger-description %}\n{% swagger-parameter in=\"query\" name=\"limit\" type=\"integer\" %}\nHow many\n{% endswagger-parameter %}\n{% swagger-response status=\"200: OK\" description=\"\" %}\n```json\n[]\n```\n{% endswagger-response %}\n{% endswagger %}",
			want: []string{
				`<div class="gb-block gb-include"></div>`,
				`<div class="gb-block gb-openapi"><p class="gb-block-label"><code>POST /pet</code></p>`,
				`<code>GET /users</code>`, `<p>List users</p>`,
				`<p class="gb-block-label">limit (query, integer)</p>`,
				`<p class="gb-block-label">Response 200: OK</p>`,
			},
		},
		{
			name: "columns, updates, conditional content, prompt",
			md: "{% columns %}\n{% column width=\"50%\" %}\nLeft\n{% endcolumn %}\n{% column %}\nRight\n{% endcolumn %}\n{% endcolumns %}\n\n" +
				"{% updates format=\"full\" %}\n{% update date=\"2025-12-25\" tags=\"beta,api\" %}\n## New thing\n\nText.\n{% endupdate %}\n{% endupdates %}\n\n" +
				"{% if visitor.claims.unsigned.a %}\nFor some.\n{% endif %}\n\n{% prompt description=\"Example prompt\" %}\n```markdown\nSummarize.\n```\n{% endprompt %}",
			want: []string{
				`<div class="gb-columns">`, `<div class="gb-column">`, `<p>Left</p>`, `<p>Right</p>`,
				`<section class="gb-update"><p class="gb-update-meta"><time datetime="2025-12-25">December 25, 2025</time> <span class="gb-tag">beta</span> <span class="gb-tag">api</span></p>`,
				`<div class="gb-block gb-if">`, `<p>For some.</p>`,
				`<div class="gb-block gb-prompt"><p class="gb-block-label">Example prompt</p>`,
			},
		},
		{
			name: "integration block",
			md:   "{% @mermaid/diagram content=\"graph TD; A-->B\" %}",
			want: []string{`<div class="gb-block gb-integration">`, `<code>graph TD; A--&gt;B</code>`},
		},
		{
			name:    "unknown tags render their content and are counted",
			md:      "{% foo bar=\"1\" %}\nInside **foo**\n{% endfoo %}\n\nText {% baz %} more.",
			want:    []string{`<div class="gb-block gb-unknown">`, `<p>Inside <strong>foo</strong></p>`},
			unknown: 2,
		},
		{
			name: "tags on one line with text",
			md:   "{% hint style=\"warning\" %} Careful **now** {% endhint %}\n\n{% tabs %}{% tab title=\"A\" %} one {% endtab %}{% tab title=\"B\" %} two {% endtab %}{% endtabs %}",
			want: []string{`gb-hint-warning`, `<p>Careful <strong>now</strong></p>`, `<div class="gb-tab-title">A</div>`, `<p>one</p>`, `<p>two</p>`},
		},
		{
			name: "paragraph right before tags",
			md:   "Text before\n{% hint %}\ninside\n{% endhint %}\nText after",
			want: []string{"<p>Text before</p>\n<div class=\"gb-hint", "<p>inside</p>", "<p>Text after</p>"},
		},
		{
			name: "raw HTML right before a tag",
			md:   "{% hint %}\n<figure><img src=\"a.png\" alt=\"A\"><figcaption><p>Cap</p></figcaption></figure>\n{% endhint %}\n<div>x</div>\n{% hint style=\"danger\" %}\nafter html\n{% endhint %}",
			want: []string{`<figcaption><p>Cap</p></figcaption>`, `gb-hint-danger`, `<p>after html</p>`},
		},
		{
			name: "a tag in a fenced block is code",
			md:   "{% hint %}\n```liquid\n{% endhint %}\n{% tabs %}\n```\nstill in the hint\n{% endhint %}\n\nafter",
			want: []string{"{% endhint %}\n{% tabs %}", "<p>still in the hint</p>\n</div></div>", "<p>after</p>"},
		},
		{
			name:    "a tag in a code span or raw pre is text",
			md:      "Use `{% hint style=\"info\" %}` like this.\n\n<pre><code>{% tabs %}</code></pre>",
			want:    []string{"<code>{% hint style=&#34;info&#34; %}</code>", "<code>{% tabs %}</code>"},
			notWant: []string{"gb-hint", "gb-tabs"},
		},
		{
			name: "expressions are inline code",
			md:   "Write to {% vars.support_email %} today.",
			want: []string{`Write to <code class="gb-expr">vars.support_email</code> today.`},
		},
		{
			name: "stray end tags show nothing",
			md:   "{% endhint %}\n\nText {% endtabs %} here.",
			want: []string{"<p>Text</p>\n<p>here.</p>"},
		},
		{
			name: "expandable details with markdown",
			md:   "<details open>\n\n<summary>Step 1: <strong>Start</strong></summary>\n\nSome **bold** and a [link](a.md).\n\n</details>",
			want: []string{"<details open=\"\">", "<summary>Step 1: <strong>Start</strong></summary>", "<p>Some <strong>bold</strong> and a <a href=\"a.md\">link</a>.</p>", "</details>"},
		},
		{
			name: "figure with caption",
			md:   "<figure><img src=\"../.gitbook/assets/x (1).png\" alt=\"X\"><figcaption><p>The caption</p></figcaption></figure>",
			want: []string{`<figure><img src="../.gitbook/assets/x%20(1).png" alt="X" loading="lazy"/><figcaption><p>The caption</p></figcaption></figure>`},
		},
		{
			name: "card table becomes cards",
			md: `<table data-view="cards"><thead><tr><th></th><th></th><th data-hidden data-card-target data-type="content-ref"></th><th data-hidden data-card-cover data-type="files"></th></tr></thead>` +
				`<tbody><tr><td><strong>Guide</strong></td><td>Read it.</td><td><a href="guide.md">guide.md</a></td><td><a href="../.gitbook/assets/c (1).png">c (1).png</a></td></tr></tbody></table>`,
			want: []string{
				`<div class="gb-cards"><div class="gb-cards-card"><img class="gb-cards-cover" src="../.gitbook/assets/c%20(1).png" alt="" loading="lazy"/>`,
				`<div class="gb-cards-cell"><a class="gb-cards-link" href="guide.md"><strong>Guide</strong></a></div>`,
				`<div class="gb-cards-cell">Read it.</div>`,
			},
			notWant: []string{"<table", "c (1).png</a>"},
		},
		{
			name:    "hidden table columns are dropped; tables scroll in a wrapper",
			md:      "<table><thead><tr><th>A</th><th data-hidden>B</th></tr></thead><tbody><tr><td>1</td><td>secret</td></tr></tbody></table>\n\n| x | y |\n|---|---|\n| 1 | 2 |",
			want:    []string{`<div class="gb-table" tabindex="0"><table><thead><tr><th>A</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table></div>`, "<div class=\"gb-table\" tabindex=\"0\"><table>\n<thead>"},
			notWant: []string{"secret"},
		},
		{
			name: "math",
			md:   "$$\ns = \\sqrt{x}\n$$\n\nInline $$a^2$$ here.\n\n$$f(x) = x$$",
			want: []string{"<pre class=\"gb-math\" tabindex=\"0\"><code>s = \\sqrt{x}\n</code></pre>", `Inline <code class="gb-math">a^2</code> here.`, "<code>f(x) = x</code>"},
		},
		{
			name: "GFM and footnotes",
			md:   "~~old~~ and https://example.com\n\n- [x] done\n- [ ] todo\n\nNote[^n].\n\n[^n]: The note.",
			want: []string{
				"<del>old</del>", `<a href="https://example.com" rel="nofollow noreferrer">https://example.com</a>`,
				`<input class="gb-task" type="checkbox" checked="" disabled="" aria-label="Done"/>`,
				`<input class="gb-task" type="checkbox" disabled="" aria-label="To do"/>`,
				`<sup id="fnref-1"><a class="footnote-ref" href="#fn-1" role="doc-noteref">1</a></sup>`,
				`<li id="fn-1">`,
			},
		},
		{
			name:    "GitBook buttons and icon fonts are dropped, link buttons kept",
			md:      "<button type=\"button\" class=\"button primary\" data-action=\"ask\">Ask a question...</button> <i class=\"fa-github\">:github:</i>\n\n<a href=\"https://x.test\" class=\"button primary\">Go</a>",
			want:    []string{`<a class="button primary" href="https://x.test" rel="nofollow noreferrer">Go</a>`},
			notWant: []string{"Ask a question", ":github:"},
		},
		{
			name: "front matter is not content",
			md:   "---\ndescription: >-\n  A page.\nicon: book\n---\n\n# Title\n\nBody",
			want: []string{"<p>Body</p>"},
			notWant: []string{
				"description", "<hr", "<h1",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, st := mustRender(t, tc.md, Options{})
			got := string(res.HTML)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in\n%s", w, got)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(got, w) {
					t.Errorf("unexpected %q in\n%s", w, got)
				}
			}
			if res.Unknown != tc.unknown {
				t.Errorf("Unknown = %d (%v), want %d", res.Unknown, st.unknown, tc.unknown)
			}
			if strings.Contains(outsideCode(res.HTML), "{%") {
				t.Errorf("raw tag in\n%s", got)
			}
		})
	}
}

func TestNesting(t *testing.T) {
	tests := []struct {
		name string
		md   string
		// inner class → class of an ancestor it must have
		within [][2]string
		count  map[string]int
	}{
		{
			name:   "hint in a tab",
			md:     "{% tabs %}\n{% tab title=\"A\" %}\n{% hint style=\"info\" %}\nHinted\n{% endhint %}\n{% endtab %}\n{% endtabs %}",
			within: [][2]string{{"gb-hint", "gb-tab-panel"}, {"gb-tab", "gb-tabs"}},
		},
		{
			name:   "code block in a step",
			md:     "{% stepper %}\n{% step %}\nRun:\n\n{% code title=\"run.sh\" %}\n```bash\necho hi\n```\n{% endcode %}\n{% endstep %}\n{% endstepper %}",
			within: [][2]string{{"gb-code", "gb-step"}, {"gb-pre", "gb-code"}},
		},
		{
			name:   "tabs in a stepper in a hint",
			md:     "{% hint %}\n{% stepper %}\n{% step %}\n{% tabs %}\n{% tab title=\"x\" %}\nX\n{% endtab %}\n{% tab title=\"y\" %}\nY\n{% endtab %}\n{% endtabs %}\n{% endstep %}\n{% endstepper %}\n{% endhint %}\n\nOutside",
			within: [][2]string{{"gb-tabs", "gb-step"}, {"gb-step", "gb-stepper"}, {"gb-stepper", "gb-hint"}},
			count:  map[string]int{"gb-tab": 2, "gb-hint": 1},
		},
		{
			name:   "hint in a hint",
			md:     "{% hint style=\"info\" %}\nouter\n\n{% hint style=\"danger\" %}\ninner\n{% endhint %}\n\nouter again\n{% endhint %}",
			within: [][2]string{{"gb-hint-danger", "gb-hint-info"}},
			count:  map[string]int{"gb-hint": 2},
		},
		{
			name:   "tabs in a tab",
			md:     "{% tabs %}\n{% tab title=\"Outer\" %}\n{% tabs %}\n{% tab title=\"Inner\" %}\ndeep\n{% endtab %}\n{% endtabs %}\n{% endtab %}\n{% tab title=\"Second\" %}\nsecond\n{% endtab %}\n{% endtabs %}",
			within: [][2]string{{"gb-tab-panel", "gb-tabs"}},
			count:  map[string]int{"gb-tabs": 2, "gb-tab": 3},
		},
		{
			name:   "hint in a list item",
			md:     "1. First\n\n   {% hint %}\n   In the item\n   {% endhint %}\n2. Second",
			within: [][2]string{{"gb-hint", ""}},
		},
		{
			name:   "steps without a stepper get one",
			md:     "{% step %}\nalone\n{% endstep %}\n{% step %}\nagain\n{% endstep %}",
			within: [][2]string{{"gb-step", "gb-stepper"}},
			count:  map[string]int{"gb-stepper": 1, "gb-step": 2},
		},
		{
			name:   "text between steps joins a step",
			md:     "{% stepper %}\nlost text\n{% step %}\nA\n{% endstep %}\nbetween\n{% step %}\nB\n{% endstep %}\n{% endstepper %}",
			within: [][2]string{{"gb-step", "gb-stepper"}},
			count:  map[string]int{"gb-step": 3},
		},
		{
			name:   "details in a hint",
			md:     "{% hint %}\n<details>\n\n<summary>More</summary>\n\nHidden **text**\n\n</details>\n{% endhint %}",
			within: [][2]string{{"gb-hint-body", "gb-hint"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := mustRender(t, tc.md, Options{})
			doc := parse(t, res.HTML)
			for _, w := range tc.within {
				found := findAll(doc, w[0])
				if len(found) == 0 {
					t.Fatalf("no .%s in\n%s", w[0], res.HTML)
				}
				if w[1] == "" {
					continue
				}
				for _, n := range found {
					if !hasAncestor(n, w[1]) {
						t.Errorf(".%s is not inside .%s in\n%s", w[0], w[1], res.HTML)
					}
				}
			}
			for cls, n := range tc.count {
				if got := len(findAll(doc, cls)); got != n {
					t.Errorf("%d .%s, want %d in\n%s", got, cls, n, res.HTML)
				}
			}
			if strings.Contains(outsideCode(res.HTML), "{%") {
				t.Errorf("raw tag in\n%s", res.HTML)
			}
		})
	}
}

func TestHeadings(t *testing.T) {
	md := "# The Title\n\nIntro.\n\n## Getting started <a href=\"#start\" id=\"start\"></a>\n\n### Install it\n\n## Getting started\n\n" +
		"## Getting started\n\n### Café au lait!\n\n#### Deep\n\n## start\n\n## 日本語\n\n## Bad id <a href=\"#x\" id=\"a b&quot;c\"></a>"
	res, _ := mustRender(t, md, Options{})
	if res.Title != "The Title" {
		t.Errorf("Title = %q", res.Title)
	}
	want := []Heading{
		{2, "start", "Getting started"},
		{3, "install-it", "Install it"},
		{2, "getting-started", "Getting started"},
		{2, "getting-started-1", "Getting started"},
		{3, "cafe-au-lait", "Café au lait!"},
		{2, "start-1", "start"},
		{2, "section", "日本語"},
		{2, "a-b-c", "Bad id"},
	}
	if fmt.Sprint(res.Outline) != fmt.Sprint(want) {
		t.Errorf("Outline =\n%v\nwant\n%v", res.Outline, want)
	}
	got := string(res.HTML)
	for _, w := range []string{
		`<h2 id="start">Getting started <a aria-label="Link to section: Getting started" class="anchor" href="#start">#</a></h2>`,
		`<h4 id="deep">Deep <a aria-label="Link to section: Deep" class="anchor" href="#deep">#</a></h4>`,
	} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in\n%s", w, got)
		}
	}
	if strings.Contains(got, "<h1") || strings.Contains(got, `id="start"></a>`) {
		t.Errorf("title or GitBook's empty anchor left in\n%s", got)
	}
	for _, m := range regexp.MustCompile(`id="([^"]*)"`).FindAllStringSubmatch(got, -1) {
		if !regexp.MustCompile(`^[A-Za-z0-9_-]+$`).MatchString(m[1]) {
			t.Errorf("bad id %q", m[1])
		}
	}

	// A page that does not start with an h1 has no title, and keeps its h1s.
	res, _ = mustRender(t, "Intro\n\n# Not a title", Options{})
	if res.Title != "" || !strings.Contains(string(res.HTML), `<h1 id="not-a-title">`) {
		t.Errorf("Title = %q, HTML %s", res.Title, res.HTML)
	}
}

func TestLinks(t *testing.T) {
	links := &fakeLinks{
		routes: map[string]string{
			"../getting-started/quickstart.md":    "/docs/getting-started/quickstart",
			"quickstart.md#anchor":                "/docs/quickstart#anchor",
			"../.gitbook/assets/image (1).png":    "/assets/abc/image (1).png",
			"../.gitbook/assets/dark (1).svg":     "/assets/abc/dark.svg",
			"../.gitbook/assets/light.svg":        "/assets/abc/light.svg",
			"raw.md":                              "/docs/raw",
			"../formatting/inline.md":             "/docs/formatting/inline",
			"../.gitbook/assets/example (1).pdf":  "/assets/abc/example.pdf",
			"guide.md":                            "/docs/guide",
			"../.gitbook/assets/cover.png":        "/assets/abc/cover.png",
			"ref.md":                              "/docs/ref",
			"evil.md":                             "javascript:alert(1)",
			"../.gitbook/assets/data.png":         "data:image/png;base64,AAAA",
			"https://www.youtube.com/watch?v=abc": "https://youtu.be/abc",
		},
		titles: map[string]string{"../formatting/inline.md": "Inline content"},
	}
	tests := []struct {
		name  string
		md    string
		want  []string
		asked []string
	}{
		{"markdown link", "[Quick](../getting-started/quickstart.md)", []string{`<a href="/docs/getting-started/quickstart">Quick</a>`}, []string{"../getting-started/quickstart.md"}},
		{"link with anchor", "[a](quickstart.md#anchor)", []string{`href="/docs/quickstart#anchor"`}, nil},
		{"markdown image with spaces", "![Alt](<../.gitbook/assets/image (1).png>)", []string{`<img src="/assets/abc/image%20(1).png" alt="Alt" loading="lazy"/>`}, []string{"../.gitbook/assets/image (1).png"}},
		{"markdown image percent-encoded", "![Alt](../.gitbook/assets/image%20\\(1\\).png)", []string{`src="/assets/abc/image%20(1).png"`}, nil},
		{"reference link", "[r][x]\n\n[x]: ref.md", []string{`<a href="/docs/ref">r</a>`}, nil},
		{"raw HTML img and a", `<img src="../.gitbook/assets/image (1).png" alt="i"> <a href="raw.md">raw</a>`, []string{`<img src="/assets/abc/image%20(1).png" alt="i" loading="lazy"/>`, `<a href="/docs/raw">raw</a>`}, nil},
		{"picture sources", `<picture><source srcset="../.gitbook/assets/dark (1).svg" media="(prefers-color-scheme: dark)"><img src="../.gitbook/assets/light.svg" alt="icon"></picture>`, []string{`<source srcset="/assets/abc/dark.svg" media="(prefers-color-scheme: dark)"/>`, `<img src="/assets/abc/light.svg" alt="icon"`}, []string{"../.gitbook/assets/dark (1).svg"}},
		{"content-ref with a title", "{% content-ref url=\"../formatting/inline.md\" %}\n[inline.md](../formatting/inline.md)\n{% endcontent-ref %}", []string{`<a class="gb-card-link" href="/docs/formatting/inline"><span class="gb-card-title">Inline content</span></a>`}, []string{"../formatting/inline.md"}},
		{"file", "{% file src=\"../.gitbook/assets/example (1).pdf\" %}\ncap\n{% endfile %}", []string{`href="/assets/abc/example.pdf"`}, []string{"../.gitbook/assets/example (1).pdf"}},
		{"embed", "{% embed url=\"https://www.youtube.com/watch?v=abc\" %}", []string{`href="https://youtu.be/abc"`}, nil},
		{"card table target and cover", `<table data-view="cards"><thead><tr><th></th><th data-hidden data-card-target></th><th data-hidden data-card-cover></th></tr></thead><tbody><tr><td>T</td><td><a href="guide.md">g</a></td><td><a href="../.gitbook/assets/cover.png">c</a></td></tr></tbody></table>`, []string{`src="/assets/abc/cover.png"`, `<a class="gb-cards-link" href="/docs/guide">T</a>`}, nil},
		{"unresolved stays as written", "[x](other.md) [y](https://example.com/a?b=1&c=2)", []string{`<a href="other.md">x</a>`, `href="https://example.com/a?b=1&amp;c=2"`}, []string{"other.md", "https://example.com/a?b=1&c=2"}},
		{"resolved URLs are sanitized too", "[x](evil.md) ![d](../.gitbook/assets/data.png)", []string{`<p>x <img alt="d"`}, nil},
		{"fragments", "[s](#Some:Section)", []string{`href="#Some-Section"`}, []string{"#Some:Section"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			links.asked = nil
			res, _ := mustRender(t, tc.md, Options{Links: links})
			got := string(res.HTML)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in\n%s", w, got)
				}
			}
			for _, a := range tc.asked {
				found := false
				for _, x := range links.asked {
					found = found || x == a
				}
				if !found {
					t.Errorf("Resolve not asked %q; asked %q", a, links.asked)
				}
			}
			if strings.Contains(got, "javascript:") || strings.Contains(got, "data:") {
				t.Errorf("unsafe URL in\n%s", got)
			}
		})
	}

	// Without Links, destinations stay as written.
	res, _ := mustRender(t, "[a](../x.md) ![b](<img (1).png>)", Options{})
	if !strings.Contains(string(res.HTML), `<a href="../x.md">a</a>`) || !strings.Contains(string(res.HTML), `src="img%20(1).png"`) {
		t.Errorf("HTML %s", res.HTML)
	}
}

// unsafeHTML lists what makes a page unsafe, element by element: elements
// that run or embed code, event handlers and style attributes, URLs with a
// scheme other than http(s)/mailto, form controls other than read-only task
// boxes, target=_blank without rel. It works on tokens, so that text which
// merely talks about "javascript:" is not mistaken for a link.
func unsafeHTML(out string) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	z := html.NewTokenizer(strings.NewReader(out))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return problems
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		switch tok.Data {
		case "script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "form",
			"textarea", "select", "button", "svg", "math", "base", "meta", "link", "noscript", "template":
			bad("element <%s>", tok.Data)
		}
		attrs := map[string]string{}
		for _, a := range tok.Attr {
			attrs[a.Key] = a.Val
			if strings.HasPrefix(a.Key, "on") || a.Key == "style" || a.Key == "formaction" || a.Key == "xlink:href" {
				bad("attribute %s on <%s>", a.Key, tok.Data)
			}
			switch a.Key {
			case "href", "src", "srcset", "action", "data", "poster", "background", "cite":
				v := strings.ToLower(strings.Map(func(r rune) rune {
					if r <= ' ' {
						return -1 // browsers strip these before reading the scheme
					}
					return r
				}, a.Val))
				for _, scheme := range []string{"javascript:", "vbscript:", "data:"} {
					if strings.Contains(v, scheme) {
						bad("%s=%q on <%s>", a.Key, a.Val, tok.Data)
					}
				}
			}
		}
		if tok.Data == "input" {
			if attrs["type"] != "checkbox" {
				bad("input of type %q", attrs["type"])
			}
			if _, ok := attrs["disabled"]; !ok {
				bad("enabled input")
			}
		}
		if tok.Data == "a" && attrs["target"] == "_blank" {
			if !strings.Contains(attrs["rel"], "noopener") || !strings.Contains(attrs["rel"], "noreferrer") {
				bad("target=_blank with rel=%q", attrs["rel"])
			}
		}
	}
}

// tagsOnly is the markup of a page without its text.
func tagsOnly(out string) string {
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(out))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			b.Write(z.Raw())
		}
	}
}

var markupRE = regexp.MustCompile(`(?i)<script|javascript:|vbscript:|\son[a-z]+\s*=|\sstyle\s*=|<iframe|<svg|<object|<form`)

func checkSafe(t *testing.T, out string) {
	t.Helper()
	for _, p := range unsafeHTML(out) {
		t.Error(p)
	}
	if m := markupRE.FindString(tagsOnly(out)); m != "" {
		t.Errorf("markup contains %q", m)
	}
	if strings.Contains(out, "<script") {
		t.Error("<script in output")
	}
	// An unterminated "{% hint" is text; a complete tag never is.
	rest := codeRE.ReplaceAllString(out, "")
	if i := strings.Index(rest, "{%"); i >= 0 {
		line := rest[i:]
		if j := strings.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		if strings.Contains(line, "%}") {
			t.Errorf("raw tag: %q", line)
		}
	}
}

func TestHostile(t *testing.T) {
	links := &fakeLinks{routes: map[string]string{"x.md": "javascript:alert(1)", "y.md": " java\tscript:alert(1)"}}
	tests := []struct{ name, md string }{
		{"script tags", "<script>alert(1)</script>\n\nhi <script src=//evil.test/x.js></script>"},
		{"event handlers", `<img src=x onerror=alert(1)> <div onclick="alert(1)">d</div> <a href="#" onmouseover=alert(1)>a</a> <body onload=alert(1)>`},
		{"javascript links", "[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1)) <javascript:alert(1)> [z](<javascript:alert(1)>)"},
		{"javascript images", "![x](javascript:alert(1)) <img src=\"javascript:alert(1)\">"},
		{"raw HTML javascript", `<a href="javascript:alert(1)">a</a> <a href="  javascript:alert(1)">b</a> <a href="vbscript:msgbox(1)">c</a>`},
		{"obfuscated javascript", `<a href="jav&#x09;ascript:alert(1)">a</a> <a href="jav&#x0A;ascript:alert(1)">b</a> <a href="&#106;avascript:alert(1)">c</a> <a href="javascript&colon;alert(1)">d</a> <a href="java\u0000script:alert(1)">e</a> <img src="jav&#x09;ascript:alert(1)">`},
		{"data URLs", "![x](data:image/png;base64,AAAA) <img src=\"data:image/svg+xml;base64,PHN2Zz4=\"> <a href=\"data:text/html,<script>alert(1)</script>\">d</a> <img srcset=\"data:image/png;base64,AAAA 1x\">"},
		{"srcset", `<img srcset="javascript:alert(1) 1x, https://ok.test/a.png 2x" src="a.png"> <picture><source srcset="jav&#x09;ascript:alert(1)"><img src=b.png></picture>`},
		{"style attributes", `<p style="background:url(javascript:alert(1))">p</p> <mark style="color:red">m</mark> <style>body{display:none}</style>`},
		{"iframes and objects", `<iframe src="https://evil.test"></iframe> <object data="x.swf"></object> <embed src="x.swf"> <frameset><frame src=x></frameset>`},
		{"svg with script", `<svg><script>alert(1)</script><a xlink:href="javascript:alert(1)"><text>x</text></a></svg> <math><mtext><script>alert(1)</script></mtext></math>`},
		{"forms", `<form action="https://evil.test"><input name=p type=password><button>go</button></form> <input type="text" value="x"> <input type="checkbox" onclick="alert(1)">`},
		{"meta and base", `<meta http-equiv="refresh" content="0;url=javascript:alert(1)"> <base href="https://evil.test/"> <link rel=stylesheet href=x.css>`},
		{"target blank", `<a href="https://x.test" target="_blank">x</a> <a href="/y" target="_BLANK" rel="opener">y</a> <a href="/z" target="other">z</a>`},
		{"page breaking HTML", "</div></article></main><div><div>\n\nstill here"},
		{"mutation XSS", `<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript> <svg></p><style><a id="</style><img src=1 onerror=alert(1)>">`},
		{"tags in attributes and code", "{% embed url=\"javascript:alert(1)\" %}\n\n{% content-ref url=\"javascript:alert(1)\" %}\n[x](javascript:alert(1))\n{% endcontent-ref %}\n\n{% file src=\"data:text/html,<script>alert(1)</script>\" %}"},
		{"hostile tag attributes", "{% hint style=\"info\\\" onclick=\\\"alert(1)\" %}\nx\n{% endhint %}\n\n{% tab title=\"<script>alert(1)</script>\" %}\nx\n{% endtab %}\n\n{% code title=\"<img src=x onerror=alert(1)>\" %}\n```\nx\n```\n{% endcode %}\n\n{% update date=\"<script>\" tags=\"<b onclick=alert(1)>\" %}\nx\n{% endupdate %}\n{% @x/y content=\"</code></pre><script>alert(1)</script>\" %}"},
		{"heading ids", "## Title <a href=\"#x\" id=\"x&quot; onclick=&quot;alert(1)\"></a>\n\n## <img src=x onerror=alert(1)>"},
		{"resolved to javascript", "[a](x.md) [b](y.md) <a href=\"x.md\">c</a> <img src=\"y.md\">"},
		{"unterminated hint", "{% hint style=\"info\" %}\nnever closed\n\n## heading\n\n{% tabs %}\n{% tab title=\"x\" %}\nalso open"},
		{"unterminated tag syntax", "{% hint style=\"info\"\n\ntext {% \n\n{%%} {% %} {%-%}"},
		{"cross-nested tags", "{% hint %}\n{% tabs %}\n{% tab %}\nx\n{% endhint %}\n{% endtab %}\n{% endtabs %}"},
		{"deeply nested blocks", strings.Repeat("{% hint %}\n", 3000) + "deep" + strings.Repeat("\n{% endhint %}", 3000)},
		{"a megabyte of nested blocks", strings.Repeat("{% hint %}\n", 1<<20/11)},
		{"deeply nested quotes and lists", strings.Repeat(">", 5000) + " x\n\n" + strings.Repeat("* ", 3000) + "y"},
		{"deeply nested HTML", strings.Repeat("<div>", 20000) + "x" + strings.Repeat("</div>", 10)},
		{"many tags", strings.Repeat("{% hint %}{% tabs %}{% endhint %}x{% endtab %}", 20000)},
		{"many backticks", "{% hint %} " + strings.Repeat("`a``b```c", 30000)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			res, _, err := render(tc.md, Options{Links: links})
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
			checkSafe(t, string(res.HTML))
		})
	}

	t.Run("page breaking HTML is balanced", func(t *testing.T) {
		res, _ := mustRender(t, "</div></article></main><div><div>\n\nstill here", Options{})
		opens := strings.Count(string(res.HTML), "<div")
		closes := strings.Count(string(res.HTML), "</div>")
		if opens != closes || strings.Contains(string(res.HTML), "</main>") {
			t.Errorf("unbalanced: %s", res.HTML)
		}
	})
}

func TestLargeInput(t *testing.T) {
	page := realisticPage()
	var b strings.Builder
	for b.Len() < 1<<20 {
		b.WriteString(page)
	}
	md := b.String()
	start := time.Now()
	res, err := Render(md, Options{Links: &fakeLinks{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("1 MiB rendered in %v to %d bytes", time.Since(start), len(res.HTML))
	checkSafe(t, string(res.HTML))

	// A megabyte of one code block, of one line, of one table.
	for name, md := range map[string]string{
		"code":  "```go\n" + strings.Repeat("func f() { return \"x\" }\n", 1<<20/25) + "```",
		"line":  strings.Repeat("a *b* [c](d) ", 1<<20/13),
		"table": "| a | b |\n|---|---|\n" + strings.Repeat("| 1 | 2 |\n", 1<<20/10),
	} {
		start := time.Now()
		if _, err := Render(md, Options{}); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%s: took %v", name, d)
		}
	}

	if _, err := Render(strings.Repeat("x", maxInput+1), Options{}); err != ErrTooLarge {
		t.Errorf("err = %v, want ErrTooLarge", err)
	}
}

func TestConcurrent(t *testing.T) {
	page := realisticPage()
	want, err := Render(page, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := Render(page, Options{Links: &fakeLinks{}})
			if err != nil || got.HTML != want.HTML {
				t.Errorf("concurrent render differs (err %v)", err)
			}
		}()
	}
	wg.Wait()
}

// TestAssets checks CSS and JS against the page's rules: CSS colours only
// from the page's custom properties or our own --gb-* ones (defined for
// light and dark), every rule scoped under .content; JS without eval,
// inline handlers or HTML injection.
func TestAssets(t *testing.T) {
	css := regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(CSS, "")
	allowed := map[string]bool{"--text": true, "--text-muted": true, "--bg": true, "--bg-subtle": true, "--border": true, "--primary": true}
	for _, m := range regexp.MustCompile(`var\((--[a-z0-9-]+)`).FindAllStringSubmatch(css, -1) {
		if !allowed[m[1]] && !strings.HasPrefix(m[1], "--gb-") {
			t.Errorf("CSS uses %s", m[1])
		}
	}
	// Literal colours only in --gb-* definitions.
	for _, decl := range regexp.MustCompile(`[{;]\s*([a-z-]+)\s*:\s*([^;{}]*)`).FindAllStringSubmatch(css, -1) {
		if regexp.MustCompile(`#[0-9a-fA-F]{3,8}\b|rgba?\(|hsla?\(`).MatchString(decl[2]) && !strings.HasPrefix(decl[1], "--gb-") {
			t.Errorf("literal colour in %s: %s", decl[1], decl[2])
		}
	}
	// Every selector is under .content.
	for _, m := range regexp.MustCompile(`([^{}]+)\{`).FindAllStringSubmatch(css, -1) {
		prelude := strings.TrimSpace(m[1])
		if strings.HasPrefix(prelude, "@") {
			continue
		}
		for _, sel := range splitSelectors(prelude) {
			if !strings.Contains(sel, ".content") {
				t.Errorf("selector %q not under .content", strings.TrimSpace(sel))
			}
		}
	}
	for _, want := range []string{`:root[data-theme="dark"] .content`, `@media (prefers-color-scheme: dark)`, `:root:not([data-theme="light"]) .content`, ".content .hl-k{"} {
		if !strings.Contains(CSS, want) {
			t.Errorf("CSS lacks %q", want)
		}
	}
	for _, bad := range []string{"eval(", "new Function", "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "setAttribute(\"on", "import("} {
		if strings.Contains(JS, bad) {
			t.Errorf("JS contains %q", bad)
		}
	}
	// The script parses, if node is here to tell.
	if node, err := exec.LookPath("node"); err == nil {
		f := t.TempDir() + "/script.js"
		if err := os.WriteFile(f, []byte(JS), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(node, "--check", f).CombinedOutput(); err != nil {
			t.Errorf("node --check: %v\n%s", err, out)
		}
	}
}

// splitSelectors splits a selector list on its top-level commas.
func splitSelectors(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// realisticPage is a page of the kind git sync writes, with every block.
func realisticPage() string {
	return `---
description: How to install and configure the tool.
---

# Installation

Install the CLI, configure it, and check that it works. See [the quickstart](../getting-started/quickstart.md) first.

{% hint style="info" %}
You need **Node 18** or later. Check with ` + "`node --version`" + `.
{% endhint %}

## Install <a href="#install" id="install"></a>

{% tabs %}
{% tab title="macOS" %}
` + "```bash\nbrew install tool\ntool --version\n```" + `
{% endtab %}

{% tab title="Windows" %}
` + "```powershell\nwinget install tool\n```" + `
{% endtab %}

{% tab title="Linux" %}
{% hint style="warning" %}
Use your distribution's package if it has one.
{% endhint %}

` + "```bash\ncurl -fsSL https://example.com/install.sh | sh\n```" + `
{% endtab %}
{% endtabs %}

## Configure

{% stepper %}
{% step %}
### Create the file

{% code title="tool.yaml" lineNumbers="true" %}
` + "```yaml\nserver:\n  url: https://api.example.com\n  timeout: 30s\nlog:\n  level: info\n```" + `
{% endcode %}
{% endstep %}

{% step %}
### Set the token

Export it in your shell:

` + "```bash\nexport TOOL_TOKEN=\"...\"\n```" + `
{% endstep %}
{% endstepper %}

<figure><img src="../.gitbook/assets/config (1).png" alt="The configuration screen"><figcaption><p>The configuration screen</p></figcaption></figure>

| Option | Default | Meaning |
| ------ | ------- | ------- |
| ` + "`url`" + ` | none | Where the API is |
| ` + "`timeout`" + ` | 30s | How long to wait |

<details>

<summary>What if the install fails?</summary>

Check your network and retry. See [troubleshooting](troubleshooting.md).

</details>

{% embed url="https://www.youtube.com/watch?v=abc123" %}

{% content-ref url="../getting-started/quickstart.md" %}
[quickstart.md](../getting-started/quickstart.md)
{% endcontent-ref %}

{% file src="../.gitbook/assets/checklist (1).pdf" %}
The install checklist.
{% endfile %}

- [x] Installed
- [ ] Configured

`
}

func BenchmarkRender(b *testing.B) {
	page := realisticPage()
	links := &fakeLinks{routes: map[string]string{"../getting-started/quickstart.md": "/docs/quickstart"}}
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(page, Options{Links: links}); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzRender(f *testing.F) {
	f.Add(realisticPage())
	f.Add("{% hint %}\n```\n{% endhint %}\n```\n{% tabs %}{% tab title=\"a\" %}x{% endtab %}")
	f.Add("<a href=\"jav&#x09;ascript:alert(1)\">x</a><img src=x onerror=alert(1)>")
	f.Add("$$\nx\n$$ $$y$$ {% vars.x %} `{% code %}`")
	f.Add("<table data-view=\"cards\"><tr><th data-hidden data-card-target></th></tr><tr><td><a href=\"x\">x</a></td></tr></table>")
	f.Add("---\ndescription: x\n---\n# T\n## A <a id=\"a\"></a>\n")
	f.Fuzz(func(t *testing.T, md string) {
		start := time.Now()
		res, err := Render(md, Options{Links: &fakeLinks{routes: map[string]string{"x": "javascript:x"}}})
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("%d bytes took %v", len(md), d)
		}
		if err != nil {
			if len(md) > maxInput {
				return
			}
			t.Fatal(err)
		}
		if problems := unsafeHTML(string(res.HTML)); len(problems) > 0 {
			t.Fatalf("%v in output of %q:\n%s", problems, md, res.HTML)
		}
	})
}
