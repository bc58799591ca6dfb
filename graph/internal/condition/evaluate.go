package condition

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	lru "github.com/hashicorp/golang-lru/v2"
)

// A condition runs where a visitor's page is made, once per condition and
// set of claims. What it may do there is narrower than what Check accepts
// when it is stored, because conditions are written by members and run for
// anyone: it may read `visitor` and call a few methods that neither loop
// nor allocate more than their input (allowedMethods), and it gets
// evaluationTime at most. Anything else is an error, and a condition that
// fails counts as false: the section or site space it guards stays hidden.

// evaluationTime bounds one evaluation. A condition holds no loops and
// calls nothing that loops over more than its input, so this is a guard
// against what was not foreseen, not a budget conditions approach.
const evaluationTime = 20 * time.Millisecond

// allowedMethods are the methods a condition may call: tests on strings and
// arrays a visitor's claims hold. None takes a function, builds a regular
// expression, or makes a value larger than its receiver.
var allowedMethods = map[string]bool{
	"includes": true, "startsWith": true, "endsWith": true, "indexOf": true, "lastIndexOf": true,
	"toLowerCase": true, "toUpperCase": true, "trim": true, "at": true, "hasOwnProperty": true,
}

// programs are the compiled conditions, by source: a site's few conditions
// are compiled once for every visitor.
var programs = mustLRU[string, compiled](4096)

type compiled struct {
	program *goja.Program
	err     error
}

func mustLRU[K comparable, V any](n int) *lru.Cache[K, V] {
	c, err := lru.New[K, V](n)
	if err != nil {
		panic(err)
	}
	return c
}

// runtimes are JavaScript runtimes to evaluate in, reused: a condition can
// change nothing in one (no assignment, no call but allowedMethods), and
// making one costs more than most evaluations.
var runtimes = sync.Pool{New: func() any { return goja.New() }}

// errNotBoolean is a condition whose value is not true or false.
var errNotBoolean = errors.New("the condition's value is not a boolean")

// Evaluate tells whether condition src holds for visitor, the object the
// condition sees as `visitor` (GitBook's shape: {claims: {..., unsigned:
// {...}}}). An error (a condition that cannot run here, a thrown
// exception, one that ran too long, a value that is not a boolean) comes
// with false.
func Evaluate(src string, visitor map[string]any) (ok bool, err error) {
	c, found := programs.Get(src)
	if !found {
		c = compile(src)
		programs.Add(src, c)
	}
	if c.err != nil {
		return false, c.err
	}
	vm := runtimes.Get().(*goja.Runtime)
	timer := time.AfterFunc(evaluationTime, func() { vm.Interrupt("the condition ran too long") })
	defer func() {
		timer.Stop()
		if p := recover(); p != nil {
			ok, err = false, fmt.Errorf("the condition failed: %v", p)
		}
		// A runtime interrupted, or one that panicked, is not reused.
		if err == nil {
			runtimes.Put(vm)
		}
	}()
	if err := vm.Set("visitor", visitor); err != nil {
		return false, err
	}
	v, err := vm.RunProgram(c.program)
	if err != nil {
		return false, err
	}
	switch b := v.Export().(type) {
	case bool:
		return b, nil
	default:
		return false, errNotBoolean
	}
}

// compile checks src as Check does, then for what may run (calls of
// allowedMethods only, nothing constructed), and compiles it.
func compile(src string) compiled {
	if err := Check(src); err != nil {
		return compiled{err: err}
	}
	prog, err := parser.ParseFile(nil, "", "("+src+"\n)", 0)
	if err != nil {
		return compiled{err: err}
	}
	if bad := notRunnable(reflect.ValueOf(prog.Body)); bad != "" {
		return compiled{err: fmt.Errorf("a condition may not %s here", bad)}
	}
	p, err := goja.Compile("condition", "("+src+"\n)", true)
	return compiled{program: p, err: err}
}

// notRunnable names the first construct of an expression that may not run
// for a visitor ("" for none): a call of anything but allowedMethods, a
// constructor, a regular expression.
func notRunnable(v reflect.Value) string {
	return firstOf(v, func(node any) string {
		switch n := node.(type) {
		case *ast.CallExpression:
			dot, ok := n.Callee.(*ast.DotExpression)
			if !ok || !allowedMethods[string(dot.Identifier.Name)] {
				return "call a function other than " + methodList()
			}
		case *ast.TemplateLiteral:
			if n.Tag != nil { // a tagged template calls its tag
				return "call a function other than " + methodList()
			}
		case *ast.NewExpression:
			return "construct objects"
		case *ast.RegExpLiteral:
			return "use regular expressions"
		}
		return ""
	})
}

// methodList names allowedMethods, for the error of a condition calling
// another.
func methodList() string {
	names := slices.Sorted(maps.Keys(allowedMethods))
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
