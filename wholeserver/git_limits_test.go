package wholeserver_test

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/docsapi/docsapi/graph"
)

// rawRepo is a bare repository written object by object, so that a test can
// make commits no worktree could hold (one blob at thousands of paths).
type rawRepo struct {
	t    *testing.T
	repo *git.Repository
	url  string
}

func newRawRepo(t *testing.T) *rawRepo {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo.git")
	repo, err := git.PlainInit(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	return &rawRepo{t: t, repo: repo, url: "file://" + dir}
}

func (r *rawRepo) store(obj plumbing.EncodedObject) plumbing.Hash {
	r.t.Helper()
	h, err := r.repo.Storer.SetEncodedObject(obj)
	if err != nil {
		r.t.Fatal(err)
	}
	return h
}

func (r *rawRepo) blob(data []byte) plumbing.Hash {
	obj := r.repo.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, _ := obj.Writer()
	_, _ = w.Write(data)
	_ = w.Close()
	return r.store(obj)
}

// tree stores a tree of n files (name(i)) that are all blob.
func (r *rawRepo) tree(n int, name func(int) string, blob plumbing.Hash) plumbing.Hash {
	t := &object.Tree{}
	for i := 0; i < n; i++ {
		t.Entries = append(t.Entries, object.TreeEntry{Name: name(i), Mode: filemode.Regular, Hash: blob})
	}
	obj := r.repo.Storer.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		r.t.Fatal(err)
	}
	return r.store(obj)
}

// commit points refs/heads/main at a commit of tree.
func (r *rawRepo) commit(tree plumbing.Hash) plumbing.Hash {
	sig := object.Signature{Name: "test", Email: "test@example.com", When: time.Unix(1700000000, 0)}
	obj := r.repo.Storer.NewEncodedObject()
	if err := (&object.Commit{Author: sig, Committer: sig, Message: "bomb\n", TreeHash: tree}).Encode(obj); err != nil {
		r.t.Fatal(err)
	}
	c := r.store(obj)
	if err := r.repo.Storer.SetReference(plumbing.NewHashReference("refs/heads/main", c)); err != nil {
		r.t.Fatal(err)
	}
	return c
}

// memoryDuring runs f and returns the bytes allocated meanwhile (an upper
// bound of what it held at once) and the largest live heap seen.
func memoryDuring(f func()) (allocated, peak uint64) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var maxHeap atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > maxHeap.Load() {
				maxHeap.Store(m.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	peak = 0
	if maxHeap.Load() > before.HeapAlloc {
		peak = maxHeap.Load() - before.HeapAlloc
	}
	return after.TotalAlloc - before.TotalAlloc, peak
}

// Git bombs are refused with 422 within the server's default limits,
// from the objects' metadata, without their contents being read: memory
// stays far below what the repository expands to, and the space is left
// as it was. Not parallel: the memory figures are the process's.
func TestGitImportBombsRefused(t *testing.T) {
	e := newCREnv(t)
	const mib = 1 << 20

	// One 3 MiB blob (random: it does not compress) at 5,000 paths: 15 GB
	// once read path by path, 3 MiB on the wire.
	blob := make([]byte, 3*mib)
	_, _ = rand.Read(blob)
	manyPaths := newRawRepo(t)
	manyPaths.commit(manyPaths.tree(5000, func(i int) string { return fmt.Sprintf("image-%04d.png", i) }, manyPaths.blob(blob)))

	// One file of 64 MiB of zeros, over the 25 MiB per file: 64 KiB on the
	// wire, refused on the pack's object header before it is inflated.
	hugeFile := newRawRepo(t)
	hugeFile.commit(hugeFile.tree(1, func(int) string { return "README.md" }, hugeFile.blob(make([]byte, 64*mib))))

	// 10,001 files of one byte: past the count.
	manyFiles := newRawRepo(t)
	manyFiles.commit(manyFiles.tree(graph.DefaultGitMaxFiles+1, func(i int) string { return fmt.Sprintf("p%05d.md", i) }, manyFiles.blob([]byte("x"))))

	space := "/v1/spaces/" + e.space
	revision := e.alice.Do("GET", space+"/content", nil).Expect(http.StatusOK).String("id")
	pages := idsOf(e.alice.Do("GET", space+"/content/pages", nil).Expect(http.StatusOK).Body)
	for _, tc := range []struct {
		name     string
		url      string
		expanded uint64 // what reading every path would take
		budget   uint64 // what the refusal may allocate, at most
		says     string
	}{
		{"one 3 MiB blob at 5,000 paths", manyPaths.url, 5000 * 3 * mib, 64 * mib, "files come to more than 100 MiB"},
		{"a 64 MiB file", hugeFile.url, 64 * mib, 16 * mib, "limit of 25 MiB per file"},
		{"10,001 files", manyFiles.url, graph.DefaultGitMaxFiles + 1, 32 * mib, "more than 10000 files"},
	} {
		var res string
		allocated, peak := memoryDuring(func() {
			r := e.alice.Do("POST", space+"/git/import", map[string]any{"url": tc.url, "ref": "refs/heads/main"}).Expect(http.StatusUnprocessableEntity)
			res = r.ErrorMessage()
		})
		t.Logf("%s: refused (%q); %.1f MiB allocated, live heap up %.1f MiB at most, for %.1f MiB expanded",
			tc.name, res, float64(allocated)/mib, float64(peak)/mib, float64(tc.expanded)/mib)
		if !strings.Contains(res, tc.says) {
			t.Errorf("%s: %q does not say %q", tc.name, res, tc.says)
		}
		if allocated > tc.budget {
			t.Errorf("%s: %d MiB allocated, more than %d MiB", tc.name, allocated/mib, tc.budget/mib)
		}
		// Nothing changed: same revision, same pages, no git sync.
		if got := e.alice.Do("GET", space+"/content", nil).Expect(http.StatusOK).String("id"); got != revision {
			t.Errorf("%s: the revision changed", tc.name)
		}
		if got := idsOf(e.alice.Do("GET", space+"/content/pages", nil).Expect(http.StatusOK).Body); got != pages {
			t.Errorf("%s: the pages changed", tc.name)
		}
		if info := e.alice.Do("GET", space+"/git/info", nil).Expect(http.StatusOK).JSON(); info["url"] != nil {
			t.Errorf("%s: git info recorded: %v", tc.name, info)
		}
	}

	// Export starts from a clone of its target: the same bomb is refused
	// there too (before checking it out), and the target keeps its commit.
	before, _ := manyPaths.repo.Reference("refs/heads/main", true)
	e.alice.Do("POST", space+"/git/export", map[string]any{"url": manyPaths.url, "ref": "refs/heads/main", "commitMessage": "x"}).
		Expect(http.StatusUnprocessableEntity)
	if after, _ := manyPaths.repo.Reference("refs/heads/main", true); after.Hash() != before.Hash() {
		t.Error("the export pushed to a repository it refused")
	}
}

// URLs the outbound guard refuses are answered 400 before anything
// connects: ssh to loopback or private hosts like http(s), NAT64, 6to4 and
// IPv4-mapped addresses judged by the IPv4 address they embed, the other
// special-purpose ranges, and git:// whose transport nothing could guard.
func TestGitURLsRefused(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	for _, url := range []string{
		"ssh://git@127.0.0.1/repo.git",
		"ssh://git:pw@[::1]:2222/repo.git",
		"ssh://git@10.0.0.7/repo.git",
		"ssh://git@169.254.169.254/repo.git",
		"https://[64:ff9b::a9fe:a9fe]/repo.git", // NAT64 of 169.254.169.254
		"https://[64:ff9b::a00:1]/repo.git",     // NAT64 of 10.0.0.1
		"https://[64:ff9b:1::1]/repo.git",       // local-use NAT64
		"https://[2002:7f00:1::1]/repo.git",     // 6to4 of 127.0.0.1
		"https://[::ffff:192.168.0.1]/repo.git",
		"https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/repo.git", // Teredo
		"https://[fe80::1]/repo.git",
		"http://100.64.0.1/repo.git",
		"http://192.0.2.1/repo.git",
		"http://198.18.0.1/repo.git",
		"http://240.0.0.1/repo.git",
		"http://0.0.0.0/repo.git",
		"git://127.0.0.1/repo.git",
		"git://example.com/repo.git",
	} {
		msg := e.alice.Do("POST", "/v1/spaces/"+e.space+"/git/import", map[string]any{"url": url, "ref": "refs/heads/main"}).
			Expect(http.StatusBadRequest).ErrorMessage()
		if strings.Contains(msg, "pw@") {
			t.Errorf("%s: credentials in the error: %s", url, msg)
		}
	}
}
