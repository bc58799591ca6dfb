package wholeserver_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi/store"
)

func TestFiles(t *testing.T) {
	t.Parallel()
	e := newCREnv(t)
	base := e.spaceBase

	out := upload(t, e.alice, e.space, "", "notes.txt", "text/plain", []byte("hello files"))
	if len(out.Errors) > 0 {
		t.Fatalf("upload: %+v", out.Errors)
	}
	var up struct {
		UploadFile struct {
			ID, Name, ContentType, DownloadURL string
			Size                               int
		}
	}
	_ = json.Unmarshal(out.Data, &up)
	f := up.UploadFile
	if f.Name != "notes.txt" || f.Size != 11 || !strings.HasPrefix(f.ContentType, "text/plain") {
		t.Fatalf("uploaded: %+v", f)
	}
	if n := e.alice.Do("GET", base+"/content/files", nil).Expect(http.StatusOK).JSON()["count"]; n != 1.0 {
		t.Errorf("files: %v", n)
	}
	got := e.alice.Do("GET", base+"/content/files/"+f.ID, nil).Expect(http.StatusOK).JSON()
	download := got["downloadURL"].(string)

	// The signed address serves the bytes without a token.
	resp, err := http.Get(download)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "hello files" || resp.Header.Get("Content-Security-Policy") != "sandbox" {
		t.Errorf("download: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	for _, bad := range []string{strings.Replace(download, "signature=", "signature=x", 1), strings.Replace(download, f.ID, "other", 1)} {
		if resp, _ := http.Get(bad); resp.StatusCode != http.StatusNotFound {
			t.Errorf("altered address %s: %d", bad, resp.StatusCode)
		}
	}
	e.env.Clock.Advance(2 * time.Hour)
	if resp, _ := http.Get(download); resp.StatusCode != http.StatusNotFound {
		t.Errorf("expired address: %d", resp.StatusCode)
	}

	// Images get their size.
	var img bytes.Buffer
	_ = png.Encode(&img, image.NewRGBA(image.Rect(0, 0, 7, 3)))
	out = upload(t, e.alice, e.space, "", "pixel.png", "image/png", img.Bytes())
	if !strings.Contains(string(out.Data), `"dimensions":{"width":7,"height":3}`) {
		t.Errorf("image: %s %+v", out.Data, out.Errors)
	}

	// Too large, or not allowed: refused, and nothing changes.
	before := e.alice.Do("GET", base+"/content", nil).Expect(http.StatusOK).String("id")
	if out := upload(t, e.alice, e.space, "", "big.bin", "application/octet-stream", bytes.Repeat([]byte("x"), 1<<20+1)); len(out.Errors) == 0 ||
		out.Errors[0].Extensions["status"] != 400.0 {
		t.Errorf("too large: %+v", out.Errors)
	}
	reader := e.env.NewUser("Reader")
	reader.Join(e.org, store.RoleRead)
	if out := upload(t, reader, e.space, "", "r.txt", "text/plain", []byte("r")); len(out.Errors) == 0 || out.Errors[0].Extensions["status"] != 403.0 {
		t.Errorf("a reader's upload: %+v", out.Errors)
	}
	if after := e.alice.Do("GET", base+"/content", nil).Expect(http.StatusOK).String("id"); after != before {
		t.Error("a refused upload made a revision")
	}

	// In a change request: not in the space until merged.
	cr := e.open("With a file")
	inCR := uploadedFile(t, e.alice, e.space, cr, "draft.txt", []byte("draft"))
	e.alice.Do("GET", base+"/content/files/"+inCR, nil).Expect(http.StatusNotFound)
	e.alice.Do("GET", e.crBase+"/"+cr+"/content/files/"+inCR, nil).Expect(http.StatusOK)
	e.alice.Do("POST", e.crBase+"/"+cr+"/merge", nil).Expect(http.StatusOK)
	e.alice.Do("GET", base+"/content/files/"+inCR, nil).Expect(http.StatusOK)

	// Deleting: gone from the new revision, kept by the old one.
	withFile := e.alice.Do("GET", base+"/content", nil).Expect(http.StatusOK).String("id")
	var del struct{ DeleteFile bool }
	gql(t, e.alice, `mutation($s: ID!, $f: ID!) { deleteFile(spaceId: $s, fileId: $f) }`, map[string]any{"s": e.space, "f": f.ID}, &del)
	if !del.DeleteFile {
		t.Error("deleteFile answered false")
	}
	e.alice.Do("GET", base+"/content/files/"+f.ID, nil).Expect(http.StatusNotFound)
	e.alice.Do("GET", base+"/revisions/"+withFile+"/files/"+f.ID, nil).Expect(http.StatusOK)
	gql(t, e.alice, `mutation($s: ID!, $f: ID!) { deleteFile(spaceId: $s, fileId: $f) }`, map[string]any{"s": e.space, "f": f.ID}, &del)
	if del.DeleteFile {
		t.Error("deleting a deleted file answered true")
	}
}
