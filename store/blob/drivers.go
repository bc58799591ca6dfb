package blob

import (
	"context"
	"fmt"
	"net/url"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/s3blob" // s3://: AWS S3 and S3-compatible stores (MinIO, Ceph, R2...)
)

// fileMux opens file:// buckets: the directory is created if missing, and
// an upload's temporary file is written inside the bucket's directory
// rather than in os.TempDir, which is often another file system (a tmpfs),
// where the final rename would fail.
var fileMux = func() *blob.URLMux {
	m := new(blob.URLMux)
	m.RegisterBucket(fileblob.Scheme, &fileblob.URLOpener{Options: fileblob.Options{CreateDir: true, NoTempDir: true, DirFileMode: 0o750}})
	return m
}()

// urlMux opens a bucket URL: file:// by fileMux, the other schemes by the
// drivers imported above.
var urlMux = opener(func(ctx context.Context, raw string) (*blob.Bucket, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid bucket URL: %w", err)
	}
	if u.Scheme == fileblob.Scheme {
		return fileMux.OpenBucketURL(ctx, u)
	}
	return blob.DefaultURLMux().OpenBucketURL(ctx, u)
})

type opener func(ctx context.Context, raw string) (*blob.Bucket, error)

func (o opener) OpenBucket(ctx context.Context, raw string) (*blob.Bucket, error) { return o(ctx, raw) }
