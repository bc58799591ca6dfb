package render

import (
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// gitbookRepo is a public GitBook git-sync repository (GitBook's own
// documentation) mirrored on the development machines. The test reads its
// pages in place and is skipped where it is absent.
const gitbookRepo = "/work/.mirror/GitbookIO+public-docs/repo"

// assetLinks resolves like a reader would: pages to clean paths, assets to
// an asset route.
type assetLinks struct{}

func (assetLinks) Resolve(dest string) (string, bool) {
	if strings.Contains(dest, ".gitbook/assets/") {
		return "/assets/" + dest[strings.LastIndex(dest, "/")+1:], true
	}
	if strings.Contains(dest, "://") || strings.HasPrefix(dest, "#") {
		return "", false
	}
	path, frag, _ := strings.Cut(dest, "#")
	if strings.HasSuffix(path, ".md") {
		path = strings.TrimSuffix(strings.TrimSuffix(path, ".md"), "README")
		if frag != "" {
			path += "#" + frag
		}
		return path, true
	}
	return "", false
}

func TestGitBookRepository(t *testing.T) {
	if _, err := os.Stat(gitbookRepo); err != nil {
		t.Skipf("%s absent", gitbookRepo)
	}
	repo, err := git.PlainOpen(gitbookRepo)
	if err != nil {
		t.Skipf("open %s: %v", gitbookRepo, err)
	}
	head, err := repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	commit, err := repo.CommitObject(head.Hash())
	if err != nil {
		t.Fatal(err)
	}
	tree, err := commit.Tree()
	if err != nil {
		t.Fatal(err)
	}

	cssClasses := map[string]bool{}
	for _, m := range regexp.MustCompile(`\.((?:gb|hl)-[a-z0-9-]+)`).FindAllStringSubmatch(CSS, -1) {
		cssClasses[m[1]] = true
	}
	// Classes that are hooks for the script or deliberately unstyled.
	for _, c := range []string{"gb-if", "gb-unknown", "gb-include", "gb-tab-panel", "gb-cards-cell", "gb-expr"} {
		cssClasses[c] = true
	}
	classRE := regexp.MustCompile(`class="([^"]*)"`)

	var (
		files, bytes int
		elapsed      time.Duration
		blocks       = map[string]int{}
		unstyled     = map[string]bool{}
	)
	// The mirror may lack large binary blobs: walk names, read only pages.
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	for {
		name, entry, err := walker.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(name, "documentation/") || !strings.HasSuffix(name, ".md") || !entry.Mode.IsFile() {
			continue
		}
		md, err := readBlob(repo, entry.Hash)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		start := time.Now()
		res, st, err := render(string(md), Options{Links: assetLinks{}})
		elapsed += time.Since(start)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		files++
		bytes += len(md)
		for k, v := range st.blocks {
			blocks[k] += v
		}
		if res.Unknown != 0 {
			t.Errorf("%s: %d unknown tags: %v", name, res.Unknown, st.unknown)
		}
		out := outsideCode(res.HTML)
		if i := strings.Index(out, "{%"); i >= 0 {
			t.Errorf("%s: raw tag: %q", name, out[i:min(len(out), i+120)])
		}
		for _, p := range unsafeHTML(string(res.HTML)) {
			t.Errorf("%s: %s", name, p)
		}
		for _, m := range classRE.FindAllStringSubmatch(string(res.HTML), -1) {
			for _, c := range strings.Fields(m[1]) {
				if strings.HasPrefix(c, "gb-") && !cssClasses[c] {
					unstyled[c] = true
				}
			}
		}
	}
	if files == 0 {
		t.Fatal("no pages found under documentation/")
	}
	for c := range unstyled {
		t.Errorf("class %s is emitted but not in CSS", c)
	}
	names := make([]string, 0, len(blocks))
	for k := range blocks {
		names = append(names, k)
	}
	sort.Strings(names)
	var summary []string
	for _, k := range names {
		summary = append(summary, k+"="+strconv.Itoa(blocks[k]))
	}
	t.Logf("%d pages, %d KiB, rendered in %v; blocks: %s", files, bytes>>10, elapsed.Round(time.Millisecond), strings.Join(summary, " "))
}

func readBlob(repo *git.Repository, h plumbing.Hash) ([]byte, error) {
	blob, err := repo.BlobObject(h)
	if err != nil {
		return nil, err
	}
	r, err := blob.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
