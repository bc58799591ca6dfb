package rest

import (
	"testing"

	"github.com/docsapi/docsapi/graph"
)

// Every server of a process shares its schema's surface: built by the
// first, the same for the others, and left as it was by encoding the
// OpenAPI document with a server's address.
func TestSurfaceIsBuiltOncePerSchema(t *testing.T) {
	schema := graph.Schema()
	first, err := surfaceOf(schema)
	if err != nil {
		t.Fatal(err)
	}
	a, err := encodeOpenAPI(first.openAPI, "https://a.example")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := encodeOpenAPI(first.openAPI, "https://b.example/"); err != nil {
		t.Fatal(err)
	}
	again, err := surfaceOf(graph.Schema())
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Fatal("a second call built the surface again")
	}
	if _, ok := first.openAPI["servers"]; ok {
		t.Fatal("encoding the document added its servers to the shared tree")
	}
	if b, _ := encodeOpenAPI(first.openAPI, "https://a.example"); string(b.body) != string(a.body) || b.etag != a.etag {
		t.Fatal("the document with the same address differs")
	}
}
