package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// postTransport serves GraphQL requests POSTed as JSON, as gqlgen's
// transport.POST does (same media types, statuses and envelope), but writes
// the response without re-encoding its data.
//
// gqlgen's transport encodes the response with json.Marshal, and
// json.Marshal validates and compacts a json.RawMessage byte by byte: for
// the data of a site's whole tree (some 200 KB) that is a second pass over
// everything the executor has just written, about a sixth of the request's
// CPU. The executor's output is JSON it wrote itself, so this transport
// copies it as is and encodes only the small members around it.
type postTransport struct{}

var _ graphql.Transport = postTransport{}

const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

func (postTransport) Supports(r *http.Request) bool {
	if r.Header.Get("Upgrade") != "" {
		return false
	}
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && r.Method == http.MethodPost && mediaType == mediaJSON
}

func (postTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	contentType := responseMediaType(r)
	w.Header().Set("Content-Type", contentType)
	start := graphql.Now()

	body, err := io.ReadAll(r.Body)
	if err != nil {
		status, message := http.StatusBadRequest, "could not read the request body"
		if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
			status, message = http.StatusRequestEntityTooLarge, "the request body is too large"
		}
		w.WriteHeader(status)
		writeResponse(w, exec.DispatchError(ctx, gqlerror.List{gqlerror.Errorf("%s", message)}))
		return
	}
	params := &graphql.RawParams{}
	// documentId: the persisted-documents draft's name for a registered
	// document (trusted.go), which RawParams has no member for.
	request := struct {
		*graphql.RawParams
		DocumentID string `json:"documentId"`
	}{RawParams: params}
	decoder := json.NewDecoder(bytes.NewReader(body))
	decoder.UseNumber()
	if err := decoder.Decode(&request); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		writeResponse(w, exec.DispatchError(ctx, gqlerror.List{gqlerror.Errorf("the request body is not a JSON GraphQL request: %v", err)}))
		return
	}
	ctx = withDocumentID(ctx, request.DocumentID)
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	rc, opErr := exec.CreateOperationContext(ctx, params)
	if opErr != nil {
		// A request that is not a valid operation: 422 as gqlgen answers it
		// for application/json, 400 for the GraphQL-over-HTTP media type.
		status := http.StatusOK
		if errcode.GetErrorKind(opErr) == errcode.KindProtocol {
			status = http.StatusUnprocessableEntity
			if contentType == mediaGraphQLResponse {
				status = http.StatusBadRequest
			}
		}
		w.WriteHeader(status)
		writeResponse(w, exec.DispatchError(graphql.WithOperationContext(ctx, rc), opErr))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, rc)
	writeResponse(w, responses(ctx))
}

// responseMediaType is the media type of the answer, from the Accept header
// as gqlgen's transport reads it: application/json unless the client asks
// for application/graphql-response+json, or accepts neither JSON type.
func responseMediaType(r *http.Request) string {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return mediaJSON
	}
	for part := range strings.SplitSeq(accept, ",") {
		mediaType, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mediaType {
		case "*/*", "application/*", mediaJSON:
			return mediaJSON
		case mediaGraphQLResponse:
			return mediaGraphQLResponse
		}
	}
	return mediaGraphQLResponse
}

// writeResponse writes resp as json.Marshal would (same members, same
// order, same omissions) except that data, which the executor wrote as JSON,
// is written as it is rather than validated and compacted again, and
// without being copied: the members before and after it are put together
// apart, and the three parts written in turn (the response writer buffers
// them).
func writeResponse(w io.Writer, resp *graphql.Response) {
	if resp == nil {
		resp = &graphql.Response{}
	}
	var b bytes.Buffer
	members := 0
	member := func(name string, value any) {
		raw, err := json.Marshal(value)
		if err != nil {
			// Errors and extensions are maps and lists of plain values;
			// should one ever fail to encode, the client still gets JSON.
			raw, _ = json.Marshal(err.Error())
		}
		if members > 0 {
			b.WriteByte(',')
		}
		members++
		b.WriteString(`"` + name + `":`)
		b.Write(raw)
	}
	b.WriteByte('{')
	if len(resp.Errors) > 0 {
		member("errors", resp.Errors)
	}
	if members > 0 {
		b.WriteByte(',')
	}
	members++
	b.WriteString(`"data":`)
	data := []byte(resp.Data)
	if len(data) == 0 {
		data = []byte("null")
	}
	_, _ = w.Write(b.Bytes())
	_, _ = w.Write(data)
	b.Reset()
	if resp.Label != "" {
		member("label", resp.Label)
	}
	if len(resp.Path) > 0 {
		member("path", resp.Path)
	}
	if resp.HasNext != nil {
		member("hasNext", *resp.HasNext)
	}
	if len(resp.Extensions) > 0 {
		member("extensions", resp.Extensions)
	}
	b.WriteByte('}')
	_, _ = w.Write(b.Bytes())
}
