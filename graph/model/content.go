package model

import (
	"time"

	"github.com/docsapi/docsapi/store"
)

// PageNode is a page of a revision as GraphQL serves it: the stored row, the
// indexed tree of its revision, and the body format it was asked in (nil:
// any).
type PageNode struct {
	*store.RevisionPage
	Revision *store.Revision
	Tree     *store.PageTree
	Format   *DocumentFormat
}

// Type is the page's type as the enum.
func (p *PageNode) Type() PageType { return PageType(p.RevisionPage.Type) }

// Kind is the page's type under its former name, which the reference keeps
// (deprecated): `sheet` for a document, `group` for a group.
func (p *PageNode) Kind() string {
	if p.RevisionPage.Type == store.PageDocument {
		return "sheet"
	}
	return p.RevisionPage.Type
}

// NoIndex: the page is left out of its site's search; NoRobotsIndex: out
// of search engines.
func (p *PageNode) NoIndex() bool       { return p.RevisionPage.NoIndex }
func (p *PageNode) NoRobotsIndex() bool { return p.RevisionPage.NoRobotsIndex }

// Layout is the default layout: every part shown, default width.
func (p *PageNode) Layout() *PageLayout {
	return &PageLayout{Width: "default", Cover: false, CoverSize: "hero", Title: true, Description: true,
		TableOfContents: true, Outline: true, Pagination: true, Metadata: true}
}

// Wants tells whether the page was asked for with format f (or with none).
func (p *PageNode) Wants(f DocumentFormat) bool { return p.Format == nil || *p.Format == f }

// CommentNode is a comment as GraphQL serves it.
type CommentNode struct {
	*store.Comment
}

// ReplyNode is a reply with the comment it answers.
type ReplyNode struct {
	*store.CommentReply
	Comment *store.Comment
}

// OrganizationSummary is an organization's public card (see the schema):
// only the columns anyone may know, copied out of the row, so that nothing
// else of it can reach a response through this type.
type OrganizationSummary struct {
	ID        string
	Title     string
	CreatedAt time.Time
	Type      store.OrganizationType
	Plan      store.BillingProduct
	Logo      *string
}

// PublicCard is o's public card.
func PublicCard(o *store.Organization) *OrganizationSummary {
	return &OrganizationSummary{ID: o.ID, Title: o.Title, CreatedAt: o.CreatedAt, Type: o.Type,
		Plan: o.Plan, Logo: o.Logo}
}

func (*OrganizationSummary) Object() string         { return "organization" }
func (*OrganizationSummary) EmailDomains() []string { return []string{} }
func (*OrganizationSummary) InviteLinks() bool      { return false }

// MergeRules is an organization's default, `none`: `inherit` is a space's
// value, which an organization never has.
func (*OrganizationSummary) MergeRules() *store.MergeRules {
	return &store.MergeRules{Type: store.MergeRulesNone}
}
func (*OrganizationSummary) Trial() *OrganizationTrial {
	return &OrganizationTrial{Status: BillingTrialStatusNotapplicable}
}
