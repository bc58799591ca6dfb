package condition

import (
	"strings"
	"testing"
)

func TestEvaluate(t *testing.T) {
	visitor := map[string]any{"claims": map[string]any{
		"isBetaUser": true,
		"plan":       "pro",
		"roles":      []any{"admin", "editor"},
		"age":        float64(42),
		"unsigned":   map[string]any{"language": "fr"},
	}}
	for _, c := range []struct {
		src  string
		want bool
		err  string
	}{
		{`visitor.claims.isBetaUser == true`, true, ""},
		{`visitor.claims.isBetaUser === false`, false, ""},
		{`visitor.claims.plan === "pro" && visitor.claims.age >= 18`, true, ""},
		{`visitor.claims.roles.includes("admin")`, true, ""},
		{`visitor.claims.unsigned.language.startsWith("f")`, true, ""},
		{`visitor.claims.missing === undefined`, true, ""},
		{`!visitor.claims.trial`, true, ""},
		// Values that are not booleans, and errors, are false.
		{`visitor.claims.plan`, false, "not a boolean"},
		{`visitor.claims.missing.deeper`, false, "TypeError"},
		{`visitor.claims.plan.repeat(1e9) == ""`, false, "may not call"},
		{`Array(1e9).join() == ""`, false, "may not call"},
		{`new Date() > 0`, false, "construct"},
		{`/a+/.test(visitor.claims.plan)`, false, "may not call"},
		{`visitor.claims["plan"]() == 1`, false, "may not call"},
		{`visitor.claims.x = true`, false, "assignment"},
		{"", false, "must not be empty"},
	} {
		got, err := Evaluate(c.src, visitor)
		if got != c.want {
			t.Errorf("%q = %v, want %v (err %v)", c.src, got, c.want, err)
		}
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.src, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want one mentioning %q", c.src, err, c.err)
		}
	}
}

// A condition cannot leave anything behind for the next visitor: runtimes
// are reused.
func TestEvaluateLeavesNothingBehind(t *testing.T) {
	if _, err := Evaluate(`visitor.claims.a === 1`, map[string]any{"claims": map[string]any{"a": float64(1)}}); err != nil {
		t.Fatal(err)
	}
	got, err := Evaluate(`visitor.claims.a === undefined`, map[string]any{"claims": map[string]any{}})
	if err != nil || !got {
		t.Fatalf("the second visitor saw the first one's claims: %v %v", got, err)
	}
}

func BenchmarkEvaluate(b *testing.B) {
	visitor := map[string]any{"claims": map[string]any{"plan": "pro", "roles": []any{"a", "b"}}}
	for b.Loop() {
		if ok, err := Evaluate(`visitor.claims.plan === "pro" && visitor.claims.roles.includes("b")`, visitor); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
