package engine

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/docsapi/docsapi/graph/model"
)

// Direct writing of hot read-only subtrees.
//
// gqlgen executes every field through a field context, a middleware chain
// and a marshaler value, and every element of a list in a goroutine of its
// own: about a microsecond and twenty allocations a field. For a site's
// structure (1,000 site spaces are some 8,000 fields) that is most of the
// request. The direct writer takes over a field registered as an entry
// (Site.structure) when every field selected below it is one it knows: it
// lets the field's resolver run, then writes the JSON of the whole subtree
// itself, from a plan compiled once per request from the selection set.
//
// The bytes are the ones gqlgen would write: the plan comes from gqlgen's own
// CollectFields (fragments, aliases, @skip and @include), scalars are written
// with the schema's marshalers, and fields that need more than plain data
// call the same resolver methods gqlgen calls. wholeserver/direct_test.go compares
// the two writers on many selections. Anything the plan does not know (a
// field with arguments, a field not declared here, @defer), and any value it
// cannot produce (a resolver's error, a null where the schema forbids one:
// gqlgen reports those as errors), leaves the field to gqlgen, which then
// executes it as it always does.

// DirectWriter is the gqlgen extension doing it. The resolvers declare to
// it, beside their resolvers, the fields it takes over (Entry) and the
// object types it knows (Object).
type DirectWriter struct {
	schema  *ast.Schema
	generic func() bool // true: every field runs through gqlgen
	// readRule gives the read rule of a Go type (nil: none).
	readRule func(reflect.Type) func(context.Context, any) (bool, error)
	// runContext adds to a subtree's context what its resolvers look up
	// for every object (nil: nothing; see Config.RunContext).
	runContext func(context.Context) context.Context
	// types are the object types the writer knows, by GraphQL name; goTypes
	// tell the type of a Go value (the concrete type of a union's member):
	// a handful, faster scanned than hashed.
	types   map[string]*directType
	goTypes []directGoType
	// entries are the fields ({type, field}) the writer takes over.
	entries map[[2]string]*directEntry
	// plans caches compiled plans (planOf); cachedPlans counts them.
	plans       sync.Map
	cachedPlans atomic.Int64
}

// directEntry is a field the writer takes over. lastSize is the length of
// its last answer, to size the next one's buffer at once.
type directEntry struct{ lastSize atomic.Int64 }

type directGoType struct {
	goType reflect.Type
	t      *directType
}

// typeOf is the declared type of v; nil when v is of none or a nil pointer.
func (d *DirectWriter) typeOf(v any) *directType {
	rt := reflect.TypeOf(v)
	for _, g := range d.goTypes {
		if g.goType == rt {
			if reflect.ValueOf(v).IsNil() {
				return nil
			}
			return g.t
		}
	}
	return nil
}

// directType is what the writer knows of an object type: its fields, and
// the abstract types (unions) it satisfies, for CollectFields.
type directType struct {
	name      string
	fields    map[string]Field
	satisfies []string
	// rule is the read rule objects of this type pass before they are
	// written; nil for unguarded types.
	rule func(context.Context, any) (bool, error)
}

// Field produces one field of an object: either write writes a leaf
// value (false when it cannot: a resolver's error), or children hands each
// child object to each (at most once for an object field, in order for a
// list) and says how it went.
type Field struct {
	write    func(ctx context.Context, w *bytes.Buffer, obj any) bool
	children func(ctx context.Context, obj any, each func(child any) bool) directResult
	list     bool
}

// directResult is how producing an object or list field went.
type directResult int

const (
	directFailed directResult = iota // a value could not be produced
	directDone                       // each was called for every child
	directNull                       // the value is null (a nil object or list)
)

var _ interface {
	graphql.HandlerExtension
	graphql.FieldInterceptor
} = (*DirectWriter)(nil)

func newDirectWriter(schema *ast.Schema, cfg Config) *DirectWriter {
	return &DirectWriter{schema: schema, generic: cfg.GenericExecution, readRule: cfg.ReadRule, runContext: cfg.RunContext,
		types: map[string]*directType{}, entries: map[[2]string]*directEntry{}}
}

func (*DirectWriter) ExtensionName() string                   { return "DirectWriter" }
func (*DirectWriter) Validate(graphql.ExecutableSchema) error { return nil }

// Object declares that values of goType (a pointer type, given as a nil
// pointer) are the GraphQL object type name, with these fields.
func (d *DirectWriter) Object(name string, goType any, fields map[string]Field) {
	t := &directType{name: name, fields: fields, satisfies: []string{name}}
	if d.readRule != nil {
		t.rule = d.readRule(reflect.TypeOf(goType))
	}
	for _, abstract := range d.schema.GetImplements(d.schema.Types[name]) {
		t.satisfies = append(t.satisfies, abstract.Name)
	}
	d.types[name] = t
	d.goTypes = append(d.goTypes, directGoType{reflect.TypeOf(goType), t})
}

// Entry declares a field the writer takes over.
func (d *DirectWriter) Entry(typeName, field string) {
	d.entries[[2]string{typeName, field}] = &directEntry{}
}

func (d *DirectWriter) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || (d.generic != nil && d.generic()) {
		return next(ctx)
	}
	entry := d.entries[[2]string{fc.Object, fc.Field.Name}]
	if entry == nil {
		return next(ctx)
	}
	res, err := next(ctx)
	if err != nil || res == nil {
		return res, err
	}
	t := d.typeOf(res)
	if t == nil {
		return res, nil
	}
	plan := d.planOf(graphql.GetOperationContext(ctx), fc.Field, t)
	if plan == nil {
		return res, nil
	}
	var buf bytes.Buffer
	buf.Grow(int(entry.lastSize.Load()))
	run := &directRun{d: d, ctx: d.subtreeContext(ctx), w: &buf}
	run.each = run.child
	if !run.write(plan, res) {
		return res, nil
	}
	entry.lastSize.Store(int64(buf.Len()))
	if count, ok := ctx.Value(directCountKey{}).(*atomic.Int64); ok {
		count.Add(1)
	}
	return directJSON(buf.Bytes()), nil
}

// subtreeContext is the context a subtree is written with: the field's,
// with the values looked up for every object of the subtree on top (the
// operation's context, and Config.RunContext's), where each look would
// otherwise walk the field's whole chain of contexts, some twenty values
// deep, once per object of a thousand-object tree.
func (d *DirectWriter) subtreeContext(ctx context.Context) context.Context {
	ctx = graphql.WithOperationContext(ctx, graphql.GetOperationContext(ctx))
	if d.runContext != nil {
		ctx = d.runContext(ctx)
	}
	return ctx
}

// directCountKey is where the debug statistics count direct writes.
type directCountKey struct{}

// directJSON is a subtree's JSON, written out as it is.
type directJSON []byte

func (j directJSON) MarshalGQL(w io.Writer) { _, _ = w.Write(j) }

// directPlan is how to write one object type under one selection set.
type directPlan struct {
	t      *directType
	fields []directPlanField
}

type directPlanField struct {
	// prefix is `{"alias":` for the first field and `,"alias":` for the others.
	prefix   []byte
	typename bool // __typename
	field    Field
	nullable bool
	// plans are the plans of the field's children, one per concrete type
	// the writer knows among those the field's type allows; a nil plan is a
	// type whose selection the writer cannot write.
	plans []*directChildPlan
}

type directChildPlan struct {
	t    *directType
	plan *directPlan
}

// Plans are compiled once per operation document, not per request: the
// REST adapter's documents and clients' usual queries come back again and
// again from the executor's query cache, with the same AST.
const maxCachedPlans = 10_000

type directPlanKey struct {
	field *ast.Field
	t     *directType
}

// planOf returns the plan of the entry field f for a result of type t;
// nil when the writer does not know every field selected below.
//
// A plan is cached under the field's AST node when nothing in it depends on
// the request: its selections are the field's own (gqlgen merges those of a
// field selected twice), and no @skip or @include applies,
// since those read variables. The cache holds the nodes it is keyed by, so a
// document dropped from the query cache cannot hand its address to another.
func (d *DirectWriter) planOf(oc *graphql.OperationContext, f graphql.CollectedField, t *directType) *directPlan {
	own := slices.Equal(f.Selections, f.Field.SelectionSet)
	key := directPlanKey{f.Field, t}
	if own {
		if plan, ok := d.plans.Load(key); ok {
			return plan.(*directPlan)
		}
	}
	c := &directCompiler{d: d, oc: oc}
	plan := c.plan(t, f.Selections, 0)
	if own && !c.conditional {
		if d.cachedPlans.Add(1) > maxCachedPlans {
			d.plans.Clear()
			d.cachedPlans.Store(0)
		}
		d.plans.Store(key, plan)
	}
	return plan
}

// directCompiler compiles the plans of one entry field.
type directCompiler struct {
	d  *DirectWriter
	oc *graphql.OperationContext
	// conditional is set when a selection compiled has @skip or @include.
	conditional bool
}

// maxPlanDepth bounds compilation; the executor's depth limit is lower.
const maxPlanDepth = 32

// plan compiles the plan of t under sel, and those of every child field for
// every concrete type known; nil when the writer does not know every field
// selected on t.
func (c *directCompiler) plan(t *directType, sel ast.SelectionSet, depth int) *directPlan {
	if depth > maxPlanDepth {
		return nil
	}
	if conditional(sel) {
		c.conditional = true
	}
	def := c.d.schema.Types[t.name]
	plan := &directPlan{t: t}
	for i, f := range graphql.CollectFields(c.oc, sel, t.satisfies) {
		if len(f.Arguments) > 0 || len(f.Deferrables) > 0 {
			return nil
		}
		var pf directPlanField
		var prefix bytes.Buffer
		if i == 0 {
			prefix.WriteByte('{')
		} else {
			prefix.WriteByte(',')
		}
		writeJSONString(&prefix, f.Alias)
		prefix.WriteByte(':')
		pf.prefix = prefix.Bytes()
		if f.Name == "__typename" {
			pf.typename = true
			plan.fields = append(plan.fields, pf)
			continue
		}
		field, ok := t.fields[f.Name]
		fieldDef := def.Fields.ForName(f.Name)
		if !ok || fieldDef == nil || field.list != (fieldDef.Type.Elem != nil) {
			return nil
		}
		pf.field, pf.nullable = field, !fieldDef.Type.NonNull
		if field.children != nil {
			for _, possible := range c.d.schema.GetPossibleTypes(c.d.schema.Types[fieldDef.Type.Name()]) {
				if child, ok := c.d.types[possible.Name]; ok {
					pf.plans = append(pf.plans, &directChildPlan{child, c.plan(child, f.Selections, depth+1)})
				}
			}
		}
		plan.fields = append(plan.fields, pf)
	}
	return plan
}

// conditional reports whether @skip or @include applies to a selection of
// sel (CollectFields evaluates them with the request's variables).
func conditional(sel ast.SelectionSet) bool {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if hasCondition(s.Directives) {
				return true
			}
		case *ast.InlineFragment:
			if hasCondition(s.Directives) || conditional(s.SelectionSet) {
				return true
			}
		case *ast.FragmentSpread:
			if hasCondition(s.Directives) || (s.Definition != nil && conditional(s.Definition.SelectionSet)) {
				return true
			}
		}
	}
	return false
}

func hasCondition(list ast.DirectiveList) bool {
	return list.ForName("skip") != nil || list.ForName("include") != nil
}

// directRun is the writing of one subtree. Its state is kept here rather
// than in closures: the callback handing a list's elements to the writer
// (each) is bound once, where a closure per object or list field was two
// allocations each, some 1,800 for a site's tree.
type directRun struct {
	d   *DirectWriter
	ctx context.Context
	w   *bytes.Buffer
	// open are the object and list fields being written, innermost last,
	// with the children each has written so far.
	open []openField
	each func(child any) bool // child
}

type openField struct {
	f *directPlanField
	n int
}

// write writes obj under plan; false when a value cannot be produced.
func (r *directRun) write(plan *directPlan, obj any) bool {
	w := r.w
	if len(plan.fields) == 0 {
		w.WriteByte('{')
	}
	for i := range plan.fields {
		f := &plan.fields[i]
		w.Write(f.prefix)
		switch {
		case f.typename:
			writeJSONString(w, plan.t.name)
		case f.field.write != nil:
			if !f.field.write(r.ctx, w, obj) {
				return false
			}
		default:
			if !r.writeChildren(f, obj) {
				return false
			}
		}
	}
	w.WriteByte('}')
	return true
}

// writeChildren writes an object or list field.
func (r *directRun) writeChildren(f *directPlanField, obj any) bool {
	r.open = append(r.open, openField{f: f})
	result := f.field.children(r.ctx, obj, r.each)
	n := r.open[len(r.open)-1].n
	r.open = r.open[:len(r.open)-1]
	list, w := f.field.list, r.w
	switch {
	case result == directFailed:
		return false
	case result == directNull:
		// gqlgen reports a null where the schema forbids one as an error.
		if !f.nullable || n > 0 {
			return false
		}
		w.WriteString("null")
	case list && n == 0:
		w.WriteString("[]")
	case list:
		w.WriteByte(']')
	case n != 1:
		return false
	}
	return true
}

// child writes one child object of the innermost open field.
func (r *directRun) child(child any) bool {
	open := &r.open[len(r.open)-1]
	f := open.f
	if f.field.list {
		if open.n == 0 {
			r.w.WriteByte('[')
		} else {
			r.w.WriteByte(',')
		}
	}
	open.n++ // before writing: the child's own fields may grow r.open
	t := r.d.typeOf(child)
	if t != nil && t.rule != nil {
		// SECURITY: the read rules, as the authorizer applies them to
		// gqlgen's fields. An object the caller may not read leaves the
		// subtree to gqlgen, whose authorizer withholds it.
		if ok, err := t.rule(r.ctx, child); !ok || err != nil {
			return false
		}
	}
	for _, c := range f.plans {
		if c.t == t {
			return c.plan != nil && r.write(c.plan, child)
		}
	}
	return false
}

// writeJSONString writes s as a JSON string exactly as gqlgen's String
// marshaler does (graphql.MarshalString, whose writer is unexported): only
// quotes, backslashes and control characters are escaped, everything else
// is copied byte for byte. TestWriteJSONString holds the two together.
func writeJSONString(w *bytes.Buffer, s string) {
	const hex = "0123456789ABCDEF"
	w.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '\\' && c != '"' {
			continue
		}
		w.WriteString(s[start:i])
		switch c {
		case '\t':
			w.WriteString(`\t`)
		case '\r':
			w.WriteString(`\r`)
		case '\n':
			w.WriteString(`\n`)
		case '\\':
			w.WriteString(`\\`)
		case '"':
			w.WriteString(`\"`)
		default:
			w.WriteString(`\u00`)
			w.WriteByte(hex[c>>4])
			w.WriteByte(hex[c&0xf])
		}
		start = i + 1
	}
	w.WriteString(s[start:])
	w.WriteByte('"')
}

// The fields of declared types, by the kind of their value. O is the Go type
// of the object (its pointer is what gqlgen's resolvers receive).

// leaf is a leaf field read from the object with get and written
// with write; optLeaf the same for a nullable one.
func leaf[O, V any](get func(*O) V, write func(*bytes.Buffer, V)) Field {
	return Field{write: func(_ context.Context, w *bytes.Buffer, obj any) bool {
		write(w, get(obj.(*O)))
		return true
	}}
}

func optLeaf[O, V any](get func(*O) *V, write func(*bytes.Buffer, V)) Field {
	return Field{write: func(_ context.Context, w *bytes.Buffer, obj any) bool {
		if v := get(obj.(*O)); v != nil {
			write(w, *v)
		} else {
			w.WriteString("null")
		}
		return true
	}}
}

// writeEnum writes a value that marshals itself (the store's enums).
func writeEnum[V graphql.Marshaler](w *bytes.Buffer, v V) { v.MarshalGQL(w) }

func String[O any](get func(*O) string) Field { return leaf(get, writeJSONString) }

func OptString[O any](get func(*O) *string) Field {
	return optLeaf(get, writeJSONString)
}

// Booleans and integers are written as gqlgen's marshalers write them
// (true/false, decimal digits), without the closure each of those
// allocates: a space's permissions are a dozen booleans.
func Bool[O any](get func(*O) bool) Field {
	return leaf(get, func(w *bytes.Buffer, b bool) {
		if b {
			w.WriteString("true")
		} else {
			w.WriteString("false")
		}
	})
}

func Int[O any](get func(*O) int) Field {
	return leaf(get, func(w *bytes.Buffer, i int) {
		w.Write(strconv.AppendInt(w.AvailableBuffer(), int64(i), 10))
	})
}

func Time[O any](get func(*O) time.Time) Field {
	return leaf(get, writeDateTime)
}

func OptTime[O any](get func(*O) *time.Time) Field {
	return optLeaf(get, writeDateTime)
}

// writeDateTime writes t as model.MarshalDateTime does, appended in place
// rather than formatted, quoted and copied: the layout's characters are
// digits and "-:.TZ", which JSON does not escape.
func writeDateTime(w *bytes.Buffer, t time.Time) {
	b := append(w.AvailableBuffer(), '"')
	b = t.UTC().AppendFormat(b, model.DateTimeLayout)
	w.Write(append(b, '"'))
}

func Enum[O any, V graphql.Marshaler](get func(*O) V) Field {
	return leaf(get, writeEnum[V])
}

func OptEnum[O any, V graphql.Marshaler](get func(*O) *V) Field {
	return optLeaf(get, writeEnum[V])
}

// ResolvedString is a String field computed by a resolver method.
func ResolvedString[O any](get func(context.Context, *O) (string, error)) Field {
	return Field{write: func(ctx context.Context, w *bytes.Buffer, obj any) bool {
		s, err := get(ctx, obj.(*O))
		if err != nil {
			return false
		}
		writeJSONString(w, s)
		return true
	}}
}

// Child is an object field resolved by get (a resolver method); a
// nil result is a null.
func Child[O, C any](get func(context.Context, *O) (*C, error)) Field {
	return Field{children: func(ctx context.Context, obj any, each func(any) bool) directResult {
		c, err := get(ctx, obj.(*O))
		switch {
		case err != nil:
			return directFailed
		case c == nil:
			return directNull
		}
		return directOK(each(c))
	}}
}

// List is a list field resolved by get (a resolver method), whose
// elements are pointers (or interfaces holding them); a nil list is a null.
func List[O, C any](get func(context.Context, *O) ([]C, error)) Field {
	return Field{list: true, children: func(ctx context.Context, obj any, each func(any) bool) directResult {
		list, err := get(ctx, obj.(*O))
		switch {
		case err != nil:
			return directFailed
		case list == nil:
			return directNull
		}
		for _, c := range list {
			if !each(c) {
				return directFailed
			}
		}
		return directDone
	}}
}

// ValueList is a list field of struct values read from the object
// (MergeRules.rules); a nil list is a null.
func ValueList[O, C any](get func(*O) []C) Field {
	return Field{list: true, children: func(_ context.Context, obj any, each func(any) bool) directResult {
		list := get(obj.(*O))
		if list == nil {
			return directNull
		}
		for i := range list {
			if !each(&list[i]) {
				return directFailed
			}
		}
		return directDone
	}}
}

// Struct is an object field holding a struct value (Space.mergeRules).
func Struct[O, C any](get func(*O) *C) Field {
	return Field{children: func(_ context.Context, obj any, each func(any) bool) directResult {
		return directOK(each(get(obj.(*O))))
	}}
}

func directOK(ok bool) directResult {
	if ok {
		return directDone
	}
	return directFailed
}

// IDs is a nullable list of IDs read from the object.
func IDs[O any](get func(*O) []string) Field {
	return Field{list: true, write: func(_ context.Context, w *bytes.Buffer, obj any) bool {
		ids := get(obj.(*O))
		if ids == nil {
			w.WriteString("null")
			return true
		}
		w.WriteByte('[')
		for i, id := range ids {
			if i > 0 {
				w.WriteByte(',')
			}
			writeJSONString(w, id)
		}
		w.WriteByte(']')
		return true
	}}
}
