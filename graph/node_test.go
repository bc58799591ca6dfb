package graph

import (
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/store"
)

// Every type implementing Node has a table in store.NodeTypes, a loader,
// and a read rule: node(id:) hands out nothing its rule has not passed.
func TestEveryNodeTypeIsFoundAndGuarded(t *testing.T) {
	schema := Schema()
	var implementors []string
	for _, def := range schema.GetPossibleTypes(schema.Types["Node"]) {
		implementors = append(implementors, def.Name)
		if _, ok := guardedTypes[def.Name]; !ok {
			t.Errorf("%s implements Node but has no read rule (authorize.go): node(id:) would show it to anyone", def.Name)
		}
		if nodeLoaders[def.Name] == nil {
			t.Errorf("%s implements Node but nodeLoaders cannot read it", def.Name)
		}
	}
	sort.Strings(implementors)
	tables := store.NodeTypeNames()
	sort.Strings(tables)
	if !slices.Equal(implementors, tables) {
		t.Errorf("Node's implementors %v, store.NodeTypes' %v", implementors, tables)
	}
	if len(nodeLoaders) != len(tables) {
		t.Errorf("%d node loaders for %d types", len(nodeLoaders), len(tables))
	}
}

// Every paginated list is a Relay connection: edges of its items' type, the
// Relay arguments on every field answering it, and a cost by page size.
func TestListsAreConnections(t *testing.T) {
	schema := Schema()
	lists := map[string]bool{}
	for name, def := range schema.Types {
		items, info := def.Fields.ForName("items"), def.Fields.ForName("pageInfo")
		if items == nil || info == nil {
			continue
		}
		lists[name] = true
		edges := def.Fields.ForName("edges")
		if edges == nil || edges.Type.String() != "["+edgeName(name)+"!]!" {
			t.Errorf("%s has no edges: [%s!]!", name, edgeName(name))
			continue
		}
		edge := schema.Types[edgeName(name)]
		if edgeNode(edge) != items.Type.Name() || edge.Fields.ForName("cursor").Type.String() != "String!" ||
			edge.Fields.ForName("node").Type.String() != items.Type.Name()+"!" {
			t.Errorf("%s is not {cursor: String!, node: %s!}", edge.Name, items.Type.Name())
		}
	}
	if len(lists) < 30 {
		t.Fatalf("only %d lists found", len(lists))
	}
	var c generated.ComplexityRoot
	complexityOf(&c)
	fields := 0
	for _, def := range schema.Types {
		for _, f := range def.Fields {
			if !lists[f.Type.Name()] {
				continue
			}
			fields++
			if !hasCost(&c, def.Name, f.Name) {
				t.Errorf("%s.%s has no cost by page size (complexityOf)", def.Name, f.Name)
			}
			for _, arg := range []string{"page", "limit", "first", "after"} {
				if f.Arguments.ForName(arg) == nil {
					t.Errorf("%s.%s answers a %s but takes no %s", def.Name, f.Name, f.Type.Name(), arg)
				}
			}
		}
	}
	// The cost of Query.organizations by each name of the page size: its
	// queries, and 3 for each item.
	seven, ten := 7, 10
	const base = 1 + ListQueryCost
	for _, c := range []struct {
		first, limit *int
		want         int
	}{{nil, nil, base + DefaultPageSize*3}, {&seven, nil, base + 21}, {nil, &ten, base + 30}, {&ten, &ten, base + 30}} {
		if got := c.limit; complexityOfOrganizations(t, c.first, c.limit) != c.want {
			t.Errorf("first %v limit %v: cost %d, want %d", c.first, got, complexityOfOrganizations(t, c.first, c.limit), c.want)
		}
	}
	t.Logf("%d list types, %d list fields", len(lists), fields)
}

func complexityOfOrganizations(t *testing.T, first, limit *int) int {
	var c generated.ComplexityRoot
	complexityOf(&c)
	if c.Query.Organizations == nil {
		t.Fatal("Query.organizations has no cost")
	}
	return c.Query.Organizations(3, nil, limit, first, nil)
}

// hasCost tells whether complexityOf set the cost of typ.field.
func hasCost(c *generated.ComplexityRoot, typ, field string) bool {
	root := reflect.ValueOf(c).Elem()
	for i := range root.NumField() {
		if goName(root.Type().Field(i).Name) != goName(typ) {
			continue
		}
		fields := root.Field(i)
		for j := range fields.NumField() {
			if goName(fields.Type().Field(j).Name) == goName(field) {
				return !fields.Field(j).IsNil()
			}
		}
	}
	return false
}

func edgeName(list string) string { return list[:len(list)-len("List")] + "Edge" }
