package engine

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

// writeJSONString must write what gqlgen's String marshaler writes, for
// every byte value, valid or invalid UTF-8.
func TestWriteJSONString(t *testing.T) {
	cases := []string{"", "plain", `quote " and \ backslash`, "tab\tcr\rnl\n", "é ✓ 😀", "\xff\xfe invalid", "\u2028\u2029", "<script>&"}
	var all []byte
	for b := range 256 {
		all = append(all, byte(b))
	}
	cases = append(cases, string(all))
	for _, s := range cases {
		var got, want bytes.Buffer
		writeJSONString(&got, s)
		graphql.MarshalString(s).MarshalGQL(&want)
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%q: wrote %q, gqlgen writes %q", s, got.Bytes(), want.Bytes())
		}
	}
}

// Booleans and integers are written byte for byte as gqlgen's marshalers
// write them.
func TestDirectBoolAndInt(t *testing.T) {
	type leaf struct {
		b bool
		i int
	}
	writeBool := Bool(func(l *leaf) bool { return l.b }).write
	writeInt := Int(func(l *leaf) int { return l.i }).write
	for _, l := range []leaf{{true, 0}, {false, -1}, {true, 42}, {false, math.MaxInt}, {true, math.MinInt}} {
		var got, want bytes.Buffer
		writeBool(context.Background(), &got, &l)
		writeInt(context.Background(), &got, &l)
		graphql.MarshalBoolean(l.b).MarshalGQL(&want)
		graphql.MarshalInt(l.i).MarshalGQL(&want)
		if got.String() != want.String() {
			t.Errorf("%+v: wrote %s, gqlgen %s", l, got.String(), want.String())
		}
	}
}
