package graph

import "github.com/99designs/gqlgen/graphql"

// patch applies the members of an update input to a model: each present
// member is validated and assigned, and its column recorded for the UPDATE.
// The first error wins; later steps do nothing.
type patch struct {
	columns []string
	err     error
}

// changed reports whether anything is to be written.
func (p *patch) changed() bool { return len(p.columns) > 0 }

// setRequired assigns a member that cannot be cleared: null is a 400.
func setRequired[T any](p *patch, field, column string, in graphql.Omittable[*T], dst *T, check func(T) error) {
	v, set, err := notNull(field, in)
	if p.err != nil || (!set && err == nil) {
		return
	}
	if err == nil && check != nil {
		err = check(v)
	}
	if err != nil {
		p.err = err
		return
	}
	*dst = v
	p.columns = append(p.columns, column)
}

// setOptional assigns a member that null clears.
func setOptional[T any](p *patch, field, column string, in graphql.Omittable[*T], dst **T, check func(T) error) {
	v, set := in.ValueOK()
	if p.err != nil || !set {
		return
	}
	if v != nil && check != nil {
		if p.err = check(*v); p.err != nil {
			return
		}
	}
	*dst = v
	p.columns = append(p.columns, column)
}

// length returns a check that a string has min to max characters.
func length(field string, min, max int) func(string) error {
	return func(s string) error { return checkLength(field, s, min, max) }
}
