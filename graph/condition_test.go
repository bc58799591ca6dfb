package graph

import (
	"strings"
	"testing"
)

func TestCheckCondition(t *testing.T) {
	valid := []string{
		`visitor.claims.isBetaUser == true`,
		`visitor.claims.unsigned.plan === "pro" && !visitor.claims.trial`,
		`["a", "b"].includes(visitor.claims.role)`,
		`visitor.claims.age >= 18 // adults`,
		`{a: 1}.a == 1`,
		`(visitor.claims.x || visitor.claims.y) ? true : false`,
	}
	for _, c := range valid {
		if err := checkCondition("condition", c); err != nil {
			t.Errorf("%q rejected: %v", c, err)
		}
	}
	invalid := map[string]string{
		``:                              "empty",
		`visitor.claims.x ==`:           "expression",
		`a); (b`:                        "single expression",
		`visitor.claims.x = true`:       "assignment",
		`(() => true)()`:                "function",
		`function f() {}`:               "function",
		`x++`:                           "increment",
		`delete visitor.claims`:         "delete",
		strings.Repeat("a", 1025):       "1024",
		`visitor.claims["unterminated]`: "expression",
	}
	for c, want := range invalid {
		err := checkCondition("condition", c)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "condition: ") {
			t.Errorf("%q: error %v, want one mentioning %q", c, err, want)
		}
	}
}
