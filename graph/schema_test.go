package graph

import (
	"bytes"
	"os"
	"testing"
)

// go generate ./graph trims gqlgen's executor (graph/internal/execpatch);
// generating without it would quietly bring back a map built per request.
func TestExecutorPatched(t *testing.T) {
	src, err := os.ReadFile("generated/generated.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(src, []byte("graphql.BuildUnmarshalerMap()")) {
		t.Error("graph/generated/generated.go builds the input unmarshaler map: run go generate ./graph, which patches it")
	}
}
