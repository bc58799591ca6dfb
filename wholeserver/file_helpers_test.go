package wholeserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
)

const uploadFileDocument = `mutation($s: ID!, $cr: ID, $file: Upload!) { uploadFile(spaceId: $s, changeRequestId: $cr, file: $file) { id name contentType size downloadURL dimensions { width height } } }`

// upload sends a file to the space (or change request cr, when not "") in
// a GraphQL multipart request, and returns the response.
func upload(t *testing.T, u *servertest.User, space, cr, name, contentType string, content []byte) *servertest.GraphQLResponse {
	t.Helper()
	vars := map[string]any{"s": space}
	if cr != "" {
		vars["cr"] = cr
	}
	req := servertest.UploadRequest(u.Env.URL, u.Token, uploadFileDocument, vars, name, contentType, content)
	return sendUpload(t, req)
}

// sendUpload sends an upload request and returns its GraphQL response,
// with its HTTP status.
func sendUpload(t *testing.T, req *http.Request) *servertest.GraphQLResponse {
	t.Helper()
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
