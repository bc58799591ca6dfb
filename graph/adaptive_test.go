package graph

import (
	"errors"
	"strings"
	"testing"
)

// The errors of package condition become bad requests naming the field.
func TestCheckCondition(t *testing.T) {
	if err := checkCondition("condition", `visitor.claims.isBetaUser == true`); err != nil {
		t.Errorf("valid condition rejected: %v", err)
	}
	for src, want := range map[string]string{
		``:                        "condition: must not be empty",
		strings.Repeat("a", 1025): "condition: must be at most 1024 characters",
		`a); (b`:                  "condition: must be a single expression",
		`x++`:                     "condition: must not contain an increment, decrement or delete",
	} {
		var e *Error
		if err := checkCondition("condition", src); !errors.As(err, &e) || e.Status != 400 || e.Field != "condition" || e.Message != want {
			t.Errorf("%.20q: error %#v, want a 400 on field condition: %q", src, err, want)
		}
	}
}

// The errors of package adaptive become bad requests on jsonSchema.
func TestCheckVisitorSchema(t *testing.T) {
	ok := map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": false}
	if err := checkVisitorSchema(ok); err != nil {
		t.Errorf("valid schema rejected: %v", err)
	}
	var e *Error
	err := checkVisitorSchema(map[string]any{"type": "array", "properties": map[string]any{}, "additionalProperties": false})
	if !errors.As(err, &e) || e.Status != 400 || e.Field != "jsonSchema" || !strings.HasPrefix(e.Message, "jsonSchema: is not a visitor schema: at /type: ") {
		t.Errorf("error %#v, want a 400 on field jsonSchema", err)
	}
}
