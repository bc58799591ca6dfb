package blob

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
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
