package store

import (
	"context"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// UnreferencedBlobs returns those of these blob digests that nothing in the
// database names: no file of any revision of any space (deleted spaces
// included, until the purge removes them: they may be restored), and no
// integration's icon or preview image. Those are every reference to the
// blob store (graph: the Blobs.Put callers).
func UnreferencedBlobs(ctx context.Context, db bun.IDB, digests []string) ([]string, error) {
	var out []string
	if len(digests) == 0 {
		return out, nil
	}
	// The files are every organization's (revision_files is distributed
	// by organization): each source of references is asked once for all
	// the digests, not correlated with each (Citus correlates no subquery
	// with a list).
	list := pgdialect.Array(digests)
	err := db.NewRaw(`SELECT unnest(?::text[])
		EXCEPT SELECT blob_sha256 FROM revision_files WHERE blob_sha256 = ANY(?::text[])
		EXCEPT SELECT icon->>'sha256' FROM integrations WHERE icon->>'sha256' = ANY(?::text[])
		EXCEPT SELECT image->>'sha256' FROM integrations, jsonb_array_elements(CASE jsonb_typeof(preview_images) WHEN 'array' THEN preview_images ELSE '[]' END) AS image
			WHERE image->>'sha256' = ANY(?::text[])`, list, list, list, list).Scan(ctx, &out)
	return out, translate(err)
}
