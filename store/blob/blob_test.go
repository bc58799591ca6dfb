package blob

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsapi/docsapi/store/blob/blobtest"
)

// backends are the buckets every test runs on: a local directory and S3
// (an in-process S3 server over HTTP).
var backends = []struct {
	name string
	url  func(t *testing.T) string
}{
	{"file", func(t *testing.T) string {
		u, err := FileURL(filepath.Join(t.TempDir(), "blobs"))
		if err != nil {
			t.Fatal(err)
		}
		return u
	}},
	{"s3", func(t *testing.T) string { return blobtest.S3(t) }},
}

func forEachBackend(t *testing.T, test func(t *testing.T, b *Bucket)) {
	for _, backend := range backends {
		t.Run(backend.name, func(t *testing.T) {
			t.Parallel()
			b, err := Open(context.Background(), backend.url(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			test(t, b)
		})
	}
}

func read(t *testing.T, b *Bucket, digest string) string {
	t.Helper()
	r, err := b.Open(context.Background(), digest)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

func TestPutAndOpen(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *Bucket) {
		ctx := context.Background()
		digest, size, err := b.Put(ctx, strings.NewReader("hello"), 10)
		if err != nil || size != 5 || digest != "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" {
			t.Fatalf("Put: %s %d %v", digest, size, err)
		}
		again, _, err := b.Put(ctx, strings.NewReader("hello"), 10)
		if err != nil || again != digest {
			t.Fatalf("the same bytes again: %s %v", again, err)
		}
		if got := read(t, b, digest); got != "hello" {
			t.Errorf("read %q", got)
		}
		// Bigger than a write buffer's part: streamed in several.
		big := bytes.Repeat([]byte("0123456789abcdef"), 1<<19) // 8 MiB
		bigDigest, size, err := b.Put(ctx, bytes.NewReader(big), int64(len(big)))
		if err != nil || size != int64(len(big)) {
			t.Fatalf("Put of 8 MiB: %d %v", size, err)
		}
		if got := read(t, b, bigDigest); got != string(big) {
			t.Errorf("8 MiB read back as %d other bytes", len(got))
		}
		if _, _, err := b.Put(ctx, strings.NewReader("too long"), 3); !errors.Is(err, ErrTooLarge) {
			t.Errorf("too large: %v", err)
		}
		for _, bad := range []string{"../../etc/passwd", strings.Repeat("0", 64), "", "tmp/x"} {
			if _, err := b.Open(ctx, bad); !errors.Is(err, ErrNotFound) {
				t.Errorf("Open(%q): %v", bad, err)
			}
		}
		// Neither the refused upload nor the others left anything but
		// their blobs.
		assertOnly(t, b, digest, bigDigest)
	})
}

// assertOnly checks that the bucket holds the blobs named and nothing else
// of ours: no upload or removal in progress.
func assertOnly(t *testing.T, b *Bucket, digests ...string) {
	t.Helper()
	ctx := context.Background()
	var listed []string
	if err := b.List(ctx, func(d string, _ time.Time) error { listed = append(listed, d); return nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(listed, ",") != strings.Join(digests, ",") && !sameSet(listed, digests) {
		t.Errorf("listed %v, want %v", listed, digests)
	}
	it := b.bucket.List(nil)
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if !keyPattern.MatchString(obj.Key) {
			t.Errorf("left in the bucket: %s", obj.Key)
		}
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]bool{}
	for _, s := range a {
		seen[s] = true
	}
	for _, s := range b {
		if !seen[s] {
			return false
		}
	}
	return true
}

// List reports every blob with when it was stored; Remove removes one
// stored before the time given, never one stored again since.
func TestListAndRemove(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *Bucket) {
		advance := setClock(b, 0)
		ctx := context.Background()
		old, _, _ := b.Put(ctx, strings.NewReader("old"), 10)
		advance(2 * time.Hour)
		fresh, _, _ := b.Put(ctx, strings.NewReader("fresh"), 10)
		listed := map[string]time.Time{}
		if err := b.List(ctx, func(digest string, stored time.Time) error { listed[digest] = stored; return nil }); err != nil {
			t.Fatal(err)
		}
		if len(listed) != 2 || !listed[old].Equal(b.now().Add(-2*time.Hour)) || !listed[fresh].Equal(b.now()) {
			t.Fatalf("listed %v", listed)
		}

		cutoff := b.now().Add(-time.Hour)
		if removed, err := b.Remove(ctx, fresh, cutoff); err != nil || removed {
			t.Fatalf("a blob stored after the cutoff: removed %v, %v", removed, err)
		}
		if removed, err := b.Remove(ctx, old, cutoff); err != nil || !removed {
			t.Fatalf("an old blob: removed %v, %v", removed, err)
		}
		if _, err := b.Open(ctx, old); !errors.Is(err, ErrNotFound) {
			t.Fatalf("removed blob opens: %v", err)
		}
		if removed, err := b.Remove(ctx, old, cutoff); err != nil || removed {
			t.Fatalf("removing it again: %v, %v", removed, err)
		}

		// The same bytes stored again are young again: not removed.
		advance(2 * time.Hour)
		b.Put(ctx, strings.NewReader("fresh"), 10)
		if removed, err := b.Remove(ctx, fresh, b.now().Add(-time.Hour)); err != nil || removed {
			t.Fatalf("a blob stored again: removed %v, %v", removed, err)
		}
		read(t, b, fresh)
		assertOnly(t, b, fresh)
	})
}

// A Put of the same bytes as a blob the garbage collection removes: the
// blob is there when the Put returns, whichever way the two interleave.
// Each way is forced by the hooks, not left to the scheduler.
func TestPutDuringRemove(t *testing.T) {
	// inBackground runs put in a goroutine of its own, its error to come.
	inBackground := func(put func() error) <-chan error {
		done := make(chan error, 1)
		go func() { done <- put() }()
		return done
	}
	for _, tc := range []struct {
		name string
		// race runs remove and put, the way it names, and returns what
		// remove returned.
		race        func(t *testing.T, b *Bucket, remove func() bool, put func() error) bool
		wantRemoved bool
	}{
		// Remove looks at the age, the Put copies, then the whole removal
		// (deletion, end of its mark) runs before the Put looks for
		// removals: the Put finds none, and the blob gone.
		{"a removal over before the Put looks for one", func(t *testing.T, b *Bucket, remove func() bool, put func() error) bool {
			copied, removed := make(chan struct{}), make(chan struct{})
			var once sync.Once
			b.afterCopy = func() { once.Do(func() { close(copied); <-removed }) }
			var putDone <-chan error
			b.beforeDelete = func() { putDone = inBackground(put); <-copied }
			ok := remove()
			close(removed)
			if err := <-putDone; err != nil {
				t.Fatal(err)
			}
			return ok
		}, true},
		// Remove looks at the age, the Put copies and finds the removal
		// marked, then Remove deletes: the Put waits for its end.
		{"a removal in progress when the Put looks for one", func(t *testing.T, b *Bucket, remove func() bool, put func() error) bool {
			found := make(chan struct{})
			var once sync.Once
			b.awaitingRemoval = func() { once.Do(func() { close(found) }) }
			var putDone <-chan error
			b.beforeDelete = func() { putDone = inBackground(put); <-found }
			ok := remove()
			if err := <-putDone; err != nil {
				t.Fatal(err)
			}
			return ok
		}, true},
		// The Put copies before Remove looks at the age: Remove sees the
		// blob stored now, and keeps it.
		{"a removal after the copy", func(t *testing.T, b *Bucket, remove func() bool, put func() error) bool {
			var once sync.Once
			var ok bool
			b.afterCopy = func() { once.Do(func() { ok = remove() }) }
			if err := put(); err != nil {
				t.Fatal(err)
			}
			return ok
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, b *Bucket) {
				advance := setClock(b, 0)
				ctx := context.Background()
				digest, _, err := b.Put(ctx, strings.NewReader("contended"), 100)
				if err != nil {
					t.Fatal(err)
				}
				advance(2 * time.Hour)

				remove := func() bool {
					removed, err := b.Remove(ctx, digest, b.now().Add(-time.Hour))
					if err != nil {
						t.Error(err)
					}
					return removed
				}
				put := func() error {
					_, _, err := b.Put(ctx, strings.NewReader("contended"), 100)
					return err
				}
				if removed := tc.race(t, b, remove, put); removed != tc.wantRemoved {
					t.Errorf("Remove removed %v, want %v", removed, tc.wantRemoved)
				}
				if got := read(t, b, digest); got != "contended" {
					t.Fatalf("read %q", got)
				}
				assertOnly(t, b, digest)
			})
		})
	}
}

// A removal that died leaves its mark; a Put waits for it no longer than
// removalWait, then clears it.
func TestPutPastAStaleRemoval(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *Bucket) {
		b.removalWait = 50 * time.Millisecond
		ctx := context.Background()
		digest, _, _ := b.Put(ctx, strings.NewReader("x"), 10)
		if err := b.bucket.WriteAll(ctx, removingPrefix+digest+"/dead", nil, nil); err != nil {
			t.Fatal(err)
		}
		if _, _, err := b.Put(ctx, strings.NewReader("x"), 10); err != nil {
			t.Fatal(err)
		}
		read(t, b, digest)
		assertOnly(t, b, digest)
	})
}

// The local directory of earlier versions (blobs at ab/abcd..., their
// modification time when they were stored) is read as it is.
func TestFileBucketReadsTheOlderLayout(t *testing.T) {
	dir := t.TempDir()
	digest := "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
	stored := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	os.MkdirAll(filepath.Join(dir, digest[:2]), 0o750)
	path := filepath.Join(dir, digest[:2], digest)
	if err := os.WriteFile(path, []byte("hello"), 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, stored, stored)
	os.WriteFile(filepath.Join(dir, "upload-123"), []byte("an upload in progress"), 0o640)
	u, _ := FileURL(dir)
	b, err := Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got := read(t, b, digest); got != "hello" {
		t.Fatalf("read %q", got)
	}
	var listed []string
	b.List(context.Background(), func(d string, at time.Time) error {
		if !at.Equal(stored) {
			t.Errorf("stored at %v, want %v", at, stored)
		}
		listed = append(listed, d)
		return nil
	})
	if len(listed) != 1 || listed[0] != digest {
		t.Fatalf("listed %v", listed)
	}
}

func TestOpenRefusesBadURLs(t *testing.T) {
	missing := strings.Replace(blobtest.S3(t), "s3://docsapi-test", "s3://no-such-bucket", 1)
	for _, u := range []string{missing, "nosuch://bucket", "gs://bucket", "s3://bucket?unknown_parameter=1", "file:///x?bad=1", "::"} {
		if b, err := Open(context.Background(), u); err == nil {
			b.Close()
			t.Errorf("Open(%q) succeeded", u)
		}
	}
}

// Many Puts of the same bytes at once (the same file uploaded by many
// requests) all succeed, and the blob is there after them.
func TestConcurrentPutsOfTheSameBytes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *Bucket) {
		ctx := context.Background()
		errs := make(chan error, 20)
		for range cap(errs) {
			go func() {
				_, _, err := b.Put(ctx, strings.NewReader("popular"), 100)
				errs <- err
			}()
		}
		for range cap(errs) {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		digest, _, err := b.Put(ctx, strings.NewReader("popular"), 100)
		if err != nil {
			t.Fatal(err)
		}
		if got := read(t, b, digest); got != "popular" {
			t.Fatalf("read %q", got)
		}
	})
}

// A blob is readable while other uploads of the same bytes store it again
// (a popular file, opened while it is uploaded anew).
func TestOpenDuringPutsOfTheSameBytes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *Bucket) {
		ctx := context.Background()
		digest, _, err := b.Put(ctx, strings.NewReader("popular"), 100)
		if err != nil {
			t.Fatal(err)
		}
		whilePutting(t, b, "popular", func() {
			if got := read(t, b, digest); got != "popular" {
				t.Fatalf("read %q", got)
			}
		})
	})
}

// An upload slower than the purge's grace is stamped when it is placed,
// not when it began: the purge of blobs stored an hour before keeps it.
func TestSlowUploadIsStampedWhenPlaced(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *Bucket) {
		advance := setClock(b, 0)
		ctx := context.Background()
		// Two hours pass while the bytes arrive.
		slow := io.MultiReader(strings.NewReader("slow "), readerFunc(func([]byte) (int, error) {
			advance(2 * time.Hour)
			return 0, io.EOF
		}), strings.NewReader("bytes"))
		digest, _, err := b.Put(ctx, slow, 100)
		if err != nil {
			t.Fatal(err)
		}
		removed, err := b.Remove(ctx, digest, b.now().Add(-time.Hour))
		if err != nil || removed {
			t.Fatalf("Remove of a blob placed just now: %v %v", removed, err)
		}
		if got := read(t, b, digest); got != "slow bytes" {
			t.Fatalf("read %q", got)
		}
	})
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// The purge's listing goes on while uploads of bytes stored long before
// copy them again stamped (a file:// bucket rewrites their attributes in
// place meanwhile): it lists every blob, without an error.
func TestListDuringRestampingPuts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *Bucket) {
		// Every look at the clock is two minutes later: each Put finds
		// the blob older than restampAfter and copies it again.
		setClock(b, 2*time.Minute)
		ctx := context.Background()
		var digests []string
		for _, s := range []string{"popular", "other", "third"} {
			d, _, err := b.Put(ctx, strings.NewReader(s), 100)
			if err != nil {
				t.Fatal(err)
			}
			digests = append(digests, d)
		}
		whilePutting(t, b, "popular", func() {
			listed := map[string]bool{}
			if err := b.List(ctx, func(d string, _ time.Time) error { listed[d] = true; return nil }); err != nil {
				t.Fatalf("List beside uploads: %v", err)
			}
			for _, d := range digests {
				if !listed[d] {
					t.Fatalf("List beside uploads left out %s: %v", d, listed)
				}
			}
		})
	})
}

// whilePutting runs check again and again while four uploads of content,
// twenty times each, run beside it, until they are all done; an upload's
// failure fails the test.
func whilePutting(t *testing.T, b *Bucket, content string, check func()) {
	t.Helper()
	done := make(chan error, 4)
	for range cap(done) {
		go func() {
			var err error
			for range 20 {
				if _, _, err = b.Put(context.Background(), strings.NewReader(content), 100); err != nil {
					break
				}
			}
			done <- err
		}()
	}
	for running := cap(done); running > 0; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			running--
		default:
			check()
		}
	}
}

// setClock gives b a clock of its own, which each look moves on by step,
// and returns what moves it on by more.
func setClock(b *Bucket, step time.Duration) (advance func(time.Duration)) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b.Clock = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(step)
		return now
	}
	return func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
}

// A download, and an upload of the same bytes, outlast a rewrite of a
// file:// blob's attributes that keeps them empty for longer than ten quick
// tries (on a loaded machine, the writer may not run for tens of
// milliseconds): they wait for it rather than fail with EOF.
func TestBlobOutlastsASlowRewriteOfItsAttributes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "blobs")
	u, err := FileURL(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	ctx := context.Background()
	digest, _, err := b.Put(ctx, strings.NewReader("content"), 100)
	if err != nil {
		t.Fatal(err)
	}
	attrs := filepath.Join(dir, filepath.FromSlash(key(digest))) + ".attrs"
	saved, err := os.ReadFile(attrs)
	if err != nil {
		t.Fatalf("the file bucket's attributes: %v", err)
	}
	for _, op := range []struct {
		name string
		run  func() error
	}{
		{"Open", func() error {
			r, err := b.Open(ctx, digest)
			if err == nil {
				r.Close()
			}
			return err
		}},
		{"Put", func() error { _, _, err := b.Put(ctx, strings.NewReader("content"), 100); return err }},
	} {
		// Emptied as a rewrite leaves them, written back 200 ms later.
		if err := os.WriteFile(attrs, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		restored := make(chan error, 1)
		go func() {
			time.Sleep(200 * time.Millisecond)
			restored <- os.WriteFile(attrs, saved, 0o600)
		}()
		if err := op.run(); err != nil {
			t.Errorf("%s while the attributes are rewritten: %v", op.name, err)
		}
		if err := <-restored; err != nil {
			t.Fatal(err)
		}
	}
	if got := read(t, b, digest); got != "content" {
		t.Fatalf("read %q", got)
	}
}
