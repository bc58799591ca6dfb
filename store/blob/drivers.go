package blob

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
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

// taggedDrivers are the bucket drivers a build has only under a build tag,
// by URL scheme: s3:// (drivers_s3.go) and azblob:// (drivers_azblob.go).
// Their SDKs are a quarter of the packages the command compiles (229 of
// 901), and a new user's first start would compile them for a file://
// bucket. The tests that open an s3:// bucket get its driver from blobtest,
// and blob's own tests link both, so `go test ./...` needs no tag.
var taggedDrivers = map[string]string{"s3": "s3", "azblob": "azblob"}

// allTags is the -tags argument of a build with every bucket driver
// (docs/operations.md).
const allTags = "s3,azblob"

// CheckDriver reports a bucket URL this build has no driver for, saying how
// to build one that has it: the server refuses such a URL at its start,
// before it starts a database, and never falls back to another store.
func CheckDriver(rawURL string) error { return checkDriver(blob.DefaultURLMux(), rawURL) }

// checkDriver is CheckDriver over the drivers registered in mux.
func checkDriver(mux *blob.URLMux, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("invalid bucket URL: %w", err)
	}
	if u.Scheme == "gs" {
		// gocloud's gcsblob brings Cloud Storage's gRPC client and would
		// add some 30 MB (a third) to the binary; Cloud Storage also
		// speaks S3's protocol, which s3blob reaches.
		return errors.New("gs:// is not built in: reach Cloud Storage through its S3-compatible API, s3://BUCKET?endpoint=https://storage.googleapis.com&region=auto with an HMAC key in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	if tag, ok := taggedDrivers[u.Scheme]; ok && !mux.ValidBucketScheme(u.Scheme) {
		return fmt.Errorf("%s:// buckets need the %s driver, which this docsapi was built without: build it with `go build -tags %s ./cmd/docsapi` (every driver: -tags %s)", u.Scheme, tag, tag, allTags)
	}
	return nil
}

// urlMux opens a bucket URL: file:// by fileMux, s3:// and azblob:// by
// their drivers when the build has them.
var urlMux = opener(func(ctx context.Context, raw string) (*blob.Bucket, error) {
	if err := CheckDriver(raw); err != nil {
		return nil, err
	}
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
