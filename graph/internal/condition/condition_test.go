package condition

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	valid := []string{
		`visitor.claims.isBetaUser == true`,
		`visitor.claims.unsigned.plan === "pro" && !visitor.claims.trial`,
		`["a", "b"].includes(visitor.claims.role)`,
		`visitor.claims.age >= 18 // adults`,
		`{a: 1}.a == 1`,
		`(visitor.claims.x || visitor.claims.y) ? true : false`,
		strings.Repeat("é", maxLength), // characters, not bytes
	}
	for _, c := range valid {
		if err := Check(c); err != nil {
			t.Errorf("%q rejected: %v", c, err)
		}
	}
	invalid := map[string]string{
		``:                              "must not be empty",
		`visitor.claims.x ==`:           "expression",
		`a); (b`:                        "single expression",
		`visitor.claims.x = true`:       "assignment",
		`(() => true)()`:                "function",
		`function f() {}`:               "function",
		`x++`:                           "increment",
		`delete visitor.claims`:         "delete",
		strings.Repeat("a", 1025):       "must be at most 1024 characters",
		`visitor.claims["unterminated]`: "expression",
	}
	for c, want := range invalid {
		err := Check(c)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one mentioning %q", c, err, want)
		}
	}
}
