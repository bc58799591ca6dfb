package graph

import (
	"reflect"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"github.com/dop251/goja/token"
)

// Conditions decide whether a visitor sees a section or a site space. They
// are JavaScript expressions over the visitor's claims, as in GitBook:
//
//	visitor.claims.isBetaUser == true
//	visitor.claims.unsigned.plan === "pro" && !visitor.claims.trial
//
// They are stored as written and evaluated where the site is rendered; here
// they are parsed with goja's ECMAScript parser so that a condition that can
// never run is rejected when it is set, not discovered by a visitor.

const maxConditionLength = 1024

// checkCondition validates a condition: at most 1024 characters, one
// JavaScript expression, and nothing that assigns or defines code.
func checkCondition(field, src string) error {
	if err := checkLength(field, src, 1, maxConditionLength); err != nil {
		return err
	}
	// The parentheses make the source parse as an expression (an object
	// literal rather than a block); the newline ends a trailing line comment.
	prog, err := parser.ParseFile(nil, "", "("+src+"\n)", 0)
	if err != nil {
		msg := err.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 && strings.HasPrefix(msg, "(anonymous)") {
			msg = msg[i+2:]
		}
		return Invalid(field, "is not a valid expression: %s", msg)
	}
	if len(prog.Body) != 1 {
		return Invalid(field, "must be a single expression")
	}
	stmt, ok := prog.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return Invalid(field, "must be a single expression")
	}
	if bad := forbiddenNode(reflect.ValueOf(stmt.Expression)); bad != "" {
		return Invalid(field, "must not contain %s", bad)
	}
	return nil
}

// forbiddenNode walks an expression and names the first construct a
// condition may not use: it decides, it does not act.
func forbiddenNode(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return ""
		}
		switch n := v.Interface().(type) {
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
		return forbiddenNode(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				if bad := forbiddenNode(v.Field(i)); bad != "" {
					return bad
				}
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			if bad := forbiddenNode(v.Index(i)); bad != "" {
				return bad
			}
		}
	}
	return ""
}
