package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// Organization is a tenant: it owns spaces and sites and has members.
type Organization struct {
	bun.BaseModel `bun:"table:organizations"`

	ID            string                     `bun:"id,pk"`
	Title         string                     `bun:"title"`
	EmailDomains  []string                   `bun:"email_domains,array"`
	Hostname      *string                    `bun:"hostname"`
	Type          OrganizationType           `bun:"type"`
	UseCase       *OrganizationUseCase       `bun:"use_case"`
	CommunityType *OrganizationCommunityType `bun:"community_type"`
	DefaultRole   *MemberRole                `bun:"default_role"`
	DefaultSiteID *string                    `bun:"default_site_id"`
	Logo          *string                    `bun:"logo"`
	SSO           bool                       `bun:"sso"`
	AI            bool                       `bun:"ai"`
	InviteLinks   bool                       `bun:"invite_links"`
	Plan          BillingProduct             `bun:"plan"`
	MergeRules    MergeRules                 `bun:"merge_rules,type:jsonb"`

	AgentInstructions          json.RawMessage `bun:"agent_instructions,type:jsonb"`
	AgentInstructionsUpdatedAt time.Time       `bun:"agent_instructions_updated_at"`
	AgentInstructionsUpdatedBy string          `bun:"agent_instructions_updated_by"`

	CreatedAt time.Time `bun:"created_at"`
	UpdatedAt time.Time `bun:"updated_at"`
}

// EmptyDocument is a rich-text document with no content.
var EmptyDocument = json.RawMessage(`{"object":"document","data":{},"nodes":[]}`)

// MergeRules say what a change request needs before it can be merged.
type MergeRules struct {
	Type  MergeRulesType `json:"type"`
	Rules []MergeRule    `json:"rules,omitempty"`
}

// Scan reads merge rules from their jsonb column. The configurations
// without rules, which nearly every space has ("inherit"), are recognised
// without running a JSON decoder: a site's tree reads a thousand spaces.
func (m *MergeRules) Scan(src any) error {
	var raw []byte
	switch v := src.(type) {
	case []byte:
		raw = v
	case string:
		raw = []byte(v)
	default:
		return fmt.Errorf("store: merge rules from %T", src)
	}
	// PostgreSQL writes jsonb in this one form.
	switch string(raw) {
	case `{"type": "inherit"}`:
		*m = MergeRules{Type: MergeRulesInherit}
		return nil
	case `{"type": "none"}`:
		*m = MergeRules{Type: MergeRulesNone}
		return nil
	}
	*m = MergeRules{}
	return json.Unmarshal(raw, m)
}

// MergeRule is one rule of a "rules" configuration.
type MergeRule struct {
	Rule       MergeRuleKind `json:"rule"`
	Users      []string      `json:"users,omitempty"`
	Expression *string       `json:"expression,omitempty"`
}

// CreateOrganization inserts org and makes ownerID its admin.
func CreateOrganization(ctx context.Context, db bun.IDB, org *Organization, ownerID string) error {
	return RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(org).Exec(ctx); err != nil {
			return translate(err)
		}
		_, err := tx.NewInsert().Model(&Member{
			OrganizationID: org.ID, UserID: ownerID, Role: ptr(RoleAdmin), JoinedAt: org.CreatedAt,
		}).Exec(ctx)
		return translate(err)
	})
}

// GetOrganization returns the organization with id.
func GetOrganization(ctx context.Context, db bun.IDB, id string) (*Organization, error) {
	o := new(Organization)
	err := db.NewSelect().Model(o).Where("id = ?", id).Scan(ctx)
	return o, translate(err)
}

// OrganizationsByIDs returns the organizations with these ids, in no particular order.
func OrganizationsByIDs(ctx context.Context, db bun.IDB, ids []string) ([]*Organization, error) {
	return selectRows[Organization](ctx, db, idIn("id", ids), "", ids)
}

// ListOrganizationsOfUser pages through the organizations userID is a
// member of; with scope set, that organization only (a caller whose token is
// confined to it).
func ListOrganizationsOfUser(ctx context.Context, db bun.IDB, userID, scope string, p Page) ([]*Organization, error) {
	var orgs []*Organization
	// Not correlated: memberships are distributed by organization and
	// organizations a reference table, which Citus does not correlate.
	// The user's memberships are found first (every shard: a user's
	// organizations are a question across organizations), then read.
	q := db.NewSelect().Model(&orgs).
		Where("organization.id IN (SELECT m.organization_id FROM organization_members m WHERE m.user_id = ? AND NOT m.disabled)", userID)
	if scope != "" {
		q = q.Where("organization.id = ?", scope)
	}
	err := p.scan(ctx, p.byCreation(q, "organization"))
	return orgs, translate(err)
}

// UpdateOrganization writes the given columns of org.
func UpdateOrganization(ctx context.Context, db bun.IDB, org *Organization, columns ...string) error {
	_, err := db.NewUpdate().Model(org).Column(append(columns, "updated_at")...).WherePK().Exec(ctx)
	return translate(err)
}

func ptr[T any](v T) *T { return &v }

// Object is the REST type name of an organization.
func (Organization) Object() string { return "organization" }

// InternalIsOnNewTrial is a deprecated field of the reference, always true.
func (Organization) InternalIsOnNewTrial() bool { return true }
