package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// User is a person with an account on this instance.
type User struct {
	bun.BaseModel `bun:"table:users"`

	ID          string    `bun:"id,pk"`
	Email       string    `bun:"email"`
	DisplayName string    `bun:"display_name"`
	PhotoURL    *string   `bun:"photo_url"`
	CreatedAt   time.Time `bun:"created_at"`
	UpdatedAt   time.Time `bun:"updated_at"`
}

// APIToken is a credential of a user; only its digest is stored.
type APIToken struct {
	bun.BaseModel `bun:"table:api_tokens"`

	ID          string    `bun:"id,pk"`
	UserID      string    `bun:"user_id"`
	TokenSHA256 []byte    `bun:"token_sha256"`
	Label       string    `bun:"label"`
	CreatedAt   time.Time `bun:"created_at"`
	// ExpiresAt ends the token's use; nil is never.
	ExpiresAt *time.Time `bun:"expires_at"`
	// OrganizationID confines the token to that organization (a SAML
	// sign-in's session); nil reaches every organization of the user.
	OrganizationID *string `bun:"organization_id"`
	// Developer lets the token run ad-hoc documents and introspection when
	// only registered (trusted) documents run for others.
	Developer bool `bun:"developer"`
}

// Membership is a user's role in one organization; a nil Role is a guest.
type Membership struct {
	OrganizationID string      `bun:"organization_id" json:"organization_id"`
	Role           *MemberRole `bun:"role" json:"role"`
}

// CreateUser inserts u. A second user with the same email (ignoring case) is ErrConflict.
func CreateUser(ctx context.Context, db bun.IDB, u *User) error {
	_, err := db.NewInsert().Model(u).Exec(ctx)
	return translate(err)
}

// GetUser returns the user with id.
func GetUser(ctx context.Context, db bun.IDB, id string) (*User, error) {
	u := new(User)
	err := db.NewSelect().Model(u).Where("id = ?", id).Scan(ctx)
	return u, translate(err)
}

// UsersByIDs returns the users with these ids, in no particular order.
func UsersByIDs(ctx context.Context, db bun.IDB, ids []string) ([]*User, error) {
	return selectRows[User](ctx, db, idIn("id", ids), "", ids)
}

// CountUsers is the number of users; the bootstrap acts only on an empty instance.
func CountUsers(ctx context.Context, db bun.IDB) (int64, error) {
	n, err := db.NewSelect().Model((*User)(nil)).Count(ctx)
	return n, translate(err)
}

// AddToken registers secret as an API token of user userID.
func AddToken(ctx context.Context, db bun.IDB, userID, secret, label string, now time.Time, expiresAt *time.Time) (*APIToken, error) {
	return insertToken(ctx, db, &APIToken{ID: NewID(), UserID: userID, TokenSHA256: TokenDigest(secret), Label: label, CreatedAt: now, ExpiresAt: expiresAt})
}

// AddDeveloperToken registers secret as a developer token of user userID
// (APIToken.Developer).
func AddDeveloperToken(ctx context.Context, db bun.IDB, userID, secret, label string, now time.Time) (*APIToken, error) {
	return insertToken(ctx, db, &APIToken{ID: NewID(), UserID: userID, TokenSHA256: TokenDigest(secret), Label: label, CreatedAt: now, Developer: true})
}

func insertToken(ctx context.Context, db bun.IDB, t *APIToken) (*APIToken, error) {
	_, err := db.NewInsert().Model(t).Exec(ctx)
	return t, translate(err)
}

// AddOrganizationToken registers secret as an API token of user userID that
// reaches organization orgID only, until expiresAt.
func AddOrganizationToken(ctx context.Context, db bun.IDB, userID, orgID, secret, label string, now, expiresAt time.Time) (*APIToken, error) {
	t := &APIToken{ID: NewID(), UserID: userID, TokenSHA256: TokenDigest(secret), Label: label, CreatedAt: now,
		ExpiresAt: &expiresAt, OrganizationID: &orgID}
	_, err := db.NewInsert().Model(t).Exec(ctx)
	return t, translate(err)
}

// DeleteTokensExpiredBy removes the tokens that have expired at t (a token
// stops working at its expiry); it returns how many.
func DeleteTokensExpiredBy(ctx context.Context, db bun.IDB, t time.Time) (int64, error) {
	res, err := db.NewDelete().Model((*APIToken)(nil)).Where("expires_at <= ?", t).Exec(ctx)
	if err != nil {
		return 0, translate(err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// TokenCaller is who a bearer token speaks for.
type TokenCaller struct {
	User *User
	// Memberships are the enabled memberships the token reaches: all of the
	// user's, or, for a token confined to an organization, that one's only.
	Memberships []Membership
	// ExpiresAt ends the token's use; nil is never.
	ExpiresAt *time.Time
	// OrganizationID is the organization the token is confined to; nil for
	// a token that reaches every organization of the user.
	OrganizationID *string
	// TokenID is the token's id (what its rate budget is counted under);
	// Developer, whether it is a developer token (APIToken.Developer).
	TokenID   string
	Developer bool
}

// CallerByToken finds the user owning token, with the memberships the token
// reaches, when it expires (nil: never) and the organization it is confined
// to, in one query: it runs on every request. Whether the token has expired
// is for the caller to decide, on the server's clock.
func CallerByToken(ctx context.Context, db bun.IDB, token string) (*TokenCaller, error) {
	var row struct {
		User
		Memberships    []Membership `bun:"memberships,type:jsonb"`
		TokenExpiresAt *time.Time   `bun:"token_expires_at"`
		TokenOrgID     *string      `bun:"token_organization_id"`
		TokenID        string       `bun:"token_id"`
		TokenDeveloper bool         `bun:"token_developer"`
	}
	// SECURITY: a token confined to an organization carries no other
	// membership, so nothing downstream can reach another organization with it.
	//
	// Memberships are distributed by organization and tokens and users
	// are reference tables, which Citus does not correlate: the token is
	// found first (t), then the memberships of its user (every shard: a
	// user's organizations are a question across organizations; the
	// caller cache keeps the answer).
	err := db.NewRaw(`WITH t AS (SELECT id, user_id, expires_at, organization_id, developer FROM api_tokens WHERE token_sha256 = ?),
		m AS (SELECT COALESCE(jsonb_agg(jsonb_build_object('organization_id', m.organization_id, 'role', m.role)), '[]') AS memberships
			FROM organization_members m WHERE m.user_id = (SELECT user_id FROM t) AND NOT m.disabled
			AND ((SELECT organization_id FROM t) IS NULL OR m.organization_id = (SELECT organization_id FROM t)))
		SELECT u.*, t.expires_at AS token_expires_at, t.organization_id AS token_organization_id,
			t.id AS token_id, t.developer AS token_developer, m.memberships
		FROM t JOIN users u ON u.id = t.user_id CROSS JOIN m`, TokenDigest(token)).Scan(ctx, &row)
	if err != nil {
		return nil, translate(err)
	}
	return &TokenCaller{User: &row.User, Memberships: row.Memberships, ExpiresAt: row.TokenExpiresAt, OrganizationID: row.TokenOrgID,
		TokenID: row.TokenID, Developer: row.TokenDeveloper}, nil
}

// Object is the REST type name of a user.
func (User) Object() string { return "user" }

// LockBootstrap serialises instance bootstrap across processes for the rest of tx.
func LockBootstrap(ctx context.Context, tx bun.Tx) error {
	_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", migrationLockKey+1)
	return translate(err)
}

// UserByEmail returns the user with email, ignoring case.
func UserByEmail(ctx context.Context, db bun.IDB, email string) (*User, error) {
	u := new(User)
	err := db.NewSelect().Model(u).Where("lower(email) = lower(?)", email).Scan(ctx)
	return u, translate(err)
}
