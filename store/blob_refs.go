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
	err := db.NewRaw(`SELECT d FROM unnest(?::text[]) AS d
		WHERE NOT EXISTS (SELECT 1 FROM revision_files WHERE blob_sha256 = d)
		  AND NOT EXISTS (SELECT 1 FROM integrations
		        WHERE icon->>'sha256' = d OR preview_images @> jsonb_build_array(jsonb_build_object('sha256', d)))`,
		pgdialect.Array(digests)).Scan(ctx, &out)
	return out, translate(err)
}
