// Package condition checks the conditions that decide whether a visitor
// sees a section or a site space. They are JavaScript expressions over the
// visitor's claims, as in GitBook:
//
//	visitor.claims.isBetaUser == true
//	visitor.claims.unsigned.plan === "pro" && !visitor.claims.trial
//
// They are stored as written and evaluated where the site is rendered; here
// they are parsed with goja's ECMAScript parser so that a condition that can
// never run is rejected when it is set, not discovered by a visitor.
package condition

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"github.com/dop251/goja/token"
)

// maxLength bounds a condition, in characters.
const maxLength = 1024

// Check tells why src is not a valid condition, or nil when it is: at most
// 1024 characters (maxLength), one JavaScript expression, and nothing that assigns
// or defines code. The error's message says what is wrong with src ("must
// be a single expression"), without naming it.
func Check(src string) error {
	switch n := utf8.RuneCountInString(src); {
	case n < 1:
		return errors.New("must not be empty")
	case n > maxLength:
		return fmt.Errorf("must be at most %d characters", maxLength)
	}
	// The parentheses make the source parse as an expression (an object
	// literal rather than a block); the newline ends a trailing line comment.
	prog, err := parser.ParseFile(nil, "", "("+src+"\n)", 0)
	if err != nil {
		msg := err.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 && strings.HasPrefix(msg, "(anonymous)") {
			msg = msg[i+2:]
		}
		return fmt.Errorf("is not a valid expression: %s", msg)
	}
	if len(prog.Body) != 1 {
		return errors.New("must be a single expression")
	}
	stmt, ok := prog.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return errors.New("must be a single expression")
	}
	if bad := forbiddenNode(reflect.ValueOf(stmt.Expression)); bad != "" {
		return fmt.Errorf("must not contain %s", bad)
	}
	return nil
}

// forbiddenNode names the first construct of an expression a condition
// may not use ("" for none): it decides, it does not act.
func forbiddenNode(v reflect.Value) string {
	return firstOf(v, func(node any) string {
		switch n := node.(type) {
		case *ast.AssignExpression:
			return "an assignment"
		case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral, *ast.ClassLiteral:
			return "a function or class definition"
		case *ast.YieldExpression, *ast.AwaitExpression:
			return "yield or await"
		case *ast.UnaryExpression:
			if n.Operator == token.INCREMENT || n.Operator == token.DECREMENT || n.Operator == token.DELETE {
				return "an increment, decrement or delete"
			}
		}
		return ""
	})
}

// firstOf walks an expression's syntax tree, depth first, and returns
// the first thing bad says of one of its nodes ("" for none).
func firstOf(v reflect.Value, bad func(node any) string) string {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return ""
		}
		if what := bad(v.Interface()); what != "" {
			return what
		}
		return firstOf(v.Elem(), bad)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				if what := firstOf(v.Field(i), bad); what != "" {
					return what
				}
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			if what := firstOf(v.Index(i), bad); what != "" {
				return what
			}
		}
	}
	return ""
}
