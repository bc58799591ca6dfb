package servertest

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/textproto"
)

// UploadRequest is a GraphQL multipart request (the multipart request
// specification gqlgen serves) to baseURL's /graphql, with token: query runs
// with vars, whose "file" variable is the uploaded file name with
// contentType and content.
func UploadRequest(baseURL, token, query string, vars map[string]any, name, contentType string, content []byte) *http.Request {
	withFile := make(map[string]any, len(vars)+1)
	for k, v := range vars {
		withFile[k] = v
	}
	withFile["file"] = nil
	ops, _ := json.Marshal(map[string]any{"query": query, "variables": withFile})
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
	req, _ := http.NewRequest("POST", baseURL+"/graphql", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}
