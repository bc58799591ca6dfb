package published_test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/graph"
)

// A repository in GitBook's git-sync layout, imported by the git import and
// published, read as a visitor reads it: every page of its tree is reached
// by following links from the site's front page, no link of the site leads
// to a page that is not there, and no GitBook block is left as raw text.
//
// DOCSAPI_TEST_GITBOOK_REPO names a real one (a git repository on disk, such
// as a clone of GitBook's own documentation, github.com/GitbookIO/public-docs,
// with DOCSAPI_TEST_GITBOOK_DIR=documentation); without it, the test
// writes one of its own: hundreds of pages, every kind of block, images and
// relative links, as git sync writes them.
func TestGitSyncedRepositoryReadsWhole(t *testing.T) {
	t.Parallel()
	source, dir := os.Getenv("DOCSAPI_TEST_GITBOOK_REPO"), os.Getenv("DOCSAPI_TEST_GITBOOK_DIR")
	// A real repository's images may come to more than the default limit.
	f := newReaderFixture(t, "public", servertest.Options{
		GitLimits: graph.GitLimits{MaxBytes: 2 << 30, MaxFileBytes: 100 << 20}, MaxUploadBytes: 100 << 20})
	if source == "" {
		source = bareRepoOf(t, gitbookRepository(300))
		dir = "docs"
	} else {
		source = cloneInto(t, source)
	}
	space := f.admin.Do("POST", "/v1/orgs/"+f.org+"/spaces", map[string]any{"title": "Imported"}).Expect(http.StatusCreated).String("id")
	f.admin.Do("POST", "/v1/spaces/"+space+"/git/import", map[string]any{"url": source, "ref": "refs/heads/main",
		"repoProjectDirectory": dir}).Expect(http.StatusNoContent)
	f.site = f.admin.Do("POST", "/v1/orgs/"+f.org+"/sites", map[string]any{"title": "Imported docs", "visibility": "public",
		"spaces": []string{space}}).Expect(http.StatusCreated).String("id")
	base := f.publish()
	documents := visibleDocuments(f.admin.Do("GET", "/v1/spaces/"+space+"/content/pages", nil).Expect(http.StatusOK).JSON()["pages"].([]any))

	start := time.Now()
	c := crawl(t, base)
	t.Logf("%d documents in the tree; crawled %d pages and %d files in %s; %d links, %d broken, %d raw blocks",
		documents, c.pages, c.files, time.Since(start).Round(time.Millisecond), c.links, len(c.broken), len(c.raw))
	if c.pages < documents {
		t.Errorf("reached %d pages of %d", c.pages, documents)
	}
	for _, b := range c.broken[:min(len(c.broken), 20)] {
		t.Errorf("broken: %s", b)
	}
	for _, r := range c.raw[:min(len(c.raw), 20)] {
		t.Errorf("raw block: %s", r)
	}
}

// visibleDocuments counts the documents of a page tree that are not hidden
// (nor under a hidden page): what the navigation leads to.
func visibleDocuments(pages []any) int {
	n := 0
	for _, p := range pages {
		m := p.(map[string]any)
		if m["hidden"] == true {
			continue
		}
		if m["type"] == "document" {
			n++
		}
		if kids, _ := m["pages"].([]any); len(kids) > 0 {
			n += visibleDocuments(kids)
		}
	}
	return n
}

type crawlResult struct {
	pages, files, links int
	broken, raw         []string
}

var (
	hrefs     = regexp.MustCompile(`(?:href|src)="([^"]*)"`)
	codeSpans = regexp.MustCompile(`(?s)<pre[ >].*?</pre>|<code[ >].*?</code>`)
)

// crawl follows every link of the site at base from its front page, as a
// visitor would.
func crawl(t *testing.T, base string) crawlResult {
	t.Helper()
	v := newVisitor(t)
	root, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	var c crawlResult
	seen := map[string]bool{root.String(): true}
	queue := []string{root.String()}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		p := v.get(u)
		if p.status != http.StatusOK {
			c.broken = append(c.broken, fmt.Sprintf("%s: %d", u, p.status))
			continue
		}
		if !strings.HasPrefix(p.header.Get("Content-Type"), "text/html") {
			c.files++
			continue
		}
		c.pages++
		// The page's body, code left out: a block's text there (or in the
		// page's description) is written as text on purpose.
		if text := codeSpans.ReplaceAllString(between(p.body, `<div class="content">`, `<footer class="page-footer">`), ""); strings.Contains(text, "{%") {
			i := strings.Index(text, "{%")
			c.raw = append(c.raw, u+": "+text[max(0, i-60):min(len(text), i+60)])
		}
		for _, m := range hrefs.FindAllStringSubmatch(p.body, -1) {
			c.links++
			ref, err := url.Parse(strings.ReplaceAll(m[1], "&amp;", "&"))
			if err != nil {
				c.broken = append(c.broken, u+": "+m[1])
				continue
			}
			next := root.ResolveReference(ref)
			next.Fragment = ""
			if next.Host != root.Host || !strings.HasPrefix(next.Path, root.Path) || seen[next.String()] {
				continue
			}
			seen[next.String()] = true
			queue = append(queue, next.String())
		}
	}
	return c
}

// bareRepoOf pushes files to a new bare repository and returns its file://
// URL.
func bareRepoOf(t *testing.T, files map[string]string) string {
	t.Helper()
	url := servertest.BareRepo(t)
	servertest.PushFiles(t, url, files)
	return url
}

// cloneInto clones the repository at source into a temporary directory
// (the test server imports from there only) and returns its file:// URL.
func cloneInto(t *testing.T, source string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo.git")
	if _, err := git.PlainClone(dir, true, &git.CloneOptions{URL: source}); err != nil {
		t.Fatal(err)
	}
	return "file://" + dir
}

// gitbookRepository writes a repository as GitBook's git sync does: a
// .gitbook.yaml, a SUMMARY.md with groups and nesting, pages in folders
// (README.md for a page with pages under it), front matter, every kind of
// block, relative links between pages and to images in .gitbook/assets.
func gitbookRepository(pages int) map[string]string {
	files := map[string]string{
		".gitbook.yaml": "root: ./docs/\n\nstructure:\n  readme: README.md\n  summary: SUMMARY.md\n",
	}
	for i := range 3 {
		files[fmt.Sprintf("docs/.gitbook/assets/diagram (%d).png", i)] = string(pngOf(i))
	}
	files["docs/.gitbook/assets/guide.pdf"] = "%PDF-1.4 a guide\n"
	var summary strings.Builder
	summary.WriteString("# Table of contents\n\n* [Welcome](README.md)\n")
	files["docs/README.md"] = "---\ndescription: Everything about the product.\n---\n\n# Welcome\n\n" +
		"Start with [the first guide](guides-0/README.md).\n\n{% content-ref url=\"guides-0/topic-0.md\" %}\n" +
		"[topic-0.md](guides-0/topic-0.md)\n{% endcontent-ref %}\n"
	written := 1
	for g := 0; written < pages; g++ {
		fmt.Fprintf(&summary, "\n## Guides %d <a href=\"#guides-%d\" id=\"guides-%d\"></a>\n\n", g, g, g)
		dir := fmt.Sprintf("guides-%d", g)
		fmt.Fprintf(&summary, "* [Guide %d](%s/README.md)\n", g, dir)
		files["docs/"+dir+"/README.md"] = fmt.Sprintf("# Guide %d\n\nThe topics of this guide follow; back to [the welcome](../README.md).\n", g)
		written++
		for i := 0; i < 20 && written < pages; i++ {
			name := fmt.Sprintf("topic-%d", i)
			fmt.Fprintf(&summary, "  * [Topic %d.%d](%s/%s.md)\n", g, i, dir, name)
			files["docs/"+dir+"/"+name+".md"] = topicPage(g, i)
			written++
			if i%5 == 0 && written < pages {
				// A page under the topic: the topic becomes a folder's README
				// in GitBook's layout, but git sync also writes this form.
				fmt.Fprintf(&summary, "    * [Detail %d.%d](%s/%s/detail.md)\n", g, i, dir, name)
				files["docs/"+dir+"/"+name+"/detail.md"] = fmt.Sprintf("# Detail %d.%d\n\nSee [the topic](../%s.md#usage) and "+
					"![a diagram](<../../.gitbook/assets/diagram (1).png>).\n", g, i, name)
				written++
			}
		}
	}
	files["docs/SUMMARY.md"] = summary.String()
	return files
}

// topicPage is a page with every kind of block GitBook's git sync writes.
func topicPage(g, i int) string {
	prev := "../README.md"
	if i > 0 {
		prev = fmt.Sprintf("topic-%d.md", i-1)
	}
	return fmt.Sprintf(`---
description: Topic %[1]d.%[2]d, in depth.
---

# Topic %[1]d.%[2]d

Read [the previous page](%[3]s) first, or [the guide](README.md).

## Usage <a href="#usage" id="usage"></a>

{%% hint style="info" %%}
A hint with **bold** text and a [link](README.md).
{%% endhint %%}

{%% tabs %%}
{%% tab title="macOS" %%}
`+"```bash\nbrew install tool\n```"+`
{%% endtab %%}

{%% tab title="Linux" %%}
{%% hint style="warning" %%}
Needs root.
{%% endhint %%}
{%% endtab %%}
{%% endtabs %%}

{%% stepper %%}
{%% step %%}
### Install

Download it.
{%% endstep %%}

{%% step %%}
### Run

`+"```go\nfunc main() {}\n```"+`
{%% endstep %%}
{%% endstepper %%}

{%% code title="config.yaml" overflow="wrap" lineNumbers="true" %%}
`+"```yaml\nkey: value\n```"+`
{%% endcode %%}

<figure><img src="../.gitbook/assets/diagram (%[4]d).png" alt="A diagram"><figcaption><p>The flow</p></figcaption></figure>

{%% embed url="https://example.com/video" %%}
A video.
{%% endembed %%}

{%% file src="../.gitbook/assets/guide.pdf" %%}
The guide as a PDF.
{%% endfile %%}

<details>

<summary>More</summary>

- [x] Done
- [ ] To do

| Name | Value |
| ---- | ----- |
| a    | 1     |

</details>

A footnote.[^1]

[^1]: The note.
`, g, i, prev, i%3)
}

// pngOf is a small PNG image, different for each n.
func pngOf(n int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(n%4, 0, color.RGBA{R: 200, A: 255})
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}
