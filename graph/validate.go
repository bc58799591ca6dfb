package graph

import (
	"net/url"
	"regexp"
	"strconv"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
)

// Checks of input limits; the limits are constants next to the resolvers
// that apply them (maxSpaceTitle, maxChangeRequestSubject...). Each check
// returns a 400 naming the field; lengths count characters, not bytes.

func checkLength(field, s string, min, max int) error {
	n := utf8.RuneCountInString(s)
	switch {
	case n < min && min == 1:
		return Invalid(field, "must not be empty")
	case n < min:
		return Invalid(field, "must be at least %d characters", min)
	case n > max:
		return Invalid(field, "must be at most %d characters", max)
	}
	return nil
}

func checkPattern(field, s string, re *regexp.Regexp, what string) error {
	if !re.MatchString(s) {
		return Invalid(field, "must be %s", what)
	}
	return nil
}

// checkURL accepts absolute http(s) URLs of at most max characters.
func checkURL(field, s string, max int) error {
	if err := checkLength(field, s, 1, max); err != nil {
		return err
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Invalid(field, "must be an absolute http or https URL")
	}
	return nil
}

// notNull rejects an explicit null for a field that cannot be cleared, and
// returns the value when one was given.
func notNull[T any](field string, o graphql.Omittable[*T]) (v T, set bool, err error) {
	p, set := o.ValueOK()
	if !set {
		return v, false, nil
	}
	if p == nil {
		return v, false, Invalid(field, "cannot be null")
	}
	return *p, true, nil
}

func itoa(i int) string { return strconv.Itoa(i) }

// truncateRunes shortens s to at most max characters.
func truncateRunes(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max])
}
