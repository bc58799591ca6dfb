// Package blob stores the bytes of uploaded files, addressed by their
// SHA-256: the same bytes are stored once, and a stored blob never changes.
// Blobs nothing refers to any more are removed by the purge job's garbage
// collection (graph/jobs), by List and Remove.
package blob

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Store keeps blobs. Put stores the bytes of r (at most max) and returns
// their digest and size; Open reads a stored blob. List calls fn with every
// stored blob and when it was stored: by the last Put of its bytes, which
// stores them anew. Remove removes a blob stored before a time, and not
// one a Put stored since (reporting whether it removed one).
type Store interface {
	Put(ctx context.Context, r io.Reader, max int64) (digest string, size int64, err error)
	Open(ctx context.Context, digest string) (io.ReadCloser, error)
	List(ctx context.Context, fn func(digest string, stored time.Time) error) error
	Remove(ctx context.Context, digest string, storedBefore time.Time) (bool, error)
}

// ErrTooLarge is Put's answer to more than max bytes.
var ErrTooLarge = errors.New("blob: too large")

// ErrNotFound is Open's answer for an unknown digest.
var ErrNotFound = errors.New("blob: not found")

// Dir stores blobs as files of a local directory, fanned out by the first
// two hex digits of their digest. A blob's file's modification time is when
// it was stored, by Clock (default time.Now; the server's clock, which
// tests move).
type Dir struct {
	root  string
	Clock func() time.Time
}

// NewDir returns the store in root, creating the directory if needed.
func NewDir(root string) (*Dir, error) {
	if err := os.MkdirAll(root, 0o750); err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	return &Dir{root: root}, nil
}

var digestPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

func (d *Dir) path(digest string) string { return filepath.Join(d.root, digest[:2], digest) }

// Put writes r to a temporary file while hashing it, then renames it into
// place: a blob is visible whole or not at all.
func (d *Dir) Put(_ context.Context, r io.Reader, max int64) (string, int64, error) {
	tmp, err := os.CreateTemp(d.root, "upload-*")
	if err != nil {
		return "", 0, fmt.Errorf("blob: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(r, max+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, fmt.Errorf("blob: %w", err)
	}
	if n > max {
		return "", 0, ErrTooLarge
	}
	// Stored now, also when the same bytes were there already: a blob a
	// Put just named is young, and the garbage collection leaves it.
	now := d.now()
	if err := os.Chtimes(tmp.Name(), now, now); err != nil {
		return "", 0, fmt.Errorf("blob: %w", err)
	}
	digest := hex.EncodeToString(h.Sum(nil))
	if err := os.MkdirAll(filepath.Dir(d.path(digest)), 0o750); err != nil {
		return "", 0, fmt.Errorf("blob: %w", err)
	}
	if err := os.Rename(tmp.Name(), d.path(digest)); err != nil {
		return "", 0, fmt.Errorf("blob: %w", err)
	}
	return digest, n, nil
}

// Open reads blob digest.
func (d *Dir) Open(_ context.Context, digest string) (io.ReadCloser, error) {
	if !digestPattern.MatchString(digest) {
		return nil, ErrNotFound
	}
	f, err := os.Open(d.path(digest))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotFound
	}
	return f, err
}

func (d *Dir) now() time.Time {
	if d.Clock != nil {
		return d.Clock()
	}
	return time.Now()
}

// List walks the fan-out directories; files of other names (uploads in
// progress, removals) are not blobs.
func (d *Dir) List(ctx context.Context, fn func(digest string, stored time.Time) error) error {
	fans, err := os.ReadDir(d.root)
	if err != nil {
		return fmt.Errorf("blob: %w", err)
	}
	for _, fan := range fans {
		if !fan.IsDir() || len(fan.Name()) != 2 {
			continue
		}
		files, err := os.ReadDir(filepath.Join(d.root, fan.Name()))
		if err != nil {
			return fmt.Errorf("blob: %w", err)
		}
		for _, f := range files {
			if err := ctx.Err(); err != nil {
				return err
			}
			if !digestPattern.MatchString(f.Name()) || !strings.HasPrefix(f.Name(), fan.Name()) {
				continue
			}
			info, err := f.Info()
			if errors.Is(err, os.ErrNotExist) {
				continue // removed meanwhile
			} else if err != nil {
				return fmt.Errorf("blob: %w", err)
			}
			if err := fn(f.Name(), info.ModTime()); err != nil {
				return err
			}
		}
	}
	return nil
}

// Remove takes the blob's file out of its place first (a rename, atomic),
// then looks at what it took: a Put of the same bytes may have renamed a
// fresh file into place just before, and that one is put back. A Put just
// after finds the place empty and fills it. So a blob a Put stored at or
// after storedBefore is never removed, whatever the timing.
func (d *Dir) Remove(_ context.Context, digest string, storedBefore time.Time) (bool, error) {
	if !digestPattern.MatchString(digest) {
		return false, ErrNotFound
	}
	place := d.path(digest)
	// A name of its own: two removals at once must not take each other's.
	taken := filepath.Join(d.root, "removing-"+digest+"-"+rand.Text())
	if err := os.Rename(place, taken); errors.Is(err, os.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("blob: %w", err)
	}
	info, err := os.Stat(taken)
	if err == nil && !info.ModTime().Before(storedBefore) {
		// Stored again meanwhile: back in place, unless a newer Put
		// already filled it (with the same bytes).
		if err := os.Link(taken, place); err != nil && !errors.Is(err, os.ErrExist) {
			return false, fmt.Errorf("blob: %w", err)
		}
		_ = os.Remove(taken)
		return false, nil
	}
	if err := os.Remove(taken); err != nil {
		return false, fmt.Errorf("blob: %w", err)
	}
	return true, nil
}
