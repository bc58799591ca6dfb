// Package blobtest serves object storage to tests: an in-process S3 server
// (gofakes3) that the server's s3:// driver talks to over HTTP, as it talks
// to AWS S3 or MinIO.
package blobtest

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// S3 starts an S3 server with one empty bucket, for the test's duration,
// and returns the bucket's URL for blob.Open (DOCSAPI_BLOB_URL). The
// server checks no signatures: the URL asks for anonymous requests, so
// that no AWS credentials of the environment are needed or used.
func S3(t testing.TB) string {
	t.Helper()
	backend := s3mem.New()
	const bucket = "docsapi-test"
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog())).Server())
	t.Cleanup(srv.Close)
	return URL(bucket, srv.URL)
}

// URL is the s3:// URL of bucket on the S3-compatible server at endpoint
// (an http:// address), as an operator writes it for MinIO.
func URL(bucket, endpoint string) string {
	q := url.Values{}
	q.Set("endpoint", endpoint)
	q.Set("region", "us-east-1")
	q.Set("use_path_style", "true")
	q.Set("anonymous", "true")
	if strings.HasPrefix(endpoint, "http://") {
		q.Set("disable_https", "true")
	}
	return "s3://" + bucket + "?" + q.Encode()
}
