package store

import (
	"fmt"
	"io"
	"slices"
	"strconv"
)

// The enumerations of the API. Each is a string type whose values are the
// REST values; they implement gqlgen's Marshaler and Unmarshaler, so the
// GraphQL schema binds its enums (and, where a value is not a valid GraphQL
// name, such as "share-link", its enum-like scalars) straight to them and an
// unknown value is rejected while variables are coerced, before a resolver runs.

// MemberRole is a member's role in an organization, from most to least powerful.
type MemberRole string

const (
	RoleAdmin   MemberRole = "admin"
	RoleCreate  MemberRole = "create"
	RoleReview  MemberRole = "review"
	RoleEdit    MemberRole = "edit"
	RoleComment MemberRole = "comment"
	RoleRead    MemberRole = "read"
)

// MemberRoles lists the roles from most to least powerful.
var MemberRoles = []MemberRole{RoleAdmin, RoleCreate, RoleReview, RoleEdit, RoleComment, RoleRead}

// Rank orders roles: higher is more powerful; an unknown role (or a guest's
// empty one) ranks 0.
func (r MemberRole) Rank() int {
	if i := slices.Index(MemberRoles, r); i >= 0 {
		return len(MemberRoles) - i
	}
	return 0
}

// AtLeast reports whether r grants at least what min grants.
func (r MemberRole) AtLeast(min MemberRole) bool { return r.Rank() >= min.Rank() }

func (r *MemberRole) UnmarshalGQL(v any) error { return unmarshalEnum(r, v, "MemberRole", MemberRoles) }
func (r MemberRole) MarshalGQL(w io.Writer)    { marshalEnum(w, r) }

// DefaultLevel is the role members get on a piece of content by default: a
// role, "inherit" (from the parent), or guest (stored as NULL, a nil pointer).
type DefaultLevel string

const DefaultLevelInherit DefaultLevel = "inherit"

var defaultLevels = append([]DefaultLevel{DefaultLevelInherit}, func() []DefaultLevel {
	out := make([]DefaultLevel, len(MemberRoles))
	for i, r := range MemberRoles {
		out[i] = DefaultLevel(r)
	}
	return out
}()...)

func (l *DefaultLevel) UnmarshalGQL(v any) error {
	return unmarshalEnum(l, v, "DefaultLevel", defaultLevels)
}
func (l DefaultLevel) MarshalGQL(w io.Writer) { marshalEnum(w, l) }

// ContentVisibility is who can read a space.
type ContentVisibility string

var contentVisibilities = []ContentVisibility{"public", "unlisted", "share-link", "visitor-auth", "in-collection", "private"}

const (
	VisibilityPrivate ContentVisibility = "private"
	// VisibilityInCollection: readable by whoever can read the space's collection.
	VisibilityInCollection ContentVisibility = "in-collection"
)

func (v *ContentVisibility) UnmarshalGQL(x any) error {
	return unmarshalEnum(v, x, "ContentVisibility", contentVisibilities)
}
func (v ContentVisibility) MarshalGQL(w io.Writer) { marshalEnum(w, v) }

// SiteVisibility is who can read a published site.
type SiteVisibility string

const (
	SiteVisibilityPublic    SiteVisibility = "public"
	SiteVisibilityShareLink SiteVisibility = "share-link"
)

var siteVisibilities = []SiteVisibility{"public", "unlisted", "share-link", "visitor-auth"}

func (v *SiteVisibility) UnmarshalGQL(x any) error {
	return unmarshalEnum(v, x, "SiteVisibility", siteVisibilities)
}
func (v SiteVisibility) MarshalGQL(w io.Writer) { marshalEnum(w, v) }

// SiteType is a site's plan.
type SiteType string

var siteTypes = []SiteType{"basic", "premium", "ultimate", "sponsored", "legacy-basic", "legacy-premium"}

func (t *SiteType) UnmarshalGQL(v any) error { return unmarshalEnum(t, v, "SiteType", siteTypes) }
func (t SiteType) MarshalGQL(w io.Writer)    { marshalEnum(w, t) }

// Language is a content language.
type Language string

var languages = []Language{"en", "fr", "de", "es", "it", "pt", "pt-br", "ru", "ja", "zh", "yue", "ko",
	"ar", "hi", "nl", "pl", "tr", "sv", "no", "da", "fi", "el", "cs", "hu", "ro", "th", "vi", "id", "ms",
	"he", "uk", "sk", "bg", "hr", "lt", "lv", "et", "sl"}

func (l *Language) UnmarshalGQL(v any) error { return unmarshalEnum(l, v, "Language", languages) }
func (l Language) MarshalGQL(w io.Writer)    { marshalEnum(w, l) }

// InvalidValueError is a value that is not one of its type's: the client's
// mistake, answered with 400.
type InvalidValueError struct{ Message string }

func (e *InvalidValueError) Error() string { return e.Message }

// InvalidValue returns an InvalidValueError.
func InvalidValue(format string, args ...any) error {
	return &InvalidValueError{Message: fmt.Sprintf(format, args...)}
}

func unmarshalEnum[T ~string](dst *T, v any, typeName string, allowed []T) error {
	s, ok := v.(string)
	if !ok {
		return InvalidValue("%s must be a string", typeName)
	}
	if !slices.Contains(allowed, T(s)) {
		return InvalidValue("%q is not a valid %s (allowed: %s)", s, typeName, joinQuoted(allowed))
	}
	*dst = T(s)
	return nil
}

func marshalEnum[T ~string](w io.Writer, v T) {
	_, _ = io.WriteString(w, strconv.Quote(string(v)))
}

func joinQuoted[T ~string](vs []T) string {
	out := ""
	for i, v := range vs {
		if i > 0 {
			out += ", "
		}
		out += strconv.Quote(string(v))
	}
	return out
}

// OrganizationType says what kind of organization it is.
type OrganizationType string

var organizationTypes = []OrganizationType{"business", "community"}

func (t *OrganizationType) UnmarshalGQL(v any) error {
	return unmarshalEnum(t, v, "OrganizationType", organizationTypes)
}
func (t OrganizationType) MarshalGQL(w io.Writer) { marshalEnum(w, t) }

// OrganizationUseCase is what an organization said it uses the platform for.
type OrganizationUseCase string

var organizationUseCases = []OrganizationUseCase{"internalDocs", "docsSite", "audienceControlledSite",
	"productDocs", "teamKnowledgeBase", "designSystem", "openSourceDocs", "notes", "other"}

func (u *OrganizationUseCase) UnmarshalGQL(v any) error {
	return unmarshalEnum(u, v, "OrganizationUseCase", organizationUseCases)
}
func (u OrganizationUseCase) MarshalGQL(w io.Writer) { marshalEnum(w, u) }

// OrganizationCommunityType qualifies a community organization.
type OrganizationCommunityType string

var organizationCommunityTypes = []OrganizationCommunityType{"nonProfit", "openSource", "education"}

func (c *OrganizationCommunityType) UnmarshalGQL(v any) error {
	return unmarshalEnum(c, v, "OrganizationCommunityType", organizationCommunityTypes)
}
func (c OrganizationCommunityType) MarshalGQL(w io.Writer) { marshalEnum(w, c) }

// SpaceEditMode says whether a space can be edited.
type SpaceEditMode string

var spaceEditModes = []SpaceEditMode{"live", "locked"}

func (m *SpaceEditMode) UnmarshalGQL(v any) error {
	return unmarshalEnum(m, v, "SpaceEditMode", spaceEditModes)
}
func (m SpaceEditMode) MarshalGQL(w io.Writer) { marshalEnum(w, m) }

// SiteAgentsContext says whether the docs agent may read a site.
type SiteAgentsContext string

var siteAgentsContexts = []SiteAgentsContext{"excluded", "included"}

func (c *SiteAgentsContext) UnmarshalGQL(v any) error {
	return unmarshalEnum(c, v, "SiteAgentsContext", siteAgentsContexts)
}
func (c SiteAgentsContext) MarshalGQL(w io.Writer) { marshalEnum(w, c) }

// MergeRulesType is the kind of a merge rules configuration.
type MergeRulesType string

const (
	MergeRulesRules   MergeRulesType = "rules"
	MergeRulesNone    MergeRulesType = "none"
	MergeRulesInherit MergeRulesType = "inherit"
)

var mergeRulesTypes = []MergeRulesType{MergeRulesRules, MergeRulesNone, MergeRulesInherit}

func (t *MergeRulesType) UnmarshalGQL(v any) error {
	return unmarshalEnum(t, v, "MergeRulesType", mergeRulesTypes)
}
func (t MergeRulesType) MarshalGQL(w io.Writer) { marshalEnum(w, t) }

// MergeRuleKind names one merge rule.
type MergeRuleKind string

// Rules that name the users they apply to, and the one written as an expression.
var (
	MergeRuleKindsWithUsers = []MergeRuleKind{"require_specific_reviewers", "require_one_of_specific_reviewers", "allow_bypass"}
	MergeRuleCustom         = MergeRuleKind("custom")
)

var mergeRuleKinds = append(append([]MergeRuleKind{}, MergeRuleKindsWithUsers...),
	"require_at_least_one_review", "require_all_reviews_approved", "require_agent_review",
	"require_up_to_date_change_request", "require_change_request_subject",
	"require_change_request_description", MergeRuleCustom)

func (k *MergeRuleKind) UnmarshalGQL(v any) error {
	return unmarshalEnum(k, v, "MergeRuleKind", mergeRuleKinds)
}
func (k MergeRuleKind) MarshalGQL(w io.Writer) { marshalEnum(w, k) }

// BillingProduct is an organization's plan.
type BillingProduct string

var billingProducts = []BillingProduct{"free_2024", "plus_2024", "pro_2024", "enterprise_2024",
	"community_2024", "free", "plus", "pro", "internal"}

func (p *BillingProduct) UnmarshalGQL(v any) error {
	return unmarshalEnum(p, v, "BillingProduct", billingProducts)
}
func (p BillingProduct) MarshalGQL(w io.Writer) { marshalEnum(w, p) }
