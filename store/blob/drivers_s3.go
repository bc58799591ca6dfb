//go:build s3

package blob

// s3://: AWS S3 and S3-compatible stores (MinIO, Ceph, R2, Cloud Storage's
// XML API...), built with -tags s3.
import _ "gocloud.dev/blob/s3blob"
