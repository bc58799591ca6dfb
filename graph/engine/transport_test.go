package engine

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// writeResponse writes what json.Marshal writes of a response, members in
// the same order, without compacting the data again.
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
		var got bytes.Buffer
		writeResponse(&got, resp)
		if resp == nil {
			resp = &graphql.Response{}
		}
		want, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got.Bytes(), &g); err != nil {
			t.Fatalf("%s: %v", got.Bytes(), err)
		}
		_ = json.Unmarshal(want, &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("wrote %s, json.Marshal %s", got.Bytes(), want)
		}
		// The same members in the same order.
		if g, w := memberNames(t, got.Bytes()), memberNames(t, want); !reflect.DeepEqual(g, w) {
			t.Errorf("members %v, json.Marshal's %v", g, w)
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
