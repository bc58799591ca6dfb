package rest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

const uploadFileDocument = `mutation($s: ID!, $cr: ID, $file: Upload!) { uploadFile(spaceId: $s, changeRequestId: $cr, file: $file) { id name contentType size downloadURL dimensions { width height } } }`

// upload sends a file to the space (or change request cr, when not "") in
// a GraphQL multipart request, and returns the response.
func upload(t *testing.T, u *servertest.User, space, cr, name, contentType string, content []byte) *servertest.GraphQLResponse {
	t.Helper()
	vars := map[string]any{"s": space, "file": nil}
	if cr != "" {
		vars["cr"] = cr
	}
	ops, _ := json.Marshal(map[string]any{
		"query":     uploadFileDocument,
		"variables": vars,
	})
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("operations", string(ops))
	_ = mw.WriteField("map", `{"0": ["variables.file"]}`)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="0"; filename="`+name+`"`)
	h.Set("Content-Type", contentType)
	part, _ := mw.CreatePart(h)
	_, _ = part.Write(content)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", u.Env.URL+"/graphql", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+u.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out servertest.GraphQLResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("upload: %d %s", resp.StatusCode, raw)
	}
	out.Status = resp.StatusCode
	return &out
}

// uploadedFile uploads a file and returns its id.
func uploadedFile(t *testing.T, u *servertest.User, space, cr, name string, content []byte) string {
	t.Helper()
	out := upload(t, u, space, cr, name, "text/plain", content)
	if len(out.Errors) > 0 {
		t.Fatalf("upload: %+v", out.Errors)
	}
	var data struct{ UploadFile struct{ ID string } }
	if err := json.Unmarshal(out.Data, &data); err != nil {
		t.Fatal(err)
	}
	return data.UploadFile.ID
}
