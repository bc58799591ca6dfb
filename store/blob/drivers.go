package blob

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // azblob://: Azure Blob Storage (some 4 MB of binary)
	"gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/s3blob" // s3://: AWS S3 and S3-compatible stores (MinIO, Ceph, R2, Cloud Storage's XML API...)
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

// urlMux opens a bucket URL: file:// by fileMux, s3:// and azblob:// by
// the drivers imported above.
var urlMux = opener(func(ctx context.Context, raw string) (*blob.Bucket, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid bucket URL: %w", err)
	}
	switch u.Scheme {
	case fileblob.Scheme:
		return fileMux.OpenBucketURL(ctx, u)
	case "gs":
		// gocloud's gcsblob brings Cloud Storage's gRPC client and would
		// add some 30 MB (a third) to the binary; Cloud Storage also
		// speaks S3's protocol, which s3blob reaches.
		return nil, errors.New("gs:// is not built in: reach Cloud Storage through its S3-compatible API, s3://BUCKET?endpoint=https://storage.googleapis.com&region=auto with an HMAC key in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	return blob.DefaultURLMux().OpenBucketURL(ctx, u)
})

type opener func(ctx context.Context, raw string) (*blob.Bucket, error)

func (o opener) OpenBucket(ctx context.Context, raw string) (*blob.Bucket, error) { return o(ctx, raw) }
