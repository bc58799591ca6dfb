package graph

import (
	"context"
	"slices"
	"testing"

	"github.com/docsapi/docsapi/store"
)

// A scoped caller holds its organization's membership alone, and never
// gains another, even for the rest of a request.
func TestScopedCaller(t *testing.T) {
	admin, read := store.RoleAdmin, store.RoleRead
	memberships := []store.Membership{{OrganizationID: "a", Role: &admin}, {OrganizationID: "b", Role: &read}, {OrganizationID: "c"}}
	for _, tc := range []struct {
		name   string
		caller *Caller
		orgs   []string
		scope  string
	}{
		{"unscoped", NewCaller(&store.User{ID: "u"}, memberships), []string{"a", "b", "c", "d"}, ""},
		{"scoped to a membership", NewScopedCaller(&store.User{ID: "u"}, memberships, "b"), []string{"b"}, "b"},
		{"scoped to no membership", NewScopedCaller(&store.User{ID: "u"}, memberships, "z"), nil, "z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.caller.joined("d", store.RoleEdit)
			if got := tc.caller.Organizations(""); !slices.Equal(got, tc.orgs) {
				t.Errorf("organizations %v, want %v", got, tc.orgs)
			}
			if _, member := tc.caller.Membership("a"); member != (tc.scope == "") {
				t.Errorf("member of a: %v", member)
			}
			ctx := WithCaller(context.Background(), tc.caller)
			for org, allowed := range map[string]bool{"a": tc.scope == "", "b": tc.scope == "" || tc.scope == "b"} {
				if err := requireReach(ctx, org, "act"); (err == nil) != allowed {
					t.Errorf("requireReach(%s): %v", org, err)
				}
			}
			if err := requireUnscoped(ctx, "act"); (err == nil) != (tc.scope == "") {
				t.Errorf("requireUnscoped: %v", err)
			}
		})
	}
}
