package blob

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestDir(t *testing.T) {
	d, err := NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	digest, size, err := d.Put(ctx, strings.NewReader("hello"), 10)
	if err != nil || size != 5 || digest != "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" {
		t.Fatalf("Put: %s %d %v", digest, size, err)
	}
	again, _, err := d.Put(ctx, strings.NewReader("hello"), 10)
	if err != nil || again != digest {
		t.Fatalf("the same bytes again: %s %v", again, err)
	}
	r, err := d.Open(ctx, digest)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	if string(b) != "hello" {
		t.Errorf("read %q", b)
	}
	if _, _, err := d.Put(ctx, strings.NewReader("too long"), 3); !errors.Is(err, ErrTooLarge) {
		t.Errorf("too large: %v", err)
	}
	for _, bad := range []string{"../../etc/passwd", strings.Repeat("0", 64)} {
		if _, err := d.Open(ctx, bad); !errors.Is(err, ErrNotFound) {
			t.Errorf("Open(%q): %v", bad, err)
		}
	}
}

// List reports every blob with when it was stored; Remove removes one
// stored before the time given, never one stored again since.
func TestDirListAndRemove(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	d, err := NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d.Clock = func() time.Time { return now }
	ctx := context.Background()
	old, _, _ := d.Put(ctx, strings.NewReader("old"), 10)
	now = now.Add(2 * time.Hour)
	fresh, _, _ := d.Put(ctx, strings.NewReader("fresh"), 10)
	listed := map[string]time.Time{}
	if err := d.List(ctx, func(digest string, stored time.Time) error { listed[digest] = stored; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 2 || !listed[old].Equal(now.Add(-2*time.Hour)) || !listed[fresh].Equal(now) {
		t.Fatalf("listed %v", listed)
	}

	cutoff := now.Add(-time.Hour)
	if removed, err := d.Remove(ctx, fresh, cutoff); err != nil || removed {
		t.Fatalf("a blob stored after the cutoff: removed %v, %v", removed, err)
	}
	if removed, err := d.Remove(ctx, old, cutoff); err != nil || !removed {
		t.Fatalf("an old blob: removed %v, %v", removed, err)
	}
	if _, err := d.Open(ctx, old); !errors.Is(err, ErrNotFound) {
		t.Fatalf("removed blob opens: %v", err)
	}
	if removed, err := d.Remove(ctx, old, cutoff); err != nil || removed {
		t.Fatalf("removing it again: %v, %v", removed, err)
	}

	// The same bytes stored again are young again: not removed.
	now = now.Add(2 * time.Hour)
	d.Put(ctx, strings.NewReader("fresh"), 10)
	if removed, err := d.Remove(ctx, fresh, now.Add(-time.Hour)); err != nil || removed {
		t.Fatalf("a blob stored again: removed %v, %v", removed, err)
	}
	r, err := d.Open(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	// Nothing else is left in the directory but the blob.
	var rest []string
	d.List(ctx, func(digest string, _ time.Time) error { rest = append(rest, digest); return nil })
	if len(rest) != 1 || rest[0] != fresh {
		t.Fatalf("left: %v", rest)
	}
}
