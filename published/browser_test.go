package published_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

// The published reader in a real browser: Debian's chromium, driven by
// playwright-core, axe-core and Lighthouse from testdata/browser (npm ci
// there; .ci/run does it). Each test skips, saying why, without node,
// chromium or those packages. Each builds the same representative site
// (newBrowserSite); they run one after the other, not in parallel:
// Chromium is heavy on a machine of two cores.

// browserSite is a public site as a reader meets it: two sections, the
// first with two variants (site spaces v1 and v2), a page of every kind of
// block with an uploaded image, nested and hidden pages, the site's own
// primary color and logo.
type browserSite struct {
	*readerFixture
	// base is the site's published address; the others are addresses of
	// its pages, absolute.
	base                                string
	front, blocks, nested, v2, apiFront string
	notFound, search                    string
}

// blocksMarkdown is a page with every kind of block a GitBook page has,
// its headings in order.
const blocksMarkdown = `Every kind of block of a page, as [the introduction](../introduction.md) promised.

## Hints

{% hint style="info" %}
An **info** hint with a [link to the setup](../setup.md).
{% endhint %}

{% hint style="success" %}
A success hint.
{% endhint %}

{% hint style="warning" %}
A warning hint with ` + "`code`" + `.
{% endhint %}

{% hint style="danger" %}
A danger hint.
{% endhint %}

## Tabs

{% tabs %}
{% tab title="macOS" %}
Install with Homebrew:

` + "```bash\nbrew install acme\n```" + `
{% endtab %}

{% tab title="Linux" %}
Install the Linux package.
{% endtab %}
{% endtabs %}

## Steps

{% stepper %}
{% step %}
### Download

Download the archive.
{% endstep %}

{% step %}
### Run

Run the program.
{% endstep %}
{% endstepper %}

## Code

{% code title="config.yaml" lineNumbers="true" %}
` + "```yaml\nname: acme\nreplicas: 3\n```" + `
{% endcode %}

` + "```go\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n```" + `

## Table

| Setting | Default | Meaning |
| ------- | ------- | ------- |
| name    | acme    | The name of the service |
| replicas | 1      | How many run |

## Tasks

- [x] Install
- [ ] Configure
- [ ] Deploy

## Details

<details>

<summary>Show the details</summary>

Hidden until opened, with a list:

* one
* two

</details>

## Image

<figure><img src="../.gitbook/assets/diagram.png" alt="The flow of a request through Acme"><figcaption><p>The flow</p></figcaption></figure>

## Cards

{% content-ref url="nested-page.md" %}
[nested-page.md](nested-page.md)
{% endcontent-ref %}

{% file src="../.gitbook/assets/guide.txt" %}
The guide as text.
{% endfile %}

{% columns %}
{% column %}
Left column, with *emphasis*.
{% endcolumn %}

{% column %}
Right column, with <mark>a highlight</mark> and <kbd>Ctrl</kbd>.
{% endcolumn %}
{% endcolumns %}

> A quote from the team.

A footnote.[^1]

[^1]: The note.
`

// newBrowserSite builds the site of the browser tests and publishes it.
func newBrowserSite(t *testing.T) *browserSite {
	t.Helper()
	f := newReaderFixture(t, "public")
	// The first variant: the fixture's space (Introduction, Setup,
	// Setup/Advanced, a hidden page), named for its version, with a page of
	// every block and a page under it.
	f.admin.Do("PATCH", "/v1/spaces/"+f.space, map[string]any{"title": "v1"}).Expect(http.StatusOK)
	f.upload(f.space, "diagram.png", "image/png", diagramPNG())
	f.upload(f.space, "guide.txt", "text/plain", []byte("The guide.\n"))
	logo := logoPNG()
	f.upload(f.space, "logo.png", "image/png", logo)
	blocks := f.page(f.space, map[string]any{"title": "Blocks", "description": "Every kind of block", "markdown": blocksMarkdown})
	f.page(f.space, map[string]any{"title": "Nested page", "parent": blocks, "markdown": "A page under [the blocks](README.md).\n\n" +
		"## Above\n\nSome text.\n\n### Below\n\nMore text.\n"})
	// The second variant, and a second section.
	v2 := f.newSpace("v2")
	f.admin.Do("POST", f.sitePath("/site-spaces"), map[string]any{"spaceId": v2}).Expect(http.StatusCreated)
	api := f.admin.Do("POST", "/v1/orgs/"+f.org+"/spaces", map[string]any{"title": "API"}).Expect(http.StatusCreated).String("id")
	f.page(api, map[string]any{"title": "API overview", "emoji": "🚀", "markdown": "The API of Acme.\n\n## Authentication\n\nSend a token.\n"})
	reference := f.page(api, map[string]any{"title": "Reference", "type": "group"})
	f.page(api, map[string]any{"title": "Endpoints", "parent": reference, "markdown": "## List\n\n`GET /things`\n"})
	f.admin.Do("POST", f.sitePath("/sections"), map[string]any{"spaceId": api, "title": "API"}).Expect(http.StatusCreated)
	// A section in a group: a tab that opens a list.
	changelog := f.admin.Do("POST", "/v1/orgs/"+f.org+"/spaces", map[string]any{"title": "Changelog"}).Expect(http.StatusCreated).String("id")
	f.page(changelog, map[string]any{"title": "Releases", "markdown": "## 1.0\n\nThe first release.\n"})
	changelogSection := f.admin.Do("POST", f.sitePath("/sections"), map[string]any{"spaceId": changelog, "title": "Changelog"}).
		Expect(http.StatusCreated).String("id")
	f.admin.Do("POST", f.sitePath("/section-groups"), map[string]any{"title": "More", "sections": []string{changelogSection}}).
		Expect(http.StatusCreated)
	var sections struct {
		Items []struct{ ID, Title, Path string }
	}
	f.admin.Do("GET", f.sitePath("/sections"), nil).Expect(http.StatusOK).Decode(&sections)
	for _, s := range sections.Items {
		if s.Title != "API" && s.Title != "Changelog" {
			f.admin.Do("PATCH", f.sitePath("/sections/", s.ID), map[string]any{"title": "Guides"}).Expect(http.StatusOK)
		}
	}

	// The site's look: its primary color and logo (an absolute address, as
	// the settings want: the published address of the uploaded file).
	sum := sha256.Sum256(logo)
	base := f.env.URL + "/published/" + f.org + "/" + f.site
	logoURL := base + "/~gitbook/files/" + hex.EncodeToString(sum[:]) + "/logo.png"
	var settings map[string]any
	f.admin.Do("GET", f.sitePath("/customization"), nil).Expect(http.StatusOK).Decode(&settings)
	styling, _ := settings["styling"].(map[string]any)
	styling["primaryColor"] = map[string]any{"light": "#F59E0B", "dark": "#6366F1"}
	header, _ := settings["header"].(map[string]any)
	if header == nil {
		header = map[string]any{}
		settings["header"] = header
	}
	header["logo"] = map[string]any{"light": logoURL, "dark": logoURL}
	f.admin.Do("PUT", f.sitePath("/customization"), settings).Expect(http.StatusOK)

	if got := f.publish(); got != base {
		t.Fatalf("published at %s, want %s", got, base)
	}
	return &browserSite{readerFixture: f, base: base, front: base + "/", blocks: base + "/blocks",
		nested: base + "/blocks/nested-page", v2: base + "/v2/", apiFront: base + "/api/", notFound: base + "/nowhere",
		search: base + "/~gitbook/search?q=hint"}
}

// upload uploads a file to space's content.
func (f *readerFixture) upload(space, name, contentType string, content []byte) {
	f.t.Helper()
	req := servertest.UploadRequest(f.env.URL, f.admin.Token,
		`mutation($s: ID!, $file: Upload!) { uploadFile(spaceId: $s, file: $file) { id } }`,
		map[string]any{"s": space}, name, contentType, content)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct{ Errors []any }
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK || len(out.Errors) > 0 {
		f.t.Fatalf("uploadFile %s: %d %v %v", name, res.StatusCode, err, out.Errors)
	}
}

// diagramPNG is a 640×360 picture of boxes and arrows.
func diagramPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 640, 360))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{0xf3, 0xf6, 0xf9, 0xff}}, image.Point{}, draw.Src)
	box := func(x, y int, c color.RGBA) {
		draw.Draw(img, image.Rect(x, y, x+140, y+90), &image.Uniform{c}, image.Point{}, draw.Src)
	}
	box(40, 135, color.RGBA{0x0a, 0x7d, 0x5f, 0xff})
	box(250, 135, color.RGBA{0x2f, 0x62, 0xc4, 0xff})
	box(460, 135, color.RGBA{0x9a, 0x67, 0x00, 0xff})
	for _, x := range []int{180, 390} {
		draw.Draw(img, image.Rect(x, 176, x+70, 184), &image.Uniform{color.RGBA{0x33, 0x33, 0x33, 0xff}}, image.Point{}, draw.Src)
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

// logoPNG is a 96×96 logo: a green square with a white bar.
func logoPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 96, 96))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{0x0a, 0x7d, 0x5f, 0xff}}, image.Point{}, draw.Src)
	draw.Draw(img, image.Rect(24, 40, 72, 56), &image.Uniform{color.White}, image.Point{}, draw.Src)
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

// readerView is what testdata/browser/reader.mjs saw of a page.
type readerView struct {
	URL, Title, H1             string
	CurrentPage                string
	OpenPages                  []string
	CurrentSection             string
	Variant, CurrentVariant    string
	Breadcrumbs                []string
	Content, Theme, Background string
}

// readerReport is what testdata/browser/reader.mjs observed.
type readerReport struct {
	Screenshots []string
	// Every request the pages made, those blocked for leaving the server,
	// Content-Security-Policy violations and console errors.
	Requests, Blocked, Violations, ConsoleErrors []string
	// A desktop reader: the front page, then the sidebar to a page and the
	// page under it.
	Front, Blocks, Nested readerView
	// The tabs of the page of blocks, before and after a click on the
	// second: their names, the one selected, the panels shown.
	Tabs struct {
		Names, Selected, Panels              []string
		SelectedAfterClick, PanelsAfterClick []string
	}
	// The second section from the header's tabs; the second variant from
	// the switcher.
	Section, Variant readerView
	// The search box: the results page's heading and results, and the
	// page its first result leads to.
	Search struct {
		Heading string
		Results []string
	}
	SearchFollowed readerView
	// Dark mode: the toggle's aria-pressed before and after a click, the
	// page then, another page opened after it; light again.
	ToggleBefore, ToggleAfter        string
	Dark, DarkAfterNavigation, Light readerView
	// A phone: the page tree's <details>, where it is, whether the page
	// is wider than the screen; a page followed from the tree; dark.
	Mobile struct {
		TocOpen, TocAboveMain, TocOpenAfterClick bool
		ScrollWidth, Width                       int
		Followed, Dark                           readerView
	}
	// JavaScript off.
	NoScript struct {
		Tablists                 int
		TabTitles, Panels        []string
		ToggleVisible            bool
		Nested, Variant, Section readerView
		Mobile                   struct{ TocOpen, LinkVisible bool }
	}
}

// The published site in Chromium, as a reader meets it: the sidebar leads
// to a nested page (marked current, its parent open, in the breadcrumbs),
// tabs switch, the header's tabs lead to the other section, the variant
// switcher to the other variant's content, dark mode is kept across
// pages; on a phone the page tree is a <details> above the page; with
// JavaScript off every tab is shown under its title and the navigation
// still works. Nothing is asked of another host, the page's policy is
// never violated, and screenshots are kept (the test logs where).
func TestPublishedSiteInBrowser(t *testing.T) {
	t.Parallel()
	node, chromium, dir := browserHarness(t, "playwright-core")
	s := newBrowserSite(t)
	shots := artifactsDir(t)
	pages, _ := json.Marshal(map[string]string{"front": s.front, "blocks": s.blocks, "nested": s.nested})
	out := runNodeScript(t, node, dir, "reader.mjs", 3*time.Minute,
		"READER_PAGES="+string(pages), "SCREENSHOTS="+shots, "CHROMIUM="+chromium)
	var r readerReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("report: %s", out)
		}
	})
	s.expectOwnRequests(t, r.Requests, r.Blocked, r.Violations, r.ConsoleErrors)

	view := func(name string, got readerView, want readerView) {
		t.Helper()
		check := func(field, got, want string) {
			t.Helper()
			if want != "" && got != want {
				t.Errorf("%s: %s %q, want %q", name, field, got, want)
			}
		}
		check("address", got.URL, want.URL)
		check("title", got.Title, want.Title)
		check("heading", got.H1, want.H1)
		check("current page", got.CurrentPage, want.CurrentPage)
		check("current section", got.CurrentSection, want.CurrentSection)
		check("variant switcher", got.Variant, want.Variant)
		check("current variant", got.CurrentVariant, want.CurrentVariant)
		check("theme", got.Theme, want.Theme)
		check("background", got.Background, want.Background)
		if want.Content != "" && !strings.Contains(got.Content, want.Content) {
			t.Errorf("%s: the page says %q, not %q", name, got.Content, want.Content)
		}
		if want.Breadcrumbs != nil && !slices.Equal(got.Breadcrumbs, want.Breadcrumbs) {
			t.Errorf("%s: breadcrumbs %q, want %q", name, got.Breadcrumbs, want.Breadcrumbs)
		}
		for _, open := range want.OpenPages {
			if !slices.Contains(got.OpenPages, open) {
				t.Errorf("%s: %q is not open in the page tree: %q", name, open, got.OpenPages)
			}
		}
	}
	const light, dark = "rgb(255, 255, 255)", "rgb(17, 19, 23)"
	view("front page", r.Front, readerView{URL: s.front, Title: "Introduction | Acme Docs", H1: "Introduction",
		CurrentPage: "Introduction", CurrentSection: "Guides", Variant: "Version v1", CurrentVariant: "v1",
		Content: "Welcome to Guides", Theme: "light", Background: light})
	view("the sidebar's Blocks", r.Blocks, readerView{URL: s.blocks, Title: "Blocks | Acme Docs", H1: "Blocks",
		CurrentPage: "Blocks", CurrentSection: "Guides", CurrentVariant: "v1", Content: "Every kind of block"})
	view("the sidebar's nested page", r.Nested, readerView{URL: s.nested, Title: "Nested page | Acme Docs", H1: "Nested page",
		CurrentPage: "Nested page", OpenPages: []string{"Blocks", "Nested page"}, Breadcrumbs: []string{"Blocks"},
		CurrentSection: "Guides", CurrentVariant: "v1", Content: "A page under the blocks"})

	// Tabs: one panel at a time, the clicked one.
	if !slices.Equal(r.Tabs.Names, []string{"macOS", "Linux"}) || !slices.Equal(r.Tabs.Selected, []string{"macOS"}) ||
		len(r.Tabs.Panels) != 1 || !strings.Contains(r.Tabs.Panels[0], "brew install acme") {
		t.Errorf("tabs: %+v", r.Tabs)
	}
	if !slices.Equal(r.Tabs.SelectedAfterClick, []string{"Linux"}) || !slices.Equal(r.Tabs.PanelsAfterClick, []string{"Install the Linux package."}) {
		t.Errorf("tabs after a click on Linux: selected %q, panels %q", r.Tabs.SelectedAfterClick, r.Tabs.PanelsAfterClick)
	}

	view("the header's API", r.Section, readerView{URL: s.apiFront, Title: "API overview | Acme Docs", H1: "🚀 API overview",
		CurrentPage: "🚀 API overview", CurrentSection: "API", Content: "The API of Acme"})
	if r.Search.Heading != "Results for “hint”" || !slices.Contains(r.Search.Results, "Blocks") {
		t.Errorf("the search box: %+v", r.Search)
	}
	if r.SearchFollowed.H1 == "" || !slices.Contains(r.Search.Results, r.SearchFollowed.H1) {
		t.Errorf("the first result led to %+v", r.SearchFollowed)
	}
	if r.Section.Variant != "" {
		t.Errorf("the API section, of one variant, has a variant switcher: %q", r.Section.Variant)
	}
	view("the switcher's v2", r.Variant, readerView{URL: s.v2, H1: "Introduction", CurrentPage: "Introduction",
		CurrentSection: "Guides", Variant: "Version v2", CurrentVariant: "v2", Content: "Welcome to v2"})

	// Dark mode, kept for the next page; light again.
	if r.ToggleBefore != "false" || r.ToggleAfter != "true" {
		t.Errorf("the toggle's aria-pressed: %q, then %q after a click", r.ToggleBefore, r.ToggleAfter)
	}
	view("dark mode", r.Dark, readerView{URL: s.v2, Theme: "dark", Background: dark})
	view("the next page in dark mode", r.DarkAfterNavigation, readerView{URL: s.blocks, Theme: "dark", Background: dark})
	view("light mode again", r.Light, readerView{URL: s.blocks, Theme: "light", Background: light})

	// A phone.
	m := r.Mobile
	if m.TocOpen || !m.TocAboveMain || !m.TocOpenAfterClick {
		t.Errorf("on a phone the page tree is folded above the page: open %v, above %v, open after a click %v",
			m.TocOpen, m.TocAboveMain, m.TocOpenAfterClick)
	}
	if m.ScrollWidth > m.Width {
		t.Errorf("on a phone the page is %dpx wide, the screen %dpx", m.ScrollWidth, m.Width)
	}
	view("a phone's page tree", m.Followed, readerView{URL: s.nested, H1: "Nested page", CurrentPage: "Nested page"})
	view("a phone in dark mode", m.Dark, readerView{Theme: "dark", Background: dark})

	// JavaScript off: every tab under its title, plain links and details.
	n := r.NoScript
	if n.Tablists != 0 || !slices.Equal(n.TabTitles, []string{"macOS", "Linux"}) || len(n.Panels) != 2 ||
		!strings.Contains(n.Panels[0], "brew install acme") || n.Panels[1] != "Install the Linux package." {
		t.Errorf("tabs without JavaScript: %d tab lists, titles %q, panels %q", n.Tablists, n.TabTitles, n.Panels)
	}
	if n.ToggleVisible {
		t.Error("without JavaScript the dark mode toggle, which needs it, is shown")
	}
	view("without JavaScript, the sidebar's nested page", n.Nested, readerView{URL: s.nested, H1: "Nested page", CurrentPage: "Nested page"})
	view("without JavaScript, the switcher's v2", n.Variant, readerView{URL: s.v2, CurrentVariant: "v2", Content: "Welcome to v2"})
	view("without JavaScript, the header's API", n.Section, readerView{URL: s.apiFront, H1: "🚀 API overview", CurrentSection: "API"})
	if !n.Mobile.TocOpen || !n.Mobile.LinkVisible {
		t.Errorf("without JavaScript a phone shows the page tree open: %+v", n.Mobile)
	}

	if len(r.Screenshots) == 0 {
		t.Error("no screenshot")
	}
	for _, p := range r.Screenshots {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("screenshot %s: %v", p, err)
		}
	}
	t.Logf("screenshots in %s: %s", shots, strings.Join(baseNames(r.Screenshots), ", "))
}

// axeReport is what testdata/browser/axe.mjs found.
type axeReport struct {
	Pages []struct {
		Name, URL, Theme, Axe string
		Status, Passes        int
		Incomplete            []struct {
			ID    string
			Nodes []string
		}
		Violations []struct {
			ID, Impact, Help string
			Nodes            []struct{ Target, HTML, Summary string }
		}
	}
	Requests, Blocked, Violations, ConsoleErrors []string
}

// axe-core finds nothing on representative pages of the published site:
// every rule of WCAG 2.0 and 2.1 A and AA and axe's best practices, on the
// front page, a page of every block (its <details> opened), a nested page,
// a page of the other variant and of the other section, the not-found
// page, in light and dark mode; a phone's width; the page without its
// script. The site's primary colors are ones the theme must adjust, the
// hardest case for contrast. Heading order is checked too: the content
// made here is well-formed (GitBook pages may skip levels; axe's
// heading-order rule, a best practice, would then be the content's, not
// the reader's, whose own headings are an h1 per page and the outline's h2).
func TestPublishedPagesAccessibility(t *testing.T) {
	t.Parallel()
	node, chromium, dir := browserHarness(t, "@axe-core/playwright")
	s := newBrowserSite(t)
	type axeCase struct {
		Name   string `json:"name"`
		URL    string `json:"url"`
		Width  int    `json:"width"`
		Height int    `json:"height"`
		Mobile bool   `json:"mobile"`
		Theme  string `json:"theme"`
		Script bool   `json:"script"`
		Expand bool   `json:"expand"`
		status int
	}
	var cases []axeCase
	for _, p := range []struct {
		name, url string
		status    int
	}{{"front", s.front, 200}, {"blocks", s.blocks, 200}, {"nested", s.nested, 200}, {"v2", s.v2, 200},
		{"api", s.apiFront, 200}, {"not-found", s.notFound, 404}, {"search", s.search, 200}} {
		for _, theme := range []string{"light", "dark"} {
			cases = append(cases, axeCase{Name: p.name + " " + theme, URL: p.url, Width: 1280, Height: 800, Theme: theme,
				Script: true, Expand: true, status: p.status})
		}
	}
	for _, theme := range []string{"light", "dark"} {
		cases = append(cases, axeCase{Name: "blocks phone " + theme, URL: s.blocks, Width: 390, Height: 844, Mobile: true,
			Theme: theme, Script: true, Expand: true, status: 200})
	}
	cases = append(cases,
		axeCase{Name: "nested phone light", URL: s.nested, Width: 390, Height: 844, Mobile: true, Theme: "light", Script: true, status: 200},
		axeCase{Name: "blocks without script", URL: s.blocks, Width: 1280, Height: 800, Theme: "light", status: 200},
		axeCase{Name: "blocks phone without script", URL: s.blocks, Width: 390, Height: 844, Mobile: true, Theme: "light", status: 200})
	in, _ := json.Marshal(cases)
	out := runNodeScript(t, node, dir, "axe.mjs", 4*time.Minute, "AXE_CASES="+string(in), "CHROMIUM="+chromium)
	var r axeReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	s.expectOwnRequests(t, r.Requests, r.Blocked, r.Violations, r.ConsoleErrors)
	if len(r.Pages) != len(cases) {
		t.Fatalf("axe ran on %d pages of %d", len(r.Pages), len(cases))
	}
	for i, p := range r.Pages {
		c := cases[i]
		t.Logf("%-28s axe %s: %d violations, %d rules passed, %d to review", p.Name, p.Axe, len(p.Violations), p.Passes, len(p.Incomplete))
		if p.Status != c.status || p.Theme != c.Theme {
			t.Errorf("%s: status %d, theme %q; want %d, %q", p.Name, p.Status, p.Theme, c.status, c.Theme)
		}
		if p.Passes < 30 {
			t.Errorf("%s: only %d rules passed: did axe run?", p.Name, p.Passes)
		}
		for _, v := range p.Violations {
			var nodes []string
			for _, n := range v.Nodes {
				nodes = append(nodes, fmt.Sprintf("\n\t%s: %s\n\t\t%s", n.Target, n.HTML, strings.ReplaceAll(n.Summary, "\n", "\n\t\t")))
			}
			t.Errorf("%s (%s): %s [%s, %s]%s", p.Name, p.URL, v.Help, v.ID, v.Impact, strings.Join(nodes, ""))
		}
		for _, inc := range p.Incomplete {
			t.Logf("%s: to review (axe could not decide): %s on %q", p.Name, inc.ID, inc.Nodes)
		}
	}
}

// lighthouseReport is what testdata/browser/lighthouse.mjs measured.
type lighthouseReport struct {
	Pages []struct {
		URL, FinalURL, Version, RuntimeError, Report string
		Warnings                                     []string
		Scores                                       map[string]int
		Metrics                                      map[string]string
		Failing                                      []struct {
			Category, ID, Title, DisplayValue, Explanation, Items string
			Weight, Score                                         float64
		}
	}
}

// Lighthouse 12.2.3, desktop preset, on pages of the public site: a
// performance score of 95 or more, and 100 for accessibility, best
// practices and SEO. The reports are kept beside the screenshots.
func TestPublishedPagesLighthouse(t *testing.T) {
	t.Parallel()
	node, chromium, dir := browserHarness(t, "lighthouse")
	s := newBrowserSite(t)
	reports := artifactsDir(t)
	urls, _ := json.Marshal([]string{s.front, s.blocks})
	out := runNodeScript(t, node, dir, "lighthouse.mjs", 4*time.Minute,
		"LIGHTHOUSE_URLS="+string(urls), "LIGHTHOUSE_REPORTS="+reports, "CHROMIUM="+chromium, "CHROME_PATH="+chromium)
	var r lighthouseReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	if len(r.Pages) != 2 {
		t.Fatalf("lighthouse ran on %d pages: %s", len(r.Pages), out)
	}
	want := map[string]int{"performance": 95, "accessibility": 100, "best-practices": 100, "seo": 100}
	for _, p := range r.Pages {
		t.Logf("%s: Lighthouse %s: performance %d, accessibility %d, best practices %d, SEO %d (%v)", p.URL, p.Version,
			p.Scores["performance"], p.Scores["accessibility"], p.Scores["best-practices"], p.Scores["seo"], p.Metrics)
		if p.RuntimeError != "" {
			t.Errorf("%s: %s %q", p.URL, p.RuntimeError, p.Warnings)
			continue
		}
		for _, cat := range []string{"performance", "accessibility", "best-practices", "seo"} {
			if got := p.Scores[cat]; got < want[cat] {
				t.Errorf("%s: %s %d, want %d or more", p.URL, cat, got, want[cat])
			}
		}
		for _, a := range p.Failing {
			msg := fmt.Sprintf("%s: %s audit %s (weight %g) scored %g: %s %s %s %s", p.URL, a.Category, a.ID, a.Weight, a.Score,
				a.Title, a.DisplayValue, a.Explanation, a.Items)
			if a.Category == "performance" && p.Scores["performance"] >= want["performance"] {
				t.Log(msg) // a metric short of perfect, within the budget
			} else {
				t.Error(msg)
			}
		}
	}
	t.Logf("Lighthouse reports in %s", reports)
}

// expectOwnRequests fails the test for any request that left the server,
// any Content-Security-Policy violation or console error the pages had.
func (s *browserSite) expectOwnRequests(t *testing.T, requests, blocked, violations, consoleErrors []string) {
	t.Helper()
	origin, _ := url.Parse(s.env.URL)
	if len(requests) == 0 {
		t.Error("no request recorded")
	}
	for _, raw := range requests {
		if u, err := url.Parse(raw); err != nil || u.Host != origin.Host {
			t.Errorf("request to %s, not to the server %s", raw, s.env.URL)
		}
	}
	if len(blocked) > 0 {
		t.Errorf("requests leaving the server: %q", blocked)
	}
	if len(violations) > 0 || len(consoleErrors) > 0 {
		t.Errorf("Content-Security-Policy violations %q, console errors %q", violations, consoleErrors)
	}
}

// browserHarness is node and chromium, and the harness's directory with
// pkg installed in it, or skips the test.
func browserHarness(t *testing.T, pkg string) (node, chromium, dir string) {
	t.Helper()
	node, chromium = servertest.BrowserTools(t)
	dir, err := filepath.Abs("testdata/browser")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg)); err != nil {
		t.Skipf("%s is not installed: run `npm ci` in %s", pkg, dir)
	}
	return node, chromium, dir
}

// runNodeScript runs script of dir with node, bounded by timeout, with
// env added to the test's environment, and returns its standard output.
func runNodeScript(t *testing.T, node, dir, script string, timeout time.Duration, env ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, script))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	// Past the time, an interrupt: playwright and chrome-launcher then
	// stop the browsers they launched (chrome-launcher's is a process group
	// of its own, which a kill of node would leave running); ten seconds
	// later, a kill.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v after %s\nstderr:\n%s\nstdout:\n%.4000s", script, err, time.Since(start).Round(time.Second), stderr.String(), stdout.String())
	}
	t.Logf("%s ran in %s", script, time.Since(start).Round(100*time.Millisecond))
	return stdout.Bytes()
}

// artifactsDir is where the browser tests keep their screenshots and
// reports for a person to look at: $DOCSAPI_TEST_ARTIFACTS, else
// docsapi-browser in the system's temporary directory (t.TempDir would
// delete them).
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("DOCSAPI_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "docsapi-browser")
	}
	dir, err := filepath.Abs(dir)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func baseNames(paths []string) []string {
	var out []string
	for _, p := range paths {
		out = append(out, filepath.Base(p))
	}
	return out
}
