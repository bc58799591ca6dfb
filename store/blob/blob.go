// Package blob stores the bytes of uploaded files, addressed by their
// SHA-256: the same bytes are stored once, and a stored blob never changes.
// Blobs nothing refers to any more are removed by the purge job's garbage
// collection (graph/jobs), by List and Remove.
//
// The bytes live in a bucket of gocloud.dev/blob, opened by URL: a local
// directory (file://), or object storage shared by every instance of the
// server (s3:// for S3 and S3-compatible stores, Cloud Storage through its S3 API among them; azblob://).
package blob

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"regexp"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
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

// Bucket stores blobs in a gocloud.dev bucket. A blob's key is its digest
// under a directory named by the first two hex digits of the digest (the
// layout of the local directories of earlier versions, which a file://
// bucket reads as they are). Uploads in progress are written under tmp/,
// removals in progress mark themselves under removing/.
//
// When a blob was stored is the "stored" metadata its Put wrote, by Clock
// (default time.Now; the server's clock, which tests move), or the
// object's modification time for blobs written without it.
type Bucket struct {
	bucket *blob.Bucket
	Clock  func() time.Time
	// removalWait bounds how long a Put waits for a removal of its blob
	// in progress: a removal takes a few requests, so a mark older than
	// this is left by a remover that died.
	removalWait time.Duration
	// beforeDelete, when set (tests), runs in Remove between its check
	// of the blob's age and its deletion.
	beforeDelete func()
	// afterCopy, when set (tests), runs in Put between each copy to the
	// blob's key and its look for removals in progress.
	afterCopy func()
	// awaitingRemoval, when set (tests), runs in Put each time it finds a
	// removal of its blob in progress, before it waits for its end.
	awaitingRemoval func()
}

const (
	tmpPrefix      = "tmp/"
	removingPrefix = "removing/"
	storedKey      = "stored"
)

// Open opens the bucket at rawURL: file:///path (created if missing),
// s3://bucket?region=...&endpoint=..., azblob://container. It checks the
// bucket answers, so that a wrong name or credentials stop the server at
// its start rather than fail its first upload.
func Open(ctx context.Context, rawURL string) (*Bucket, error) {
	b, err := urlMux.OpenBucket(ctx, rawURL)
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	if ok, err := b.IsAccessible(ctx); err != nil || !ok {
		_ = b.Close()
		if err == nil {
			err = errors.New("no such bucket")
		}
		return nil, fmt.Errorf("blob: the bucket %s cannot be reached: %w", redact(rawURL), err)
	}
	return &Bucket{bucket: b, removalWait: 30 * time.Second}, nil
}

// redact is rawURL without its query, where credentials may be.
func redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(an invalid URL)"
	}
	u.RawQuery, u.User = "", nil
	return u.String()
}

// FileURL is the URL of a bucket in the local directory dir.
func FileURL(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("blob: %w", err)
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String(), nil
}

// Close releases the bucket's connections.
func (b *Bucket) Close() error { return b.bucket.Close() }

var digestPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// keyPattern matches the key of a stored blob; other keys (uploads and
// removals in progress, the .attrs files of a file:// bucket, leftovers of
// the older local store's renames) are not blobs.
var keyPattern = regexp.MustCompile(`^([0-9a-f]{2})/([0-9a-f]{64})$`)

func key(digest string) string { return digest[:2] + "/" + digest }

func (b *Bucket) now() time.Time {
	if b.Clock != nil {
		return b.Clock()
	}
	return time.Now()
}

// Put streams r into an object of a name of its own under tmp/ while
// hashing it, then copies that to the blob's key (a server-side copy in
// object storage): a blob is visible whole or not at all, and no more than
// the driver's write buffer of it is in memory (for S3, AWS's transfer
// manager: up to 16 MiB, the size it sends in one request, then 8 MiB
// parts). The copy is made also when the same
// bytes are there already (unless stored less than restampAfter ago, see
// place): it stores them anew, and the garbage collection leaves a blob a
// Put just named.
func (b *Bucket) Put(ctx context.Context, r io.Reader, max int64) (string, int64, error) {
	began := b.now()
	tmp, digest, n, err := b.writeUpload(ctx, r, max)
	if err != nil {
		return "", 0, err
	}
	defer func() { _ = b.bucket.Delete(context.WithoutCancel(ctx), tmp) }()
	// A blob's "stored" time is when its upload began (a writer takes its
	// metadata before the bytes). An upload slower than the purge's grace
	// would be placed looking old already, and purged before whatever named
	// it could record the name: a slow one is copied again through this
	// process, stamped now, and that copy is placed.
	if b.now().Sub(began) > restampAfter {
		upload, err := b.bucket.NewReader(ctx, tmp, nil)
		if err != nil {
			return "", 0, fmt.Errorf("blob: %w", err)
		}
		fresh, _, _, err := b.writeUpload(ctx, upload, max)
		_ = upload.Close()
		if err != nil {
			return "", 0, err
		}
		defer func() { _ = b.bucket.Delete(context.WithoutCancel(ctx), fresh) }()
		tmp = fresh
	}
	if err := b.place(ctx, tmp, digest); err != nil {
		return "", 0, err
	}
	return digest, n, nil
}

// restampAfter is how long an upload may take before Put stamps it again:
// far under the purge's grace (graph/jobs.BlobGrace, an hour).
const restampAfter = time.Minute

// writeUpload streams r (at most max bytes) into an object of a name of its
// own under tmp/, stamped stored now, and returns its name, the digest and
// the length of its bytes.
func (b *Bucket) writeUpload(ctx context.Context, r io.Reader, max int64) (tmp, digest string, n int64, err error) {
	tmp = tmpPrefix + rand.Text()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := b.bucket.NewWriter(wctx, tmp, &blob.WriterOptions{ContentType: "application/octet-stream",
		Metadata: map[string]string{storedKey: b.now().UTC().Format(time.RFC3339Nano)}})
	if err != nil {
		return "", "", 0, fmt.Errorf("blob: %w", err)
	}
	h := sha256.New()
	n, err = io.Copy(io.MultiWriter(w, h), io.LimitReader(r, max+1))
	if err == nil && n > max {
		err = ErrTooLarge
	}
	if err != nil {
		cancel() // a writer closed after its context ends writes nothing
		_ = w.Close()
		if errors.Is(err, ErrTooLarge) {
			return "", "", 0, err
		}
		return "", "", 0, fmt.Errorf("blob: %w", err)
	}
	if err := w.Close(); err != nil {
		return "", "", 0, fmt.Errorf("blob: %w", err)
	}
	return tmp, hex.EncodeToString(h.Sum(nil)), n, nil
}

// place copies the upload tmp to the blob's key, and makes sure a removal
// running at the same time does not take it away. Without a rename or a
// conditional delete in object storage, Put and Remove each write first
// and look second: Remove marks itself under removing/ then looks at the
// blob's age, and keeps its mark until its deletion is done; place copies,
// waits until no removal is marked, then looks for the blob. With
// read-after-write consistency (S3, GCS, Azure, a file system) a removal
// that marked itself after the copy sees the blob young and keeps it, and
// one that marked itself before is either still marked when place looks
// for marks (place waits for it) or over by then: either way its deletion
// precedes place's look for the blob, so place sees it and copies again.
// The look for the blob is made whether or not place saw a mark: a whole
// removal can begin before the copy and end before the look for marks.
// The copy and the look are tried again when a file:// bucket's
// attributes are being rewritten (retryBusy).
//
// A blob stored less than restampAfter ago is not copied again, the first
// time round: no purge would take it (its stamp is younger than any
// purge's cutoff, and stamps only grow), and each copy rewrites a file://
// bucket's attributes in place, which readers of the blob meanwhile read
// empty. It is still looked for once no removal is marked, as above: a
// removal that judged an older copy may be deleting it.
func (b *Bucket) place(ctx context.Context, tmp, digest string) error {
	skipCopy := b.storedRecently(ctx, digest)
	for {
		if !skipCopy {
			if err := retryBusy(ctx, func() error { return b.bucket.Copy(ctx, key(digest), tmp, nil) }); err != nil {
				return fmt.Errorf("blob: %w", err)
			}
		}
		skipCopy = false
		if b.afterCopy != nil {
			b.afterCopy()
		}
		if err := b.awaitRemovals(ctx, digest); err != nil {
			return err
		}
		exists, err := retried(ctx, func() (bool, error) { return b.bucket.Exists(ctx, key(digest)) })
		if err != nil {
			return fmt.Errorf("blob: %w", err)
		}
		if exists {
			return nil
		}
	}
}

// storedRecently reports whether the blob digest is there, stored less
// than restampAfter ago (false when that cannot be read).
func (b *Bucket) storedRecently(ctx context.Context, digest string) bool {
	a, err := b.bucket.Attributes(ctx, key(digest))
	return err == nil && b.now().Sub(storedAt(a)) < restampAfter
}

// awaitRemovals waits until no removal of digest is marked. Marks older
// than removalWait were left by a remover that died: they are deleted.
func (b *Bucket) awaitRemovals(ctx context.Context, digest string) error {
	prefix := removingPrefix + digest + "/"
	deadline := time.Now().Add(b.removalWait)
	for {
		marks, _, err := b.bucket.ListPage(ctx, blob.FirstPageToken, 100, &blob.ListOptions{Prefix: prefix})
		switch {
		case err == nil && len(marks) == 0:
			return nil
		case err == nil && time.Now().After(deadline):
			for _, m := range marks {
				if err := b.bucket.Delete(ctx, m.Key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
					return fmt.Errorf("blob: %w", err)
				}
			}
			continue
		case err != nil && (gcerrors.Code(err) != gcerrors.NotFound || time.Now().After(deadline)):
			return fmt.Errorf("blob: %w", err)
		}
		// A removal is marked, or (a file:// bucket, whose listing reads
		// each file it found) a mark went while it was listed: a removal
		// was in progress; look again once it may be over.
		if b.awaitingRemoval != nil {
			b.awaitingRemoval()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Open reads blob digest, as a stream.
func (b *Bucket) Open(ctx context.Context, digest string) (io.ReadCloser, error) {
	if !digestPattern.MatchString(digest) {
		return nil, ErrNotFound
	}
	r, err := retried(ctx, func() (*blob.Reader, error) { return b.bucket.NewReader(ctx, key(digest), nil) })
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, ErrNotFound
	} else if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	return r, nil
}

// retryBusy runs op until it succeeds, finds nothing (NotFound) or has
// failed busyTries times, a little longer apart each time. A file://
// bucket rewrites a blob's attributes in place (truncated, then written)
// whenever the same bytes are stored again, and whoever reads them
// meanwhile, to open or to copy over the blob, reads them empty (EOF): a
// failure that is over within microseconds, which two uploads of one
// file, or one and a download, must not turn into an error. Such a
// failure (an EOF) is tried again for busyWait at least, however many
// tries that takes: on a loaded machine the writer of the attributes may
// not run for tens of milliseconds, and ten tries (45 ms) ran out.
func retryBusy(ctx context.Context, op func() error) error {
	deadline := time.Now().Add(busyWait)
	for try := 1; ; try++ {
		err := op()
		if err == nil || gcerrors.Code(err) == gcerrors.NotFound || ctx.Err() != nil {
			return err
		}
		if try >= busyTries && (!readEmpty(err) || time.Now().After(deadline)) {
			return err
		}
		time.Sleep(time.Duration(min(try, busyTries)) * time.Millisecond)
	}
}

// readEmpty tells an error of attributes read while they were rewritten.
func readEmpty(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// retried is retryBusy for an operation that returns a value.
func retried[T any](ctx context.Context, op func() (T, error)) (T, error) {
	var v T
	err := retryBusy(ctx, func() (err error) {
		v, err = op()
		return err
	})
	return v, err
}

// busyTries is how many times retryBusy runs its operation at least: ten
// tries over 45 ms, then no more unless the attributes were read empty
// (busyWait).
const busyTries = 10

// busyWait is how long retryBusy tries an operation that read attributes
// empty, at least.
const busyWait = 2 * time.Second

// storedAt is when a blob was stored: its "stored" metadata, else (blobs
// of the older local store, whose modification time it set) its
// modification time.
func storedAt(a *blob.Attributes) time.Time {
	if t, err := time.Parse(time.RFC3339Nano, a.Metadata[storedKey]); err == nil {
		return t
	}
	return a.ModTime
}

// List lists the bucket's blobs, reading each one's attributes for when it
// was stored (one metadata request per blob in object storage). It lists
// the 256 directories of blobs one by one (00/ to ff/), never the uploads
// in progress nor the marks of removals beside them: a file:// bucket's
// listing fails when a file it walks vanishes, and uploads come and go.
// A blob removed or stamped again meanwhile is retried too (retryBusy):
// the purge must not fail because the instance is busy.
func (b *Bucket) List(ctx context.Context, fn func(digest string, stored time.Time) error) error {
	for dir := range 256 {
		if err := b.listDir(ctx, fmt.Sprintf("%02x/", dir), fn); err != nil {
			return err
		}
	}
	return nil
}

// listDir lists the blobs under prefix (one of List's directories).
func (b *Bucket) listDir(ctx context.Context, prefix string, fn func(digest string, stored time.Time) error) error {
	it := b.bucket.List(&blob.ListOptions{Prefix: prefix})
	for {
		// A failed page is listed again (the iterator keeps its place): a
		// blob removed while the page was read fails it with NotFound.
		var obj *blob.ListObject
		err := retryListing(ctx, func() error {
			o, err := it.Next(ctx)
			if errors.Is(err, io.EOF) {
				return nil // obj stays nil: the end
			}
			obj = o
			return err
		})
		if err != nil {
			return fmt.Errorf("blob: %w", err)
		}
		if obj == nil {
			return nil
		}
		m := keyPattern.FindStringSubmatch(obj.Key)
		if m == nil || m[2][:2] != m[1] {
			continue
		}
		a, err := retried(ctx, func() (*blob.Attributes, error) { return b.bucket.Attributes(ctx, obj.Key) })
		if gcerrors.Code(err) == gcerrors.NotFound {
			continue // removed meanwhile
		} else if err != nil {
			return fmt.Errorf("blob: %w", err)
		}
		if err := fn(m[2], storedAt(a)); err != nil {
			return err
		}
	}
}

// retryListing is retryBusy for a page of a listing, which NotFound fails
// too (a file removed while the page was read) and is worth trying again.
func retryListing(ctx context.Context, op func() error) error {
	return retryBusy(ctx, func() error {
		err := op()
		if gcerrors.Code(err) == gcerrors.NotFound {
			return errListedGone
		}
		return err
	})
}

// errListedGone stands for a NotFound of a listing, which retryBusy would
// not try again.
var errListedGone = errors.New("a file vanished while it was listed")

// Remove marks the removal (see place), then deletes the blob if it was
// stored before storedBefore, and removes its mark only after the
// deletion. A Put at the same time copies the blob either before Remove
// looks at its age, and Remove sees it young, or after, when the mark is
// there already: the Put then looks for the blob only once the mark is
// gone (waiting for a mark it sees), so after the deletion, and stores it
// again. So a blob a Put stored at or after storedBefore is there when the
// Put returns, whatever the timing.
func (b *Bucket) Remove(ctx context.Context, digest string, storedBefore time.Time) (bool, error) {
	if !digestPattern.MatchString(digest) {
		return false, ErrNotFound
	}
	// A mark of its own: two removals at once must not end each other's.
	mark := removingPrefix + digest + "/" + rand.Text()
	if err := b.bucket.WriteAll(ctx, mark, nil, &blob.WriterOptions{ContentType: "application/octet-stream"}); err != nil {
		return false, fmt.Errorf("blob: %w", err)
	}
	defer func() { _ = b.bucket.Delete(context.WithoutCancel(ctx), mark) }()
	// An upload of the same bytes may be rewriting them (retryBusy).
	a, err := retried(ctx, func() (*blob.Attributes, error) { return b.bucket.Attributes(ctx, key(digest)) })
	if gcerrors.Code(err) == gcerrors.NotFound {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("blob: %w", err)
	}
	if !storedAt(a).Before(storedBefore) {
		return false, nil
	}
	if b.beforeDelete != nil {
		b.beforeDelete()
	}
	if err := b.bucket.Delete(ctx, key(digest)); gcerrors.Code(err) == gcerrors.NotFound {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("blob: %w", err)
	}
	return true, nil
}
