package blob

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // azblob://, which the command has under the azblob tag (s3:// comes with blobtest)
)

// A build without a bucket's driver refuses its URL, naming the build tag
// that brings it; gs:// is refused by every build, pointing to S3's API;
// the tests' build has every driver.
func TestCheckDriverNamesTheBuildTag(t *testing.T) {
	without := new(blob.URLMux)
	for u, want := range map[string]string{
		"s3://files?region=eu-west-1": "build it with `go build -tags s3 ./cmd/docsapi` (every driver: -tags s3,azblob)",
		"azblob://files":              "build it with `go build -tags azblob ./cmd/docsapi`",
		"gs://files":                  "reach Cloud Storage through its S3-compatible API",
	} {
		if err := checkDriver(without, u); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s without its driver: %v, want an error saying %q", u, err, want)
		}
	}
	if err := checkDriver(without, "file:///srv/files"); err != nil {
		t.Errorf("file:// needs no tag: %v", err)
	}
	for _, u := range []string{"s3://files", "azblob://files", "file:///srv/files"} {
		if err := CheckDriver(u); err != nil {
			t.Errorf("the tests' build: %v", err)
		}
	}
}

// An azblob:// bucket is opened by the Azure driver, which asks the service
// (here at an emulator's address, reached with a SAS token as Azure's SDK
// sends a key over https only) whether the container is there.
func TestOpenAzureBlob(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.Header().Set("x-ms-error-code", "ContainerNotFound")
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	for k, v := range map[string]string{
		"AZURE_STORAGE_ACCOUNT": "devstoreaccount1", "AZURE_STORAGE_DOMAIN": strings.TrimPrefix(srv.URL, "http://"),
		"AZURE_STORAGE_PROTOCOL": "http", "AZURE_STORAGE_SAS_TOKEN": "sv=2023-11-03&sp=r&sig=test",
		"AZURE_STORAGE_KEY": "", "AZURE_STORAGE_CONNECTION_STRING": "",
	} {
		t.Setenv(k, v)
	}
	b, err := Open(context.Background(), "azblob://files")
	if err == nil {
		b.Close()
		t.Fatal("opened a container the service does not have")
	}
	if !strings.Contains(err.Error(), "cannot be reached") || asked.Load() == 0 {
		t.Fatalf("%v (the service was asked %d times), want the driver to ask the service", err, asked.Load())
	}
}
