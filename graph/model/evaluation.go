package model

import (
	"io"
	"slices"
	"strconv"

	"github.com/docsapi/docsapi/store"
)

// DocumentEvaluation is the `evaluated` parameter of page reads: false,
// true, or "deterministic-only". REST query strings give "true" and
// "false" as strings; both spellings are accepted.
type DocumentEvaluation string

const (
	EvaluationNone              DocumentEvaluation = "false"
	EvaluationAll               DocumentEvaluation = "true"
	EvaluationDeterministicOnly DocumentEvaluation = "deterministic-only"
)

// AllDocumentEvaluations lists the values of DocumentEvaluation.
var AllDocumentEvaluations = []DocumentEvaluation{EvaluationNone, EvaluationAll, EvaluationDeterministicOnly}

// UnmarshalGQL accepts true, false, "true", "false" and "deterministic-only".
func (e *DocumentEvaluation) UnmarshalGQL(v any) error {
	switch v := v.(type) {
	case bool:
		*e = EvaluationNone
		if v {
			*e = EvaluationAll
		}
		return nil
	case string:
		if x := DocumentEvaluation(v); slices.Contains(AllDocumentEvaluations, x) {
			*e = x
			return nil
		}
	}
	return store.InvalidValue(`evaluated must be true, false or "deterministic-only"`)
}

// MarshalGQL writes true and false as booleans, deterministic-only as a string.
func (e DocumentEvaluation) MarshalGQL(w io.Writer) {
	if e == EvaluationDeterministicOnly {
		_, _ = io.WriteString(w, strconv.Quote(string(e)))
		return
	}
	_, _ = io.WriteString(w, strconv.FormatBool(e == EvaluationAll))
}
