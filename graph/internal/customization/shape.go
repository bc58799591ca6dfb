package customization

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/docsapi/docsapi/graph/internal/condition"
	"github.com/docsapi/docsapi/graph/model"
)

// A shape is what a member of the settings may hold, as the reference
// describes it. Values are decoded JSON: maps, slices, strings, booleans,
// nil, and numbers as json.Number, float64 or the integers of a GraphQL
// literal.
type shape interface {
	// check tells what is wrong with v, the member at path at; nil when
	// nothing is.
	check(at string, v any) *Problem
}

// Problem is a member of settings that is not what the reference allows.
type Problem struct {
	// Member is the member's path: styling.primaryColor.light,
	// header.links[0].title.
	Member  string
	Message string
}

func (p *Problem) Error() string { return p.Member + ": " + p.Message }

func problem(at, format string, args ...any) *Problem {
	if at == "" {
		at = "body"
	}
	return &Problem{Member: at, Message: fmt.Sprintf(format, args...)}
}

func memberPath(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

// member is a member of an object.
type member struct {
	name     string
	shape    shape
	required bool
	// nullable: null is a value of its own (a header item leading nowhere)
	// or, in overrides, removes the override.
	nullable bool
}

func req(name string, s shape) member { return member{name: name, shape: s, required: true} }
func opt(name string, s shape) member { return member{name: name, shape: s} }

// orNull is m admitting null.
func orNull(m member) member {
	m.nullable = true
	return m
}

// object is a JSON object of known members: any other is refused, so that
// nothing is stored that nothing reads.
type object struct {
	members []member
	// group: a group of settings (styling, header...), which a site
	// space's overrides change member by member. Any other object is a
	// value (a color, a link), which an override replaces whole.
	group bool
}

// group is a group of settings; record an object that is one value.
func group(members ...member) *object  { return &object{members: members, group: true} }
func record(members ...member) *object { return &object{members: members} }

func (o *object) member(name string) *member {
	for i := range o.members {
		if o.members[i].name == name {
			return &o.members[i]
		}
	}
	return nil
}

func (o *object) check(at string, v any) *Problem {
	m, ok := v.(map[string]any)
	if !ok {
		return problem(at, "expected an object, got %s", model.JSONType(v))
	}
	for _, mb := range o.members {
		value, present := m[mb.name]
		switch {
		case !present:
			if mb.required {
				return problem(memberPath(at, mb.name), "is required")
			}
		case value == nil:
			if !mb.nullable {
				return problem(memberPath(at, mb.name), "cannot be null")
			}
		default:
			if p := mb.shape.check(memberPath(at, mb.name), value); p != nil {
				return p
			}
		}
	}
	names := make([]string, 0, len(m))
	for name := range m {
		if o.member(name) == nil {
			names = append(names, name)
		}
	}
	if len(names) > 0 {
		sort.Strings(names)
		return problem(memberPath(at, names[0]), "is not a known member")
	}
	return nil
}

// enum is a string of a few values.
type enum []string

func (e enum) check(at string, v any) *Problem {
	s, ok := v.(string)
	if !ok {
		return problem(at, "expected a string, got %s", model.JSONType(v))
	}
	if !slices.Contains(e, s) {
		if len(e) == 1 {
			return problem(at, "must be %q", e[0])
		}
		quoted := make([]string, len(e))
		for i, x := range e {
			quoted[i] = strconv.Quote(x)
		}
		return problem(at, "must be one of %s", strings.Join(quoted, ", "))
	}
	return nil
}

// text is a string of min to max characters (max 0: no bound).
type text struct{ min, max int }

func (t text) check(at string, v any) *Problem {
	s, ok := v.(string)
	if !ok {
		return problem(at, "expected a string, got %s", model.JSONType(v))
	}
	switch n := utf8.RuneCountInString(s); {
	case n < t.min && t.min == 1:
		return problem(at, "must not be empty")
	case n < t.min:
		return problem(at, "must be at least %d characters", t.min)
	case t.max > 0 && n > t.max:
		return problem(at, "must be at most %d characters", t.max)
	}
	return nil
}

// anyText is a string of any length: an id, a title the reference does not
// bound (the request body is bounded).
var anyText = text{}

type boolean struct{}

func (boolean) check(at string, v any) *Problem {
	if _, ok := v.(bool); !ok {
		return problem(at, "expected a boolean, got %s", model.JSONType(v))
	}
	return nil
}

// integer is a whole number from min to max.
type integer struct{ min, max int64 }

func (n integer) check(at string, v any) *Problem {
	var f float64
	switch x := v.(type) {
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return problem(at, "expected a number, got %s", x)
		}
	case float64:
		f = x
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	default:
		return problem(at, "expected a number, got %s", model.JSONType(v))
	}
	switch {
	case f != math.Trunc(f):
		return problem(at, "must be a whole number")
	case f < float64(n.min) || f > float64(n.max):
		return problem(at, "must be from %d to %d", n.min, n.max)
	}
	return nil
}

// colorPattern is the reference's Color.
var colorPattern = regexp.MustCompile(`^#(?:[0-9a-fA-F]{3}){1,2}$`)

type color struct{}

func (color) check(at string, v any) *Problem {
	s, ok := v.(string)
	if !ok {
		return problem(at, "expected a string, got %s", model.JSONType(v))
	}
	if !colorPattern.MatchString(s) {
		return problem(at, "must be a color: # and 3 or 6 hexadecimal digits, such as #346DDB")
	}
	return nil
}

// webAddress is the reference's URL (an absolute URI of at most 2048
// characters), narrowed to http and https: a site's logos, icons, fonts and
// links are loaded or followed by its visitors' browsers, where another
// scheme (javascript:, data:) would run or show what the site did not mean.
type webAddress struct{}

func (webAddress) check(at string, v any) *Problem {
	if p := (text{min: 1, max: 2048}).check(at, v); p != nil {
		return p
	}
	u, err := url.Parse(v.(string))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return problem(at, "must be an absolute http or https URL")
	}
	return nil
}

// linkAddress is where a link of the site's header, footer or announcement
// leads (ContentRefURL.url): any address the reference allows (a path, a
// mailto: address) but one that runs a script in the visitor's browser.
type linkAddress struct{}

func (linkAddress) check(at string, v any) *Problem {
	if p := anyText.check(at, v); p != nil {
		return p
	}
	// What a browser takes for the scheme: the part before the first
	// colon, without the blanks and controls it ignores, in any case.
	s := strings.Map(func(r rune) rune {
		if r <= ' ' {
			return -1
		}
		return r
	}, v.(string))
	if scheme, _, found := strings.Cut(strings.ToLower(s), ":"); found && slices.Contains([]string{"javascript", "vbscript", "data"}, scheme) {
		return problem(at, "must not be a %s: address", scheme)
	}
	return nil
}

// emoji is the reference's Emoji: a character, or its code point, in at
// most 50 characters.
var emoji = text{min: 1, max: 50}

// expression is a visitor condition (the reference's Expression): empty
// for none, or a JavaScript expression, checked as the conditions of
// sections and site spaces are.
type expression struct{}

func (expression) check(at string, v any) *Problem {
	s, ok := v.(string)
	if !ok {
		return problem(at, "expected a string, got %s", model.JSONType(v))
	}
	if s == "" {
		return nil
	}
	if err := condition.Check(s); err != nil {
		return problem(at, "%s", err.Error())
	}
	return nil
}

// list is an array of at least min items of one shape.
type list struct {
	item shape
	min  int
}

func (l list) check(at string, v any) *Problem {
	items, ok := v.([]any)
	if !ok {
		return problem(at, "expected an array, got %s", model.JSONType(v))
	}
	if len(items) < l.min {
		return problem(at, "must have at least %d items", l.min)
	}
	for i, item := range items {
		if p := l.item.check(at+"["+strconv.Itoa(i)+"]", item); p != nil {
			return p
		}
	}
	return nil
}

// union is one of several shapes, chosen by the value: pick returns the one
// v must have, or nil when v can be none of them (what says what it may
// be).
type union struct {
	what string
	pick func(v any) shape
}

func (u union) check(at string, v any) *Problem {
	s := u.pick(v)
	if s == nil {
		return problem(at, "must be %s", u.what)
	}
	return s.check(at, v)
}

// byKind is a union of objects told apart by their member kind.
func byKind(what string, kinds map[string]*object) shape {
	return kindUnion{what: what, kinds: kinds}
}

type kindUnion struct {
	what  string
	kinds map[string]*object
}

func (k kindUnion) check(at string, v any) *Problem {
	m, ok := v.(map[string]any)
	if !ok {
		return problem(at, "expected %s (an object), got %s", k.what, model.JSONType(v))
	}
	kind, present := m["kind"]
	if !present {
		return problem(memberPath(at, "kind"), "is required")
	}
	names := make([]string, 0, len(k.kinds))
	for name := range k.kinds {
		names = append(names, name)
	}
	sort.Strings(names)
	if p := enum(names).check(memberPath(at, "kind"), kind); p != nil {
		return p
	}
	return k.kinds[kind.(string)].check(at, v)
}
