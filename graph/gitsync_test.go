package graph

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// go-git's http(s) connections go through the outbound guard, checked as
// they connect: a clone on a context that does not allow private addresses
// never reaches a loopback server, even though nothing checked its URL
// before (as when a name resolves differently at connect time).
func TestGitTransfersAreGuarded(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.NotFound(w, r)
	}))
	defer srv.Close()
	for _, allow := range []bool{false, true} {
		r := &Resolver{GitAllowPrivate: allow}
		ctx, cancel := r.gitContext(context.Background())
		_, _, err := fetchTree(ctx, gitRemote{raw: srv.URL + "/repo.git"}, "refs/heads/main", r.gitLimits())
		cancel()
		if err == nil {
			t.Fatalf("allow %v: a clone of a server that is not git succeeded", allow)
		}
		blocked := strings.Contains(err.Error(), "not allowed")
		if blocked == allow || (hits.Load() > 0) != allow {
			t.Errorf("allow %v: %d requests reached the server; the clone failed with %v", allow, hits.Load(), err)
		}
	}
}

// go-git's ssh connections go through the same guard (as the proxy its
// transport opens): without GitAllowPrivate, a clone never reaches a
// loopback server, whatever its URL check said; with it, it connects.
func TestGitSSHIsGuarded(t *testing.T) {
	// go-git reads known hosts before connecting: an empty list lets it
	// get as far as dialing (the host key is then unknown, and refused).
	known := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(known, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSH_KNOWN_HOSTS", known)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	raw := "ssh://git:secret@" + ln.Addr().String() + "/repo.git"
	u, _ := url.Parse(raw)
	for _, allow := range []bool{false, true} {
		r := &Resolver{GitAllowPrivate: allow}
		remote := gitRemote{raw: raw}
		remote.auth, remote.proxy = r.sshTransfer(u)
		ctx, cancel := r.gitContext(context.Background())
		_, _, err := fetchTree(ctx, remote, "refs/heads/main", r.gitLimits())
		cancel()
		if err == nil {
			t.Fatalf("allow %v: a clone of a server that is not ssh succeeded", allow)
		}
		blocked := strings.Contains(err.Error(), "not allowed")
		if blocked == allow || (accepted.Load() > 0) != allow {
			t.Errorf("allow %v: %d connections reached the server; the clone failed with %v", allow, accepted.Load(), err)
		}
	}
}

// A server that never stops sending (here, refs) is cut off at the limit
// of one connection's reads, and the import answers 422.
func TestGitReadsBounded(t *testing.T) {
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
		pkt := func(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }
		_, _ = w.Write([]byte(pkt("# service=git-upload-pack\n") + "0000"))
		hash := strings.Repeat("a", 40)
		_, _ = w.Write([]byte(pkt(hash + " HEAD\x00multi_ack side-band-64k ofs-delta\n")))
		var chunk strings.Builder
		for i := 0; i < 1000; i++ {
			chunk.WriteString(pkt(fmt.Sprintf("%s refs/heads/branch-%08d\n", hash, i)))
		}
		for r.Context().Err() == nil {
			n, err := w.Write([]byte(chunk.String()))
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	r := &Resolver{GitAllowPrivate: true, GitLimits: GitLimits{MaxFiles: 10, MaxBytes: 1 << 10, MaxFileBytes: 1 << 10}}
	ctx, cancel := r.gitContext(context.Background())
	defer cancel()
	_, _, err := fetchTree(ctx, gitRemote{raw: srv.URL + "/repo.git"}, "refs/heads/main", r.gitLimits())
	var e *Error
	if !errors.As(gitError(err, gitRemote{}), &e) || e.Status != http.StatusUnprocessableEntity {
		t.Fatalf("err = %v, want a 422", err)
	}
	if max := r.gitLimits().connBytes(); sent.Load() > 2*max {
		t.Errorf("the server sent %d bytes; a connection reads at most %d", sent.Load(), max)
	}
}

// writeObject stores o in a repository's storage and returns its hash.
func writeObject(t *testing.T, repo *git.Repository, o interface {
	Encode(plumbing.EncodedObject) error
}) plumbing.Hash {
	t.Helper()
	obj := repo.Storer.NewEncodedObject()
	if err := o.Encode(obj); err != nil {
		t.Fatal(err)
	}
	h, err := repo.Storer.SetEncodedObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// writeBlob stores data as a blob.
func writeBlob(t *testing.T, repo *git.Repository, data []byte) plumbing.Hash {
	t.Helper()
	obj := repo.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, _ := obj.Writer()
	_, _ = w.Write(data)
	_ = w.Close()
	h, err := repo.Storer.SetEncodedObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// commitTree points refs/heads/main of repo at a commit of tree.
func commitTree(t *testing.T, repo *git.Repository, tree plumbing.Hash) {
	t.Helper()
	sig := object.Signature{Name: "test", Email: "test@example.com", When: time.Unix(1700000000, 0)}
	c := writeObject(t, repo, &object.Commit{Author: sig, Committer: sig, Message: "content\n", TreeHash: tree})
	if err := repo.Storer.SetReference(plumbing.NewHashReference("refs/heads/main", c)); err != nil {
		t.Fatal(err)
	}
}

// flatRepo makes a bare repository whose commit has n paths f00000... in
// one directory, all the same blob, and returns its file:// URL.
func flatRepo(t *testing.T, n int, blob []byte) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo.git")
	repo, err := git.PlainInit(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	b := writeBlob(t, repo, blob)
	tree := &object.Tree{}
	for i := 0; i < n; i++ {
		tree.Entries = append(tree.Entries, object.TreeEntry{Name: fmt.Sprintf("f%05d", i), Mode: filemode.Regular, Hash: b})
	}
	commitTree(t, repo, writeObject(t, repo, tree))
	return "file://" + dir
}

// The limits, at and just past each: files and directories counted per
// path, bytes per path (one blob at many paths weighs many times), bytes
// per file.
func TestGitLimits(t *testing.T) {
	limits := GitLimits{MaxFiles: 20, MaxBytes: 2000, MaxFileBytes: 100}
	fetch := func(url string) error {
		_, _, err := fetchTree(context.Background(), gitRemote{raw: url}, "refs/heads/main", limits)
		return err
	}
	for _, tc := range []struct {
		name   string
		url    string
		refuse string // "" when accepted
	}{
		{"20 files of 100 bytes", flatRepo(t, 20, bytes.Repeat([]byte("x"), 100)), ""},
		{"21 files", flatRepo(t, 21, []byte("x")), "more than 20 files"},
		{"a file of 101 bytes", flatRepo(t, 1, bytes.Repeat([]byte("x"), 101)), "limit of 100 bytes per file"},
	} {
		err := fetch(tc.url)
		var e *Error
		switch {
		case tc.refuse == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.refuse != "" && (!errors.As(err, &e) || e.Status != 422 || !strings.Contains(e.Message, tc.refuse)):
			t.Errorf("%s: err = %v, want a 422 saying %q", tc.name, err, tc.refuse)
		}
	}

	// Bytes per path: 20 paths of one 100-byte blob pass a 2000-byte limit
	// and fail a 1999-byte one.
	url := flatRepo(t, 20, bytes.Repeat([]byte("y"), 100))
	limits.MaxBytes = 1999
	if err := fetch(url); err == nil || !strings.Contains(err.Error(), "files come to more than") {
		t.Errorf("2000 bytes at 20 paths under a limit of 1999: %v", err)
	}

	// Directories count: a tree referenced by 5 directories, each
	// referencing it 5 times again, is 5+25+125 paths of no file.
	dir := filepath.Join(t.TempDir(), "nested.git")
	repo, err := git.PlainInit(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	tree := writeObject(t, repo, &object.Tree{Entries: []object.TreeEntry{{Name: "f", Mode: filemode.Regular, Hash: writeBlob(t, repo, []byte("x"))}}})
	for level := 0; level < 3; level++ {
		next := &object.Tree{}
		for i := 0; i < 5; i++ {
			next.Entries = append(next.Entries, object.TreeEntry{Name: fmt.Sprintf("d%d", i), Mode: filemode.Dir, Hash: tree})
		}
		tree = writeObject(t, repo, next)
	}
	commitTree(t, repo, tree)
	limits = GitLimits{MaxFiles: 100, MaxBytes: 1 << 20, MaxFileBytes: 1 << 20}
	if err := fetch("file://" + dir); err == nil || !strings.Contains(err.Error(), "more than 100 files") {
		t.Errorf("nested trees: %v", err)
	}
}

// packObject is one object of a pack: its header and zlib data.
func packObject(typ byte, size int, extra []byte, data []byte) []byte {
	var out []byte
	c := typ<<4 | byte(size&15)
	size >>= 4
	for size > 0 {
		out = append(out, c|0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	out = append(out, c)
	out = append(out, extra...)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	_, _ = zw.Write(data)
	_ = zw.Close()
	return append(out, z.Bytes()...)
}

// pack is a pack of objects (without its trailing checksum, which
// checkPack leaves to go-git).
func pack(objects ...[]byte) []byte {
	out := []byte{'P', 'A', 'C', 'K', 0, 0, 0, 2, 0, 0, 0, byte(len(objects))}
	for _, o := range objects {
		out = append(out, o...)
	}
	return out
}

// Pack objects are judged on their headers, before they are inflated: a
// blob claiming a gigabyte, a small delta making a gigabyte; an object whose
// data is longer than its header says is malformed.
func TestCheckPack(t *testing.T) {
	limits := GitLimits{MaxFiles: 10, MaxBytes: 1000, MaxFileBytes: 100}
	hello := packObject(3, 5, nil, []byte("hello"))
	varint := func(n int) []byte {
		var out []byte
		for n >= 0x80 {
			out = append(out, byte(n)|0x80)
			n >>= 7
		}
		return append(out, byte(n))
	}
	delta := func(target int) []byte {
		d := append(varint(5), varint(target)...)
		return append(d, 0x90, 5) // copy 5 bytes from offset 0
	}
	for _, tc := range []struct {
		name   string
		pack   []byte
		status int // 0: accepted
	}{
		{"a blob", pack(hello), 0},
		{"a delta within limits", pack(hello, packObject(6, len(delta(5)), []byte{byte(len(hello) + 0)}, delta(5))), 0},
		{"a blob claiming 1 GiB", pack(packObject(3, 1<<30, nil, []byte("tiny"))), 422},
		{"a delta making 1 GiB", pack(hello, packObject(6, len(delta(1<<30)), []byte{byte(len(hello))}, delta(1<<30))), 422},
		{"a ref delta making 4 MiB", pack(hello, packObject(7, len(delta(4<<20)), make([]byte, 20), delta(4<<20))), 422},
		{"more bytes than the header says", pack(packObject(3, 5, nil, []byte("hello, world"))), 400},
		{"27 objects, more than 10 paths and a commit and root tree make", pack(func() [][]byte {
			var out [][]byte
			for i := 0; i < 27; i++ {
				out = append(out, packObject(3, 1, nil, []byte{byte(i)}))
			}
			return out
		}()...), 422},
		{"not a pack", []byte("PUCK"), 400},
	} {
		err := checkPack(tc.pack, limits)
		var e *Error
		switch {
		case tc.status == 0 && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.status != 0 && (!errors.As(err, &e) || e.Status != tc.status):
			t.Errorf("%s: err = %v, want %d", tc.name, err, tc.status)
		}
	}

	// The whole: objects within the per-file limit, past the pack's.
	limits = GitLimits{MaxFiles: 1, MaxBytes: 1, MaxFileBytes: 1 << 20}
	zeros := packObject(3, 600<<10, nil, make([]byte, 600<<10))
	if err := checkPack(pack(zeros, zeros), limits); err == nil || !strings.Contains(err.Error(), "comes to more than") {
		t.Errorf("1.2 MiB in all: %v", err)
	}
}

// Export clones only the ref's tip, over http (where go-git works out what
// to push from what it cloned) and file:// alike: the pushed commit's
// parent is that tip, the history stays whole, and the files outside the
// project directory stay.
func TestGitExportShallowOverHTTP(t *testing.T) {
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skip("no git binary:", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend")
	root := t.TempDir()
	dir := filepath.Join(root, "repo.git")
	repo, err := git.PlainInit(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := repo.Config()
	cfg.Raw.Section("http").SetOption("receivepack", "true")
	if err := repo.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	// Two commits already: the first is not fetched.
	sig := object.Signature{Name: "test", Email: "test@example.com", When: time.Unix(1700000000, 0)}
	var parent []plumbing.Hash
	for i, content := range []string{"one", "two"} {
		blob := writeBlob(t, repo, []byte(content))
		tree := writeObject(t, repo, &object.Tree{Entries: []object.TreeEntry{
			{Name: "kept.txt", Mode: filemode.Regular, Hash: blob}}})
		c := writeObject(t, repo, &object.Commit{Author: sig, Committer: sig, Message: fmt.Sprint("commit ", i), TreeHash: tree, ParentHashes: parent})
		parent = []plumbing.Hash{c}
	}
	if err := repo.Storer.SetReference(plumbing.NewHashReference("refs/heads/main", parent[0])); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(&cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}})
	defer srv.Close()

	r := &Resolver{GitAllowPrivate: true}
	ctx, cancel := r.gitContext(context.Background())
	defer cancel()
	remote := gitRemote{raw: srv.URL + "/repo.git"}
	// Over http, then file:// (where go-git reads the remote's storage
	// to know what to send).
	for _, export := range []struct{ msg, url string }{{"export 1", remote.raw}, {"export 2", remote.raw}, {"export 3", "file://" + dir}} {
		if _, err := pushLayout(ctx, gitRemote{raw: export.url}, "refs/heads/main", "docs", map[string][]byte{"README.md": []byte("# " + export.msg + "\n")},
			export.msg, time.Now(), r.gitLimits()); err != nil {
			t.Fatalf("%s: %v", export.msg, err)
		}
	}
	check, err := git.Clone(memory.NewStorage(), nil, &git.CloneOptions{URL: dir, ReferenceName: "refs/heads/main"})
	if err != nil {
		t.Fatal(err)
	}
	head, _ := check.Head()
	iter, _ := check.Log(&git.LogOptions{From: head.Hash()})
	var log []string
	_ = iter.ForEach(func(c *object.Commit) error {
		log = append(log, strings.TrimSpace(c.Message))
		return nil
	})
	if got := strings.Join(log, ", "); got != "export 3, export 2, export 1, commit 1, commit 0" {
		t.Errorf("history: %s", got)
	}
	commit, _ := check.CommitObject(head.Hash())
	tree, _ := commit.Tree()
	if _, err := tree.File("kept.txt"); err != nil {
		t.Errorf("the file outside the project directory is gone: %v", err)
	}
	if f, err := tree.File("docs/README.md"); err != nil {
		t.Errorf("no exported file: %v", err)
	} else if c, _ := f.Contents(); c != "# export 3\n" {
		t.Errorf("exported file: %q", c)
	}
}
