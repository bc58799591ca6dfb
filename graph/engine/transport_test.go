package engine

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// writeResponse writes what json.Marshal writes of a response, members in
// the same order, without compacting the data again; without its data entry
// for a request error.
func TestWriteResponse(t *testing.T) {
	yes := true
	for _, resp := range []*graphql.Response{
		nil,
		{},
		{Data: json.RawMessage(`{"a":1,"b":"<&>"}`)},
		{Errors: gqlerror.List{{Message: "bad", Path: ast.Path{ast.PathName("a"), ast.PathIndex(1)}, Extensions: map[string]any{"code": "X"}}}},
		{Data: json.RawMessage(`null`), Errors: gqlerror.List{{Message: "x"}}, Extensions: map[string]any{"stats": map[string]any{"n": 1}}},
		{Data: json.RawMessage(`{}`), Label: "l", Path: ast.Path{ast.PathName("p")}, HasNext: &yes},
	} {
		for _, withData := range []bool{true, false} {
			var got bytes.Buffer
			writeResponse(&got, resp, withData)
			if resp == nil {
				resp = &graphql.Response{}
			}
			want, err := json.Marshal(resp)
			if err != nil {
				t.Fatal(err)
			}
			var g, w map[string]any
			if err := json.Unmarshal(got.Bytes(), &g); err != nil {
				t.Fatalf("%s: %v", got.Bytes(), err)
			}
			_ = json.Unmarshal(want, &w)
			wantNames := memberNames(t, want)
			if !withData {
				delete(w, "data")
				wantNames = slices.DeleteFunc(wantNames, func(n string) bool { return n == "data" })
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("withData %v: wrote %s, json.Marshal %s", withData, got.Bytes(), want)
			}
			// The same members in the same order.
			if g := memberNames(t, got.Bytes()); !slices.Equal(g, wantNames) {
				t.Errorf("withData %v: members %v, json.Marshal's %v", withData, g, wantNames)
			}
		}
	}
}

// memberNames lists the names of a JSON object's members, in order.
func memberNames(t *testing.T, b []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(b))
	var names []string
	_, _ = dec.Token() // {
	for dec.More() {
		name, _ := dec.Token()
		names = append(names, name.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

// The answer's media type, negotiated from Accept as the GraphQL over HTTP
// specification and the clients that follow it expect.
func TestResponseMediaType(t *testing.T) {
	for accept, want := range map[string]string{
		"":                                  mediaJSON,
		"*/*":                               mediaJSON,
		"application/*":                     mediaJSON,
		"application/json":                  mediaJSON,
		"application/json; charset=utf-8":   mediaJSON,
		"application/graphql-response+json": mediaGraphQLResponse,
		// Apollo Client 4
		"application/graphql-response+json,application/json;q=0.9": mediaGraphQLResponse,
		// urql: equal qualities, the first listed wins
		"application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed": mediaGraphQLResponse,
		"application/json, application/graphql-response+json":                                                               mediaJSON,
		"application/graphql-response+json;q=0.5, application/json":                                                         mediaJSON,
		"text/html, */*;q=0.1": mediaJSON,
		"text/plain":           mediaGraphQLResponse,
		"application/json;q=0, application/graphql-response+json;q=0.1": mediaGraphQLResponse,
	} {
		r, _ := http.NewRequest("POST", "/graphql", nil)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		if got := responseMediaType(r); got != want {
			t.Errorf("Accept %q: %s, want %s", accept, got, want)
		}
	}
}
