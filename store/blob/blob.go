// Package blob stores the bytes of uploaded files, addressed by their
// SHA-256: the same bytes are stored once, and a stored blob never changes.
package blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
)

// Store keeps blobs. Put stores the bytes of r (at most max) and returns
// their digest and size; Open reads a stored blob.
type Store interface {
	Put(ctx context.Context, r io.Reader, max int64) (digest string, size int64, err error)
	Open(ctx context.Context, digest string) (io.ReadCloser, error)
}

// ErrTooLarge is Put's answer to more than max bytes.
var ErrTooLarge = errors.New("blob: too large")

// ErrNotFound is Open's answer for an unknown digest.
var ErrNotFound = errors.New("blob: not found")

// Dir stores blobs as files of a local directory, fanned out by the first
// two hex digits of their digest.
type Dir struct{ root string }

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
