package graph

import (
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/docsapi/docsapi/graph/generated"
)

// Every object type of the schema is guarded, derived or public, once; a
// derived type is reached only from guarded or derived types, from
// mutations, or from a root field that says how it checks; and a guarded
// type's rule is registered for the Go type gqlgen binds it to. A new type,
// or a new field that hands out a derived type from somewhere unguarded,
// fails here until someone decides who may read it.
func TestEveryObjectTypeIsClassified(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &Resolver{}}).Schema()
	roots := []string{"Query", "Mutation", "Subscription"}
	derived := map[string]bool{}
	for _, name := range derivedTypes {
		if derived[name] {
			t.Errorf("%s is listed twice as derived", name)
		}
		derived[name] = true
	}
	var objects []string
	for name, def := range schema.Types {
		if def.Kind == ast.Object && !def.BuiltIn && !strings.HasPrefix(name, "__") {
			objects = append(objects, name)
		}
	}
	sort.Strings(objects)
	for _, name := range objects {
		_, guarded := guardedTypes[name]
		_, public := publicTypes[name]
		edge := edgeNode(schema.Types[name]) != ""
		n := 0
		for _, in := range []bool{guarded, derived[name], public, slices.Contains(roots, name), edge} {
			if in {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s is in %d of guardedTypes, derivedTypes, publicTypes, the roots and the edges: classify it once (graph/authorize.go)", name, n)
		}
	}
	for _, list := range []map[string]bool{derived, keys(guardedTypes), keys(publicTypes)} {
		for name := range list {
			if def := schema.Types[name]; def == nil || def.Kind != ast.Object {
				t.Errorf("%s is classified but is no object type of the schema", name)
			}
		}
	}

	// An edge whose items may be of a derived type is derived: handed out
	// only from its list, which must be guarded or derived.
	for name, def := range schema.Types {
		node := edgeNode(def)
		if node == "" {
			continue
		}
		for _, possible := range schema.GetPossibleTypes(schema.Types[node]) {
			if derived[possible.Name] {
				derived[name] = true
			}
		}
	}

	// Where each object type is handed out: Type.field, abstract types
	// resolved to their members.
	parents := map[string][]string{}
	for _, def := range schema.Types {
		if def.BuiltIn || (def.Kind != ast.Object && def.Kind != ast.Interface) {
			continue
		}
		for _, f := range def.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			for _, possible := range schema.GetPossibleTypes(schema.Types[f.Type.Name()]) {
				parents[possible.Name] = append(parents[possible.Name], def.Name+"."+f.Name)
			}
		}
	}
	for name := range derived {
		for _, p := range parents[name] {
			parent, _, _ := strings.Cut(p, ".")
			_, guarded := guardedTypes[parent]
			_, checked := checkedFields[p]
			if !guarded && !derived[parent] && parent != "Mutation" && !checked {
				t.Errorf("%s hands out %s, which is derived, from an unguarded parent: guard one of them, or say in checkedFields how %s checks", p, name, p)
			}
		}
	}
	for field := range checkedFields {
		typ, name, _ := strings.Cut(field, ".")
		if def := schema.Types[typ]; def == nil || def.Fields.ForName(name) == nil {
			t.Errorf("checkedFields names %s, which is not in the schema", field)
		}
	}

	// gqlgen writes one marshaler per object type, taking its Go type:
	// `func (ec *executionContext) _Space(ctx context.Context, sel
	// ast.SelectionSet, obj *store.Space)`. A rule for another Go type would
	// never run.
	src, err := os.ReadFile("generated/generated.go")
	if err != nil {
		t.Fatal(err)
	}
	bound := map[string]string{}
	for _, m := range regexp.MustCompile(`func \(ec \*executionContext\) _(\w+)\(ctx context\.Context, sel ast\.SelectionSet, obj (\*[\w.]+)\)`).FindAllSubmatch(src, -1) {
		bound[string(m[1])] = string(m[2])
	}
	for name, goType := range guardedTypes {
		if bound[name] != goType.String() {
			t.Errorf("%s is bound to %s, but its read rule is for %s", name, bound[name], goType)
		}
	}
}

func keys[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}
