package wholeserver_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/graph/jobs"
	"github.com/docsapi/docsapi/store/blob"
)

// uploadOnBase uploads a file to the space's content based on revision
// base, and returns the GraphQL response.
func uploadOnBase(t *testing.T, u *servertest.User, space, base, name string, content []byte) *servertest.GraphQLResponse {
	t.Helper()
	req := servertest.UploadRequest(u.Env.URL, u.Token,
		`mutation($s: ID!, $b: ID, $file: Upload!) { uploadFile(spaceId: $s, file: $file, baseRevision: $b) { id } }`,
		map[string]any{"s": space, "b": base}, name, "text/plain", content)
	return sendUpload(t, req)
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// The purge job removes the blobs nothing refers to any more: the files of
// a deleted space once it is purged, and uploads whose edit failed, once
// older than the grace period; never a blob another space, or an
// integration, still names, nor a young one.
func TestPurgeCollectsUnreferencedBlobs(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Jobs: true})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	newSpace := func(title string) string {
		return alice.Do("POST", "/v1/orgs/"+org+"/spaces", map[string]any{"title": title}).Expect(http.StatusCreated).String("id")
	}
	gone, kept := newSpace("Gone"), newSpace("Kept")
	blobs := env.Server.Resolver.Blobs
	stored := func(content []byte) bool {
		t.Helper()
		r, err := blobs.Open(context.Background(), digestOf(content))
		if errors.Is(err, blob.ErrNotFound) {
			return false
		} else if err != nil {
			t.Fatal(err)
		}
		r.Close()
		return true
	}

	only := []byte("only in the space to be deleted")
	shared := []byte("in both spaces")
	uploadedFile(t, alice, gone, "", "only.txt", only)
	uploadedFile(t, alice, gone, "", "shared.txt", shared)
	sharedInKept := uploadedFile(t, alice, kept, "", "shared.txt", shared)
	// An upload whose edit is refused (a stale base) stores its bytes, and
	// nothing names them.
	staleBase := alice.Do("GET", "/v1/spaces/"+kept+"/content", nil).Expect(http.StatusOK).String("id")
	uploadedFile(t, alice, kept, "", "moves the content on.txt", []byte("next"))
	refusedOld := []byte("refused long ago")
	if out := uploadOnBase(t, alice, kept, staleBase, "refused.txt", refusedOld); len(out.Errors) == 0 {
		t.Fatal("an upload on a stale base was accepted")
	}
	if !stored(refusedOld) {
		t.Fatal("the refused upload stored nothing: the test would prove nothing")
	}
	// An integration's icon lives in the blob store too.
	alice.Do("POST", "/v1/integrations/gc-icons", publishBody(org, map[string]any{"icon": base64.StdEncoding.EncodeToString(tinyPNG)})).
		Expect(http.StatusOK)

	alice.Do("DELETE", "/v1/spaces/"+gone, nil).Expect(http.StatusNoContent)
	// Past the grace period, before the retention: the deleted space may
	// still be restored, so its files stay; the refused upload goes.
	env.Clock.Advance(jobs.BlobGrace + time.Minute)
	runPurge(t, env)
	if !stored(only) || !stored(shared) {
		t.Fatal("the blobs of a deleted space were removed before it was purged")
	}
	if stored(refusedOld) {
		t.Fatal("an unreferenced blob past the grace period was kept")
	}

	// Purged: the blob only it named goes; the one the other space names,
	// the icon, and a blob younger than the grace period stay.
	env.Clock.Advance(graph.SpaceRetention)
	refusedNow := []byte("refused just now")
	if out := uploadOnBase(t, alice, kept, staleBase, "refused.txt", refusedNow); len(out.Errors) == 0 {
		t.Fatal("an upload on a stale base was accepted")
	}
	runPurge(t, env)
	if stored(only) {
		t.Fatal("the blob of a purged space's file was kept")
	}
	if !stored(shared) || !stored(tinyPNG) || !stored([]byte("next")) {
		t.Fatal("a blob still referenced was removed")
	}
	if !stored(refusedNow) {
		t.Fatal("a blob younger than the grace period was removed")
	}
	// The file of the other space still downloads.
	url := alice.Do("GET", "/v1/spaces/"+kept+"/content/files/"+sharedInKept, nil).Expect(http.StatusOK).String("downloadURL")
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !bytes.Equal(body, shared) {
		t.Fatalf("download after the collection: %d %q", res.StatusCode, body)
	}

	// Once older than the grace period, it goes too.
	env.Clock.Advance(jobs.BlobGrace + time.Minute)
	runPurge(t, env)
	if stored(refusedNow) {
		t.Fatal("an unreferenced blob past the grace period was kept")
	}
	if !stored(shared) || !stored(tinyPNG) {
		t.Fatal("a blob still referenced was removed")
	}
}
