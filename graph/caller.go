package graph

import (
	"context"
	"slices"
	"sync"

	"github.com/docsapi/docsapi/store"
)

// Caller is the authenticated user of a request, with their memberships
// (organization id → role; a nil role is a guest), loaded once per request
// together with the user.
type Caller struct {
	User *store.User

	mu    sync.RWMutex
	roles map[string]*store.MemberRole
}

// NewCaller returns the caller user with memberships.
func NewCaller(user *store.User, memberships []store.Membership) *Caller {
	c := &Caller{User: user, roles: make(map[string]*store.MemberRole, len(memberships))}
	for _, m := range memberships {
		c.roles[m.OrganizationID] = m.Role
	}
	return c
}

// Membership returns the caller's role in orgID and whether they are a
// member at all (a guest is a member with no role).
func (c *Caller) Membership(orgID string) (role store.MemberRole, member bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	r, member := c.roles[orgID]
	if r != nil {
		role = *r
	}
	return role, member
}

// Organizations lists, sorted, the organizations where the caller holds at
// least min (empty: every membership, guests included).
func (c *Caller) Organizations(min store.MemberRole) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []string
	for org, role := range c.roles {
		if min == "" || (role != nil && role.AtLeast(min)) {
			out = append(out, org)
		}
	}
	slices.Sort(out)
	return out
}

// sameAs tells whether c and o are the same user with the same
// memberships: nothing access is decided on differs between them.
func (c *Caller) sameAs(o *Caller) bool {
	if c == o {
		return true
	}
	if c.User.ID != o.User.ID || c.User.Email != o.User.Email {
		return false
	}
	orgs := c.Organizations("")
	if !slices.Equal(orgs, o.Organizations("")) {
		return false
	}
	for _, org := range orgs {
		mine, _ := c.Membership(org)
		theirs, _ := o.Membership(org)
		if mine != theirs {
			return false
		}
	}
	return true
}

// joined records a membership the caller gained during this request, so the
// rest of the request (the permissions of the organization just created, say)
// sees it.
func (c *Caller) joined(orgID string, role store.MemberRole) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.roles[orgID] = &role
}

type callerKey struct{}

// WithCaller returns a context carrying c.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller of ctx, or ErrUnauthenticated.
func CallerFrom(ctx context.Context) (*Caller, error) {
	if c, ok := ctx.Value(callerKey{}).(*Caller); ok && c != nil {
		return c, nil
	}
	return nil, ErrUnauthenticated
}
