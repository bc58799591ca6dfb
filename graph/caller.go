package graph

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/docsapi/docsapi/store"
)

// Caller is the authenticated user of a request, with their memberships
// (organization id → role; a nil role is a guest), loaded once per request
// together with the user.
//
// A caller may be scoped: its token (a SAML sign-in's session) reaches one
// organization only. It then has that membership alone, so every other
// organization is invisible to it exactly as to an outsider, and it may not
// act beyond the organization (create or join others): requireUnscoped and
// requireReach.
type Caller struct {
	User *store.User

	// scope is the one organization a scoped caller reaches; "" for none.
	scope string
	// tokenID is the id of the token the caller came with ("" for a caller
	// made otherwise); developer, whether that is a developer token.
	tokenID   string
	developer bool
	// expiresAt is when the caller's token stops working (nil: never), for
	// those who hold a caller beyond one request (subscriptions).
	expiresAt *time.Time

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

// NewScopedCaller returns the caller user whose token reaches organization
// orgID only: of memberships, only orgID's is kept.
func NewScopedCaller(user *store.User, memberships []store.Membership, orgID string) *Caller {
	c := &Caller{User: user, scope: orgID, roles: make(map[string]*store.MemberRole, 1)}
	for _, m := range memberships {
		// SECURITY: a scoped token holds no membership but its organization's,
		// whatever the lookup returned.
		if m.OrganizationID == orgID {
			c.roles[m.OrganizationID] = m.Role
		}
	}
	return c
}

// Scope is the organization a scoped caller is confined to; "" when the
// caller's token reaches every organization of the user.
func (c *Caller) Scope() string { return c.scope }

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

// roleSnapshot is a copy of the caller's memberships as they are now, to
// read without the lock (a request's read rules ask thousands of times).
func (c *Caller) roleSnapshot() map[string]*store.MemberRole {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make(map[string]*store.MemberRole, len(c.roles))
	for org, role := range c.roles {
		out[org] = role
	}
	return out
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

// SameAs tells whether c and o are the same user with the same
// memberships: nothing access is decided on differs between them.
func (c *Caller) SameAs(o *Caller) bool {
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
	// SECURITY: a scoped caller never gains another organization, even
	// within the request (the mutations that would are refused before).
	if c.scope != "" && orgID != c.scope {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.roles[orgID] = &role
}

// Authenticate returns the caller whose API token this is, as of now, or
// ErrUnauthenticated for a token that matches no one or has expired. Who a
// token belongs to comes from the caller cache (store/callers.go), emptied
// by every change to users, tokens and memberships.
func (r *Resolver) Authenticate(ctx context.Context, token string) (*Caller, error) {
	if r.DB.Replicated() {
		// SECURITY: on the primary, never a replica that may not have
		// seen a token revoked or a member removed (store/replica_route.go).
		ctx = store.OnPrimary(ctx)
	}
	c, err := r.DB.Callers.Caller(ctx, token, r.now())
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrUnauthenticated
	} else if err != nil {
		return nil, err
	}
	// SECURITY: a token confined to an organization makes a caller confined
	// to it.
	var caller *Caller
	if c.OrganizationID != nil {
		caller = NewScopedCaller(c.User, c.Memberships, *c.OrganizationID)
	} else {
		caller = NewCaller(c.User, c.Memberships)
	}
	caller.tokenID, caller.developer = c.TokenID, c.Developer
	caller.expiresAt = c.ExpiresAt
	return caller, nil
}

// Developer tells a caller whose token is a developer token: it may run
// ad-hoc documents and introspection where others run registered documents
// only (DOCSAPI_TRUSTED_DOCUMENTS).
func (c *Caller) Developer() bool { return c != nil && c.developer }

// BudgetKey is what the caller's rate budget is counted under: its token.
func (c *Caller) BudgetKey() string { return "token:" + c.tokenID }

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

// callerRequired answers UNAUTHENTICATED for every root field but
// introspection's (__schema, __type, __typename) of an operation without a
// caller, before its resolver runs. /graphql lets requests without a token
// through (GraphiQL loads the schema before the user pastes one); a
// resolver would refuse them too, but not always first: one that looks its
// object up before asking for the caller would answer NOT_FOUND, and a
// hot subtree of the direct writer null. With this, an operation that needs
// a caller and has none is refused alike everywhere, and the transport
// answers it as a bad token is answered (401).
type callerRequired struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.RootFieldInterceptor
} = callerRequired{}

func (callerRequired) ExtensionName() string                   { return "CallerRequired" }
func (callerRequired) Validate(graphql.ExecutableSchema) error { return nil }

func (callerRequired) InterceptRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	if fc := graphql.GetRootFieldContext(ctx); fc != nil && !strings.HasPrefix(fc.Field.Name, "__") {
		// SECURITY: a visitor of a published site asks what it reads of
		// that site through a few root fields only (visitor.go).
		if VisitorFrom(ctx) != nil && visitorRootFields[fc.Field.Name] {
			return next(ctx)
		}
		if _, err := CallerFrom(ctx); err != nil {
			graphql.AddError(ctx, err)
			return graphql.Null
		}
	}
	return next(ctx)
}

// Expired tells whether the caller's token has expired by now.
func (c *Caller) Expired(now time.Time) bool {
	return c.expiresAt != nil && !now.Before(*c.expiresAt)
}
