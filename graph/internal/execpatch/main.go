// Command execpatch trims gqlgen's generated executor after generation
// (go generate ./graph runs it after gqlgen).
//
// gqlgen's Exec builds, on every request, a map from each input type of the
// schema to a method value of that request's execution context, for
// graphql.UnmarshalInputFromContext, a helper for hand-written code that
// neither gqlgen's generated code nor ours calls. With this schema's 80-odd
// input types that is some 85 allocations and 10 µs per request, a quarter
// of the allocations of a REST read of a space. execpatch leaves the map
// empty. If a gqlgen version ever relies on the map, the tests that send
// inputs fail; graph.TestExecutorPatched fails if the patch is missing.
package main

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
)

// The call and its arguments, one unmarshaler per line.
var buildMap = regexp.MustCompile(`graphql\.BuildUnmarshalerMap\(\n(?:\t+ec\.unmarshalInput\w+,\n)+\t+\)`)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: execpatch path/to/generated.go")
		os.Exit(2)
	}
	path := os.Args[1]
	src, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if bytes.Contains(src, []byte("graphql.BuildUnmarshalerMap()")) {
		return // already patched
	}
	if len(buildMap.FindAllIndex(src, -1)) != 1 {
		fmt.Fprintln(os.Stderr, "execpatch: gqlgen's Exec no longer builds the unmarshaler map as expected; review graph/internal/execpatch")
		os.Exit(1)
	}
	out := buildMap.ReplaceAll(src, []byte("graphql.BuildUnmarshalerMap()"))
	if err := os.WriteFile(path, out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
