package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/blob"
)

// BlobGrace is the age under which a blob is never collected, referenced or
// not: an upload (a file, a git import's assets, an integration's images)
// stores its bytes before the row naming them commits, and a blob that young
// may be one in flight.
const BlobGrace = time.Hour

// blobBatch is how many digests one query checks.
const blobBatch = 500

// collectBlobs removes the blobs stored before now - BlobGrace that nothing
// in the database names (store.UnreferencedBlobs): once the purge has
// removed the revisions of deleted spaces, their files' bytes go too.
//
// It is safe against uploads at the same time. A blob is chosen by its age
// first, then by the database; a row naming it commits only after its bytes
// were stored by a Put, which makes the blob young again (store/blob), and
// Remove never removes a blob stored since the cutoff, whatever the timing.
// So what an upload names is either young (left alone) or was named by a
// row at the time of the query (also left alone): rows are only ever copied
// from rows (a new revision, a duplicate), never made up from a digest.
func collectBlobs(ctx context.Context, db *store.DB, blobs blob.Store, now time.Time, log *slog.Logger) error {
	if blobs == nil {
		return nil
	}
	cutoff := now.Add(-BlobGrace)
	var batch []string
	removed := 0
	flush := func() error {
		unreferenced, err := store.UnreferencedBlobs(ctx, db, batch)
		if err != nil {
			return err
		}
		batch = batch[:0]
		for _, digest := range unreferenced {
			gone, err := blobs.Remove(ctx, digest, cutoff)
			if err != nil {
				return err
			}
			if gone {
				removed++
			}
		}
		return nil
	}
	err := blobs.List(ctx, func(digest string, stored time.Time) error {
		if !stored.Before(cutoff) {
			return nil
		}
		if batch = append(batch, digest); len(batch) == blobBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if removed > 0 && log != nil {
		log.InfoContext(ctx, "removed unreferenced blobs", "count", removed, "storedBefore", cutoff)
	}
	return err
}
