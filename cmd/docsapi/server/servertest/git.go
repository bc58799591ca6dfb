package servertest

import (
	"path"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// BareRepo makes an empty bare git repository in a temporary directory
// (which test servers' git imports may read: GitFileRoot) and returns its
// file:// URL.
func BareRepo(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo.git")
	if _, err := git.PlainInit(dir, true); err != nil {
		t.Fatal(err)
	}
	return "file://" + dir
}

// PushFiles commits files (contents by path) as the whole tree of
// refs/heads/main of the repository at url.
func PushFiles(t testing.TB, url string, files map[string]string) {
	t.Helper()
	fs := memfs.New()
	repo, err := git.Init(memory.NewStorage(), fs)
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, "refs/heads/main")); err != nil {
		t.Fatal(err)
	}
	wt, _ := repo.Worktree()
	for p, content := range files {
		_ = fs.MkdirAll(path.Dir(p), 0o755)
		f, _ := fs.Create(p)
		_, _ = f.Write([]byte(content))
		_ = f.Close()
	}
	_ = wt.AddWithOptions(&git.AddOptions{All: true})
	sig := &object.Signature{Name: "test", Email: "test@example.com", When: time.Now()}
	if _, err := wt.Commit("Initial content", &git.CommitOptions{Author: sig}); err != nil {
		t.Fatal(err)
	}
	_, _ = repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{url}})
	if err := repo.Push(&git.PushOptions{RemoteName: "origin", RefSpecs: []config.RefSpec{"refs/heads/main:refs/heads/main"}}); err != nil {
		t.Fatal(err)
	}
}
