package rest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestRestBody(t *testing.T) {
	for _, tc := range []struct {
		data string
		path []string
		want string
	}{
		{`{"space":{"id":"a","deletedAt":null,"title":"T"}}`, []string{"space"}, `{"id":"a","title":"T"}`},
		{`{"space":null}`, []string{"space"}, ``},
		{`{"a":{"b":{"x":1,"y":null}}}`, []string{"a", "b"}, `{"x":1}`},
		{`{"o":{"defaultRole":null,"hostname":null,"n":[null,{"k":null,"v":"\"}\\"}]}}`, []string{"o"}, `{"defaultRole":null,"n":[null,{"v":"\"}\\"}]}`},
		{`{"o":{"first":null,"second":null}}`, []string{"o"}, `{}`},
		{`{"o":{"a":true,"b":null,"c":false}}`, []string{"o"}, `{"a":true,"c":false}`},
		{`{"x":{"s":"nul"},"o":{ "a" : null , "b" : [ 1 , null ] }}`, []string{"o"}, `{"b":[1,null]}`},
		{`{"o":{"a":{"b":{"c":null}},"d":"null"}}`, []string{"o"}, `{"a":{"b":{}},"d":"null"}`},
	} {
		got, err := restBody([]byte(tc.data), tc.path)
		if err != nil || string(got) != tc.want {
			t.Errorf("restBody(%s, %v) = %s, %v; want %s", tc.data, tc.path, got, err, tc.want)
		}
		if tc.want != "" && !json.Valid(got) {
			t.Errorf("invalid JSON %s", got)
		}
	}
	for _, bad := range []string{`{"o":{"a":}`, `{"o":{"a":"x}}`, `{"o":[1,2}`, `{"p":1}`} {
		if _, err := restBody([]byte(bad), []string{"o"}); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// FuzzRestBody checks against a decode-and-re-encode reference: same values,
// minus nulls.
func FuzzRestBody(f *testing.F) {
	f.Add(`{"a":1,"b":null,"c":[{"d":null,"e":"x"}]}`)
	f.Add(`{"s":"a\"b\\","n":null,"o":{"defaultLevel":null}}`)
	f.Fuzz(func(t *testing.T, s string) {
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		if _, ok := v.(map[string]any); !ok || hasDuplicateKeys(s) {
			return // gqlgen never writes an object twice the same key
		}
		got, err := restBody([]byte(`{"r":`+s+`}`), []string{"r"})
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		var g any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%s gave invalid %s", s, got)
		}
		if !reflect.DeepEqual(g, withoutNulls(v)) {
			t.Fatalf("%s: got %s", s, got)
		}
	})
}

func withoutNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil && !strings.EqualFold(k, "defaultRole") && k != "defaultLevel" {
				delete(x, k)
				continue
			}
			x[k] = withoutNulls(e)
		}
	case []any:
		for i, e := range x {
			x[i] = withoutNulls(e)
		}
	}
	return v
}

func hasDuplicateKeys(s string) bool {
	dec := json.NewDecoder(strings.NewReader(s))
	type frame struct {
		keys   map[string]bool
		object bool
		expect bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		top := func() *frame {
			if len(stack) == 0 {
				return nil
			}
			return stack[len(stack)-1]
		}
		f := top()
		if f != nil && f.object && f.expect {
			if k, ok := tok.(string); ok {
				if f.keys[k] {
					return true
				}
				f.keys[k] = true
				f.expect = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, object: true, expect: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if f := top(); f != nil && f.object {
			f.expect = true
		}
	}
}
