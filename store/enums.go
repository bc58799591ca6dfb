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

// AllMemberRoles lists the roles from most to least powerful.
var AllMemberRoles = []MemberRole{RoleAdmin, RoleCreate, RoleReview, RoleEdit, RoleComment, RoleRead}

// Rank orders roles: higher is more powerful; an unknown role (or a guest's
// empty one) ranks 0.
func (r MemberRole) Rank() int {
	if i := slices.Index(AllMemberRoles, r); i >= 0 {
		return len(AllMemberRoles) - i
	}
	return 0
}

// AtLeast reports whether r grants at least what min grants.
func (r MemberRole) AtLeast(min MemberRole) bool { return r.Rank() >= min.Rank() }

func (r *MemberRole) UnmarshalGQL(v any) error {
	return unmarshalEnum(r, v, "MemberRole", AllMemberRoles)
}
func (r MemberRole) MarshalGQL(w io.Writer) { marshalEnum(w, r) }

// DefaultLevel is the role members get on a piece of content by default: a
// role, "inherit" (from the parent), or guest (stored as NULL, a nil pointer).
type DefaultLevel string

// The default levels: inherit, then one per member role, from most to least
// powerful.
const (
	DefaultLevelInherit DefaultLevel = "inherit"
	DefaultLevelAdmin   DefaultLevel = DefaultLevel(RoleAdmin)
	DefaultLevelCreate  DefaultLevel = DefaultLevel(RoleCreate)
	DefaultLevelReview  DefaultLevel = DefaultLevel(RoleReview)
	DefaultLevelEdit    DefaultLevel = DefaultLevel(RoleEdit)
	DefaultLevelComment DefaultLevel = DefaultLevel(RoleComment)
	DefaultLevelRead    DefaultLevel = DefaultLevel(RoleRead)
)

// AllDefaultLevels lists the default levels (guest, stored as NULL, is none
// of them).
var AllDefaultLevels = []DefaultLevel{DefaultLevelInherit, DefaultLevelAdmin, DefaultLevelCreate,
	DefaultLevelReview, DefaultLevelEdit, DefaultLevelComment, DefaultLevelRead}

func (l *DefaultLevel) UnmarshalGQL(v any) error {
	return unmarshalEnum(l, v, "DefaultLevel", AllDefaultLevels)
}
func (l DefaultLevel) MarshalGQL(w io.Writer) { marshalEnum(w, l) }

// ContentVisibility is who can read a space.
type ContentVisibility string

const (
	VisibilityPublic      ContentVisibility = "public"
	VisibilityUnlisted    ContentVisibility = "unlisted"
	VisibilityShareLink   ContentVisibility = "share-link"
	VisibilityVisitorAuth ContentVisibility = "visitor-auth"
	// VisibilityInCollection: readable by whoever can read the space's collection.
	VisibilityInCollection ContentVisibility = "in-collection"
	VisibilityPrivate      ContentVisibility = "private"
)

// AllContentVisibilities lists the content visibilities.
var AllContentVisibilities = []ContentVisibility{VisibilityPublic, VisibilityUnlisted, VisibilityShareLink,
	VisibilityVisitorAuth, VisibilityInCollection, VisibilityPrivate}

func (v *ContentVisibility) UnmarshalGQL(x any) error {
	return unmarshalEnum(v, x, "ContentVisibility", AllContentVisibilities)
}
func (v ContentVisibility) MarshalGQL(w io.Writer) { marshalEnum(w, v) }

// SiteVisibility is who can read a published site.
type SiteVisibility string

const (
	SiteVisibilityPublic      SiteVisibility = "public"
	SiteVisibilityUnlisted    SiteVisibility = "unlisted"
	SiteVisibilityShareLink   SiteVisibility = "share-link"
	SiteVisibilityVisitorAuth SiteVisibility = "visitor-auth"
)

// AllSiteVisibilities lists the site visibilities.
var AllSiteVisibilities = []SiteVisibility{SiteVisibilityPublic, SiteVisibilityUnlisted,
	SiteVisibilityShareLink, SiteVisibilityVisitorAuth}

func (v *SiteVisibility) UnmarshalGQL(x any) error {
	return unmarshalEnum(v, x, "SiteVisibility", AllSiteVisibilities)
}
func (v SiteVisibility) MarshalGQL(w io.Writer) { marshalEnum(w, v) }

// VisitorAuthBackend is what signs in a site's visitors (visitor
// authentication): "custom", the site owner's own login backend, which
// signs visitors' tokens with the site's private key; or "integration", a
// visitor-authentication integration installed on the site, which this
// server does not run (updateSitePublishingAuth refuses it).
type VisitorAuthBackend string

const (
	VisitorAuthCustom      VisitorAuthBackend = "custom"
	VisitorAuthIntegration VisitorAuthBackend = "integration"
)

// AllVisitorAuthBackends lists the visitor authentication backends.
var AllVisitorAuthBackends = []VisitorAuthBackend{VisitorAuthCustom, VisitorAuthIntegration}

func (b *VisitorAuthBackend) UnmarshalGQL(v any) error {
	return unmarshalEnum(b, v, "VisitorAuthBackend", AllVisitorAuthBackends)
}
func (b VisitorAuthBackend) MarshalGQL(w io.Writer) { marshalEnum(w, b) }

// SiteRedirectDestinationKind is what a site redirect leads to: a section,
// a site space or a page of the site (GitBook's three kinds), or a URL, a
// path of the site or an absolute http(s) address (this server's own).
type SiteRedirectDestinationKind string

const (
	RedirectToSiteSection SiteRedirectDestinationKind = "site-section"
	RedirectToSiteSpace   SiteRedirectDestinationKind = "site-space"
	RedirectToSitePage    SiteRedirectDestinationKind = "site-page"
	RedirectToURL         SiteRedirectDestinationKind = "url"
)

// AllSiteRedirectDestinationKinds lists the kinds of a redirect's destination.
var AllSiteRedirectDestinationKinds = []SiteRedirectDestinationKind{RedirectToSiteSection, RedirectToSiteSpace,
	RedirectToSitePage, RedirectToURL}

func (k *SiteRedirectDestinationKind) UnmarshalGQL(v any) error {
	return unmarshalEnum(k, v, "SiteRedirectDestinationKind", AllSiteRedirectDestinationKinds)
}
func (k SiteRedirectDestinationKind) MarshalGQL(w io.Writer) { marshalEnum(w, k) }

// SiteType is a site's plan.
type SiteType string

const (
	SiteTypeBasic         SiteType = "basic"
	SiteTypePremium       SiteType = "premium"
	SiteTypeUltimate      SiteType = "ultimate"
	SiteTypeSponsored     SiteType = "sponsored"
	SiteTypeLegacyBasic   SiteType = "legacy-basic"
	SiteTypeLegacyPremium SiteType = "legacy-premium"
)

// AllSiteTypes lists the site plans.
var AllSiteTypes = []SiteType{SiteTypeBasic, SiteTypePremium, SiteTypeUltimate, SiteTypeSponsored,
	SiteTypeLegacyBasic, SiteTypeLegacyPremium}

func (t *SiteType) UnmarshalGQL(v any) error { return unmarshalEnum(t, v, "SiteType", AllSiteTypes) }
func (t SiteType) MarshalGQL(w io.Writer)    { marshalEnum(w, t) }

// Language is a content language.
type Language string

// The content languages, by their codes.
const (
	LanguageEnglish             Language = "en"
	LanguageFrench              Language = "fr"
	LanguageGerman              Language = "de"
	LanguageSpanish             Language = "es"
	LanguageItalian             Language = "it"
	LanguagePortuguese          Language = "pt"
	LanguageBrazilianPortuguese Language = "pt-br"
	LanguageRussian             Language = "ru"
	LanguageJapanese            Language = "ja"
	LanguageChinese             Language = "zh"
	LanguageCantonese           Language = "yue"
	LanguageKorean              Language = "ko"
	LanguageArabic              Language = "ar"
	LanguageHindi               Language = "hi"
	LanguageDutch               Language = "nl"
	LanguagePolish              Language = "pl"
	LanguageTurkish             Language = "tr"
	LanguageSwedish             Language = "sv"
	LanguageNorwegian           Language = "no"
	LanguageDanish              Language = "da"
	LanguageFinnish             Language = "fi"
	LanguageGreek               Language = "el"
	LanguageCzech               Language = "cs"
	LanguageHungarian           Language = "hu"
	LanguageRomanian            Language = "ro"
	LanguageThai                Language = "th"
	LanguageVietnamese          Language = "vi"
	LanguageIndonesian          Language = "id"
	LanguageMalay               Language = "ms"
	LanguageHebrew              Language = "he"
	LanguageUkrainian           Language = "uk"
	LanguageSlovak              Language = "sk"
	LanguageBulgarian           Language = "bg"
	LanguageCroatian            Language = "hr"
	LanguageLithuanian          Language = "lt"
	LanguageLatvian             Language = "lv"
	LanguageEstonian            Language = "et"
	LanguageSlovenian           Language = "sl"
)

// AllLanguages lists the content languages.
var AllLanguages = []Language{LanguageEnglish, LanguageFrench, LanguageGerman, LanguageSpanish, LanguageItalian, LanguagePortuguese, LanguageBrazilianPortuguese, LanguageRussian, LanguageJapanese, LanguageChinese, LanguageCantonese, LanguageKorean, LanguageArabic, LanguageHindi, LanguageDutch, LanguagePolish, LanguageTurkish, LanguageSwedish, LanguageNorwegian, LanguageDanish, LanguageFinnish, LanguageGreek, LanguageCzech, LanguageHungarian, LanguageRomanian, LanguageThai, LanguageVietnamese, LanguageIndonesian, LanguageMalay, LanguageHebrew, LanguageUkrainian, LanguageSlovak, LanguageBulgarian, LanguageCroatian, LanguageLithuanian, LanguageLatvian, LanguageEstonian, LanguageSlovenian}

func (l *Language) UnmarshalGQL(v any) error { return unmarshalEnum(l, v, "Language", AllLanguages) }
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

const (
	OrganizationBusiness  OrganizationType = "business"
	OrganizationCommunity OrganizationType = "community"
)

// AllOrganizationTypes lists the kinds of organization.
var AllOrganizationTypes = []OrganizationType{OrganizationBusiness, OrganizationCommunity}

func (t *OrganizationType) UnmarshalGQL(v any) error {
	return unmarshalEnum(t, v, "OrganizationType", AllOrganizationTypes)
}
func (t OrganizationType) MarshalGQL(w io.Writer) { marshalEnum(w, t) }

// OrganizationUseCase is what an organization said it uses the platform for.
type OrganizationUseCase string

const (
	UseCaseInternalDocs           OrganizationUseCase = "internalDocs"
	UseCaseDocsSite               OrganizationUseCase = "docsSite"
	UseCaseAudienceControlledSite OrganizationUseCase = "audienceControlledSite"
	UseCaseProductDocs            OrganizationUseCase = "productDocs"
	UseCaseTeamKnowledgeBase      OrganizationUseCase = "teamKnowledgeBase"
	UseCaseDesignSystem           OrganizationUseCase = "designSystem"
	UseCaseOpenSourceDocs         OrganizationUseCase = "openSourceDocs"
	UseCaseNotes                  OrganizationUseCase = "notes"
	UseCaseOther                  OrganizationUseCase = "other"
)

// AllOrganizationUseCases lists the use cases an organization may give.
var AllOrganizationUseCases = []OrganizationUseCase{UseCaseInternalDocs, UseCaseDocsSite,
	UseCaseAudienceControlledSite, UseCaseProductDocs, UseCaseTeamKnowledgeBase, UseCaseDesignSystem,
	UseCaseOpenSourceDocs, UseCaseNotes, UseCaseOther}

func (u *OrganizationUseCase) UnmarshalGQL(v any) error {
	return unmarshalEnum(u, v, "OrganizationUseCase", AllOrganizationUseCases)
}
func (u OrganizationUseCase) MarshalGQL(w io.Writer) { marshalEnum(w, u) }

// OrganizationCommunityType qualifies a community organization.
type OrganizationCommunityType string

const (
	CommunityNonProfit  OrganizationCommunityType = "nonProfit"
	CommunityOpenSource OrganizationCommunityType = "openSource"
	CommunityEducation  OrganizationCommunityType = "education"
)

// AllOrganizationCommunityTypes lists the kinds of community organization.
var AllOrganizationCommunityTypes = []OrganizationCommunityType{CommunityNonProfit, CommunityOpenSource, CommunityEducation}

func (c *OrganizationCommunityType) UnmarshalGQL(v any) error {
	return unmarshalEnum(c, v, "OrganizationCommunityType", AllOrganizationCommunityTypes)
}
func (c OrganizationCommunityType) MarshalGQL(w io.Writer) { marshalEnum(w, c) }

// SpaceEditMode says whether a space can be edited.
type SpaceEditMode string

const (
	// EditModeLive: the space's content can be edited.
	EditModeLive SpaceEditMode = "live"
	// EditModeLocked: the space's content cannot change: no edit, merge or
	// git import writes it.
	EditModeLocked SpaceEditMode = "locked"
)

// AllSpaceEditModes lists the edit modes.
var AllSpaceEditModes = []SpaceEditMode{EditModeLive, EditModeLocked}

func (m *SpaceEditMode) UnmarshalGQL(v any) error {
	return unmarshalEnum(m, v, "SpaceEditMode", AllSpaceEditModes)
}
func (m SpaceEditMode) MarshalGQL(w io.Writer) { marshalEnum(w, m) }

// SiteAgentsContext says whether the docs agent may read a site.
type SiteAgentsContext string

const (
	AgentsContextExcluded SiteAgentsContext = "excluded"
	AgentsContextIncluded SiteAgentsContext = "included"
)

// AllSiteAgentsContexts lists the values of SiteAgentsContext.
var AllSiteAgentsContexts = []SiteAgentsContext{AgentsContextExcluded, AgentsContextIncluded}

func (c *SiteAgentsContext) UnmarshalGQL(v any) error {
	return unmarshalEnum(c, v, "SiteAgentsContext", AllSiteAgentsContexts)
}
func (c SiteAgentsContext) MarshalGQL(w io.Writer) { marshalEnum(w, c) }

// MergeRulesType is the kind of a merge rules configuration.
type MergeRulesType string

const (
	MergeRulesRules   MergeRulesType = "rules"
	MergeRulesNone    MergeRulesType = "none"
	MergeRulesInherit MergeRulesType = "inherit"
)

// AllMergeRulesTypes lists the kinds of merge rules configuration.
var AllMergeRulesTypes = []MergeRulesType{MergeRulesRules, MergeRulesNone, MergeRulesInherit}

func (t *MergeRulesType) UnmarshalGQL(v any) error {
	return unmarshalEnum(t, v, "MergeRulesType", AllMergeRulesTypes)
}
func (t MergeRulesType) MarshalGQL(w io.Writer) { marshalEnum(w, t) }

// MergeRuleKind names one merge rule.
type MergeRuleKind string

const (
	// MergeRuleRequireSpecificReviewers: every one of the rule's users approved.
	MergeRuleRequireSpecificReviewers MergeRuleKind = "require_specific_reviewers"
	// MergeRuleRequireOneOfSpecificReviewers: one of the rule's users approved.
	MergeRuleRequireOneOfSpecificReviewers MergeRuleKind = "require_one_of_specific_reviewers"
	// MergeRuleAllowBypass: the rule's users may merge whatever the other rules say.
	MergeRuleAllowBypass MergeRuleKind = "allow_bypass"
	// MergeRuleRequireAtLeastOneReview: the current revision has a review.
	MergeRuleRequireAtLeastOneReview MergeRuleKind = "require_at_least_one_review"
	// MergeRuleRequireAllReviewsApproved: no current review requests changes.
	MergeRuleRequireAllReviewsApproved MergeRuleKind = "require_all_reviews_approved"
	// MergeRuleRequireAgentReview: a review agent approved (this server has
	// none, so the rule is never satisfied).
	MergeRuleRequireAgentReview MergeRuleKind = "require_agent_review"
	// MergeRuleRequireUpToDateChangeRequest: the change request is based on
	// the space's current content.
	MergeRuleRequireUpToDateChangeRequest MergeRuleKind = "require_up_to_date_change_request"
	// MergeRuleRequireChangeRequestSubject: the change request has a subject.
	MergeRuleRequireChangeRequestSubject MergeRuleKind = "require_change_request_subject"
	// MergeRuleRequireChangeRequestDescription: it has a description.
	MergeRuleRequireChangeRequestDescription MergeRuleKind = "require_change_request_description"
	// MergeRuleCustom is the rule written as an expression.
	MergeRuleCustom MergeRuleKind = "custom"
)

// MergeRuleKindsWithUsers are the rules that name the users they apply to.
var MergeRuleKindsWithUsers = []MergeRuleKind{MergeRuleRequireSpecificReviewers,
	MergeRuleRequireOneOfSpecificReviewers, MergeRuleAllowBypass}

// AllMergeRuleKinds lists the merge rules.
var AllMergeRuleKinds = []MergeRuleKind{MergeRuleRequireSpecificReviewers,
	MergeRuleRequireOneOfSpecificReviewers, MergeRuleAllowBypass, MergeRuleRequireAtLeastOneReview,
	MergeRuleRequireAllReviewsApproved, MergeRuleRequireAgentReview, MergeRuleRequireUpToDateChangeRequest,
	MergeRuleRequireChangeRequestSubject, MergeRuleRequireChangeRequestDescription, MergeRuleCustom}

func (k *MergeRuleKind) UnmarshalGQL(v any) error {
	return unmarshalEnum(k, v, "MergeRuleKind", AllMergeRuleKinds)
}
func (k MergeRuleKind) MarshalGQL(w io.Writer) { marshalEnum(w, k) }

// BillingProduct is an organization's plan.
type BillingProduct string

const (
	BillingFree2024       BillingProduct = "free_2024"
	BillingPlus2024       BillingProduct = "plus_2024"
	BillingPro2024        BillingProduct = "pro_2024"
	BillingEnterprise2024 BillingProduct = "enterprise_2024"
	BillingCommunity2024  BillingProduct = "community_2024"
	BillingFree           BillingProduct = "free"
	BillingPlus           BillingProduct = "plus"
	BillingPro            BillingProduct = "pro"
	BillingInternal       BillingProduct = "internal"
)

// AllBillingProducts lists the plans.
var AllBillingProducts = []BillingProduct{BillingFree2024, BillingPlus2024, BillingPro2024,
	BillingEnterprise2024, BillingCommunity2024, BillingFree, BillingPlus, BillingPro, BillingInternal}

func (p *BillingProduct) UnmarshalGQL(v any) error {
	return unmarshalEnum(p, v, "BillingProduct", AllBillingProducts)
}
func (p BillingProduct) MarshalGQL(w io.Writer) { marshalEnum(w, p) }
