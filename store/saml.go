package store

import (
	"context"
	"io"
	"time"

	"github.com/uptrace/bun"
)

// SAMLProvider is an identity provider the members of an organization sign
// in with (graph/saml.go).
type SAMLProvider struct {
	bun.BaseModel `bun:"table:saml_providers,alias:sp"`

	ID             string      `bun:"id,pk"`
	OrganizationID string      `bun:"organization_id"`
	Label          string      `bun:"label"`
	SSOURL         string      `bun:"sso_url"`
	EntityID       string      `bun:"entity_id"`
	Certificate    string      `bun:"certificate"`
	DefaultTeamID  *string     `bun:"default_team_id"`
	DefaultRole    *MemberRole `bun:"default_role"`
	CreatedAt      time.Time   `bun:"created_at"`
	UpdatedAt      time.Time   `bun:"updated_at"`
}

// Object is the REST type name of a SAML provider.
func (SAMLProvider) Object() string { return "saml-provider" }

// Status is active once the identity provider's URL, entity ID and
// certificate are all set: only then can anyone sign in with it.
func (p *SAMLProvider) Status() SAMLProviderStatus {
	if p.SSOURL == "" || p.EntityID == "" || p.Certificate == "" {
		return SAMLProviderPending
	}
	return SAMLProviderActive
}

// SAMLProviderStatus says whether a provider can be signed in with.
type SAMLProviderStatus string

const (
	SAMLProviderActive  SAMLProviderStatus = "active"
	SAMLProviderPending SAMLProviderStatus = "pending"
)

// AllSAMLProviderStatuses lists the states of a provider.
var AllSAMLProviderStatuses = []SAMLProviderStatus{SAMLProviderActive, SAMLProviderPending}

func (s *SAMLProviderStatus) UnmarshalGQL(x any) error {
	return unmarshalEnum(s, x, "SAMLProviderStatus", AllSAMLProviderStatuses)
}
func (s SAMLProviderStatus) MarshalGQL(w io.Writer) { marshalEnum(w, s) }

// CreateSAMLProvider inserts p.
func CreateSAMLProvider(ctx context.Context, db bun.IDB, p *SAMLProvider) error {
	_, err := db.NewInsert().Model(p).Exec(ctx)
	return translate(err)
}

// GetSAMLProvider returns provider id of orgID.
func GetSAMLProvider(ctx context.Context, db bun.IDB, orgID, id string) (*SAMLProvider, error) {
	ctx = inOrganization(ctx, orgID)
	p := new(SAMLProvider)
	err := db.NewSelect().Model(p).Where("sp.organization_id = ? AND sp.id = ?", orgID, id).Scan(ctx)
	return p, translate(err)
}

// SAMLProviderByID returns provider id, whatever its organization: a sign-in
// names only the provider.
func SAMLProviderByID(ctx context.Context, db bun.IDB, id string) (*SAMLProvider, error) {
	p := new(SAMLProvider)
	err := db.NewSelect().Model(p).Where("sp.id = ?", id).Scan(ctx)
	return p, translate(err)
}

// ListSAMLProviders pages through the providers of an organization, oldest first.
func ListSAMLProviders(ctx context.Context, db bun.IDB, orgID string, p Page) ([]*SAMLProvider, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*SAMLProvider
	q := db.NewSelect().Model(&rows).Where("sp.organization_id = ?", orgID)
	err := p.scan(ctx, p.byTime(q, "sp.created_at", "sp.id", false))
	return rows, translate(err)
}

// AllSAMLProviders is every provider of an organization, oldest first (the
// sign-in entries: an organization has a handful).
func AllSAMLProviders(ctx context.Context, db bun.IDB, orgID string) ([]*SAMLProvider, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*SAMLProvider
	err := db.NewSelect().Model(&rows).Where("sp.organization_id = ?", orgID).Order("sp.created_at", "sp.id").Scan(ctx)
	return rows, translate(err)
}

// UpdateSAMLProvider writes the given columns of p.
func UpdateSAMLProvider(ctx context.Context, db bun.IDB, p *SAMLProvider, columns ...string) error {
	_, err := byKey(db, db.NewUpdate().Model(p).Column(columns...), p).Exec(ctx)
	return translate(err)
}

// DeleteSAMLProvider removes provider id of orgID (and its pending
// requests); false when there was none.
func DeleteSAMLProvider(ctx context.Context, db bun.IDB, orgID, id string) (bool, error) {
	return deleteRows(ctx, db, (*SAMLProvider)(nil), "organization_id = ? AND id = ?", orgID, id)
}

// SAMLRequest is an AuthnRequest sent to a provider, remembered so that a
// response is accepted only in answer to it, and only once.
type SAMLRequest struct {
	bun.BaseModel `bun:"table:saml_requests,alias:sr"`

	ID             string     `bun:"id,pk"`
	OrganizationID string     `bun:"organization_id"`
	ProviderID     string     `bun:"provider_id"`
	CreatedAt      time.Time  `bun:"created_at"`
	ConsumedAt     *time.Time `bun:"consumed_at"`
	// LinkUserID is set on a link flow's request: the user who started it
	// from their authenticated session, to whom the answer's identity may be
	// linked (graph/sso_link.go). Nil on a sign-in's request.
	LinkUserID *string `bun:"link_user_id"`
	// LinkNameID and LinkCodeSHA256 hold a link flow's verified answer until
	// the user confirms it with the code (only its digest is stored).
	LinkNameID     *string `bun:"link_name_id"`
	LinkCodeSHA256 []byte  `bun:"link_code_sha256"`
}

// AddSAMLRequest records request r, and forgets its organization's
// requests made, or answered, before forgetBefore (their answers, and link
// codes, are refused by then anyway; another organization's are forgotten
// at its next request).
func AddSAMLRequest(ctx context.Context, db bun.IDB, r *SAMLRequest, forgetBefore time.Time) error {
	if err := inParentOrganization(ctx, db, &r.OrganizationID, "saml_providers", r.ProviderID); err != nil {
		return err
	}
	// The organization's own old requests (one shard).
	if _, err := db.NewDelete().Model((*SAMLRequest)(nil)).Where("organization_id = ? AND coalesce(consumed_at, created_at) < ?", r.OrganizationID, forgetBefore).Exec(ctx); err != nil {
		return translate(err)
	}
	_, err := db.NewInsert().Model(r).Exec(ctx)
	return translate(err)
}

// OpenSAMLRequest reports whether request id of providerID was sent since
// after and is not answered yet.
func OpenSAMLRequest(ctx context.Context, db bun.IDB, id, providerID string, after time.Time) (bool, error) {
	ok, err := db.NewSelect().Model((*SAMLRequest)(nil)).
		Where("id = ? AND provider_id = ? AND created_at >= ? AND consumed_at IS NULL", id, providerID, after).
		Exists(ctx)
	return ok, translate(err)
}

// ConsumeSAMLRequest marks request id of providerID answered and returns
// it; ErrNotFound when it already was (a replay) or is gone. In the
// sign-in's transaction, so of two concurrent answers only one signs in.
func ConsumeSAMLRequest(ctx context.Context, db bun.IDB, id, providerID string, now time.Time) (*SAMLRequest, error) {
	r := new(SAMLRequest)
	err := db.NewUpdate().Model(r).Set("consumed_at = ?", now).
		Where("id = ? AND provider_id = ? AND consumed_at IS NULL", id, providerID).
		Returning("*").Scan(ctx)
	return r, translate(err)
}

// HoldSAMLLink records the verified NameID of a link flow's answer, and the
// digest of the one-time code that confirms it.
func HoldSAMLLink(ctx context.Context, db bun.IDB, requestID, nameID string, codeDigest []byte) error {
	_, err := db.NewUpdate().Model((*SAMLRequest)(nil)).Set("link_name_id = ?, link_code_sha256 = ?", nameID, codeDigest).
		Where("id = ? AND link_user_id IS NOT NULL", requestID).Exec(ctx)
	return translate(err)
}

// TakeSAMLLink removes, and returns the NameID of, the held link of
// providerID started by userID whose code has this digest and whose answer
// came at or after heldSince; ErrNotFound when there is none (unknown code,
// another user's, expired, or already taken).
func TakeSAMLLink(ctx context.Context, db bun.IDB, providerID, userID string, codeDigest []byte, heldSince time.Time) (string, error) {
	var nameID string
	err := db.NewDelete().Model((*SAMLRequest)(nil)).
		Where("link_code_sha256 = ? AND provider_id = ? AND link_user_id = ? AND link_name_id IS NOT NULL AND consumed_at >= ?",
			codeDigest, providerID, userID, heldSince).
		Returning("link_name_id").Scan(ctx, &nameID)
	return nameID, translate(err)
}

// SAMLIdentity binds what a provider asserts about someone, its NameID, to
// a user. A sign-in through the provider with that NameID signs that user in;
// nothing else does (graph/sso_login.go).
type SAMLIdentity struct {
	bun.BaseModel `bun:"table:saml_identities,alias:si"`

	ProviderID     string    `bun:"provider_id,pk"`
	NameID         string    `bun:"name_id,pk"`
	UserID         string    `bun:"user_id"`
	OrganizationID string    `bun:"organization_id"`
	CreatedAt      time.Time `bun:"created_at"`
}

// SAMLIdentityByNameID returns the identity nameID at providerID is bound to.
func SAMLIdentityByNameID(ctx context.Context, db bun.IDB, providerID, nameID string) (*SAMLIdentity, error) {
	i := new(SAMLIdentity)
	err := db.NewSelect().Model(i).Where("si.provider_id = ? AND si.name_id = ?", providerID, nameID).Scan(ctx)
	return i, translate(err)
}

// SAMLIdentityOfUser returns userID's identity at providerID.
func SAMLIdentityOfUser(ctx context.Context, db bun.IDB, providerID, userID string) (*SAMLIdentity, error) {
	i := new(SAMLIdentity)
	err := db.NewSelect().Model(i).Where("si.provider_id = ? AND si.user_id = ?", providerID, userID).Scan(ctx)
	return i, translate(err)
}

// BindSAMLIdentity inserts i; ErrConflict when its NameID is bound already,
// or its user already has an identity at its provider.
func BindSAMLIdentity(ctx context.Context, db bun.IDB, i *SAMLIdentity) error {
	_, err := db.NewInsert().Model(i).Exec(ctx)
	return translate(err)
}

// SSOEnforcingOrganization is an organization that enforces single sign-on
// (its sso flag) on userID, a member there who is not an admin; "" when
// there is none.
func SSOEnforcingOrganization(ctx context.Context, db bun.IDB, userID string) (string, error) {
	var ids []string
	err := db.NewRaw(`SELECT o.id FROM organizations AS o JOIN organization_members AS m ON m.organization_id = o.id
		WHERE m.user_id = ? AND o.sso AND m.role IS DISTINCT FROM 'admin' ORDER BY o.id LIMIT 1`, userID).Scan(ctx, &ids)
	if err != nil || len(ids) == 0 {
		return "", translate(err)
	}
	return ids[0], nil
}

// SAMLServiceKey is this service's SAML key pair, DER-encoded: the private
// key (PKCS #8; Sealed: encrypted under the server key) and its
// self-signed certificate. There is one.
type SAMLServiceKey struct {
	bun.BaseModel `bun:"table:saml_service_keys"`

	ID          bool      `bun:"id,pk"`
	PrivateKey  []byte    `bun:"private_key"`
	Sealed      bool      `bun:"sealed"`
	Certificate []byte    `bun:"certificate"`
	CreatedAt   time.Time `bun:"created_at"`
}

// GetSAMLServiceKey returns the service's key pair; ErrNotFound before one
// is made.
func GetSAMLServiceKey(ctx context.Context, db bun.IDB) (*SAMLServiceKey, error) {
	k := &SAMLServiceKey{}
	err := db.NewSelect().Model(k).Where("id").Scan(ctx)
	return k, translate(err)
}

// PutSAMLServiceKey stores k as the service's key pair unless one exists
// already, and returns the one stored: another instance's, when it made
// one first.
func PutSAMLServiceKey(ctx context.Context, db bun.IDB, k *SAMLServiceKey) (*SAMLServiceKey, error) {
	k.ID = true
	if _, err := db.NewInsert().Model(k).On("CONFLICT (id) DO NOTHING").Exec(ctx); err != nil {
		return nil, translate(err)
	}
	return GetSAMLServiceKey(ctx, db)
}
