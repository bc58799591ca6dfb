package graph

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/internal/document"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Reviews of change requests. The review role (or higher) on the space
// reviews, authors included (GitBook lets authors review their own change
// requests); editors ask members for reviews and withdraw the requests. A
// review is made at the change request's current revision and never changes:
// it becomes outdated when the change request gets a new revision, or when
// its reviewer reviews again or is asked again. Merge rules weigh the reviews
// that are not outdated (checkMergeRules).

// maxRequestedReviewers bounds one request for reviews.
const maxRequestedReviewers = 100

func (r *changeRequestResolver) Review(ctx context.Context, cr *store.ChangeRequest, id string) (*store.Review, error) {
	rv, err := store.GetReview(ctx, r.DB, cr.OrganizationID, cr.ID, id)
	return rv, orNotFound(err, "review")
}

func (r *changeRequestResolver) ReviewList(ctx context.Context, cr *store.ChangeRequest, page *string, limit *int, _ *int, _ *string, outdated *bool) (*model.ChangeRequestReviewList, error) {
	return paginate(page, limit, listQuery[*store.Review]{
		read: func(p store.Page) ([]*store.Review, error) {
			return store.ListReviews(ctx, r.DB, cr.OrganizationID, cr.ID, outdated, p)
		},
		key: func(rv *store.Review) store.Keyset { return store.Keyset{Pos: int(rv.Seq), ID: rv.ID} },
	})
}

func (r *changeRequestResolver) RequestedReviewerList(ctx context.Context, cr *store.ChangeRequest, page *string, limit *int, _ *int, _ *string) (*model.ChangeRequestRequestedReviewerList, error) {
	return paginate(page, limit, listQuery[*store.RequestedReviewer]{
		read: func(p store.Page) ([]*store.RequestedReviewer, error) {
			return store.ListRequestedReviewers(ctx, r.DB, cr.OrganizationID, cr.ID, p)
		},
		key: func(q *store.RequestedReviewer) store.Keyset { return store.Keyset{Pos: int(q.Seq), ID: q.UserID} },
	})
}

// reviewableChangeRequest locks the change request of t for a review or a
// request for one: merged and archived change requests take neither.
func (r *Resolver) reviewableChangeRequest(ctx context.Context, tx bun.Tx, t thread) (*store.ChangeRequest, error) {
	cr, err := store.LockChangeRequest(ctx, tx, t.space, t.cr.ID)
	if err != nil {
		return nil, err
	}
	if cr.Status == store.CRMerged || cr.Status == store.CRArchived {
		return nil, Conflict("change request #%d is %s: it is not reviewed any more", cr.Number, cr.Status)
	}
	return cr, nil
}

func (r *mutationResolver) SubmitChangeRequestReview(ctx context.Context, spaceID, crRef string, input model.SubmitChangeRequestReviewInput) (*store.Review, error) {
	// SECURITY: the review role or higher on the space reviews.
	t, _, err := r.threadOf(ctx, spaceID, &crRef, store.RoleReview)
	if err != nil {
		return nil, err
	}
	commentBody, commentDocument, err := reviewComment(input.Comment.Value())
	if err != nil {
		return nil, err
	}
	caller, _ := CallerFrom(ctx)
	now := r.now()
	rv := &store.Review{ID: store.NewID(), ReviewerID: caller.User.ID, Status: input.Status, CreatedAt: now, UpdatedAt: now, SpaceID: t.space.ID}
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		cr, err := r.reviewableChangeRequest(ctx, tx, t)
		if err != nil {
			return err
		}
		rv.ChangeRequestID, rv.RevisionID = cr.ID, cr.Revision
		if commentBody != "" {
			c := &store.Comment{ID: store.NewID(), SpaceID: t.space.ID, ChangeRequestID: &cr.ID, RevisionID: cr.Revision,
				Body: commentBody, BodyDocument: commentDocument, PostedBy: &caller.User.ID, PostedAt: now, Status: store.CommentOpen}
			if err := store.InsertRow(ctx, tx, c); err != nil {
				return err
			}
			rv.CommentID = &c.ID
		}
		return store.InsertReview(ctx, tx, rv)
	})
	return rv, err
}

func (r *mutationResolver) RequestReviewers(ctx context.Context, spaceID, crRef string, input model.RequestReviewersInput) (*model.RequestReviewersResult, error) {
	// SECURITY: editors ask for reviews, as they open and edit change requests.
	t, _, err := r.threadOf(ctx, spaceID, &crRef, store.RoleEdit)
	if err != nil {
		return nil, err
	}
	users := slices.Compact(slices.Sorted(slices.Values(input.Users)))
	if len(users) == 0 || len(users) > maxRequestedReviewers {
		return nil, Invalid("users", "must name 1 to %d users", maxRequestedReviewers)
	}
	if err := r.checkReviewers(ctx, t.space, users); err != nil {
		return nil, err
	}
	p := &patch{}
	var subject string
	setRequired(p, "subject", "subject", input.Subject, &subject, length("subject", 0, maxChangeRequestSubject))
	if p.err != nil {
		return nil, p.err
	}
	desc, descSet := input.Description.ValueOK()
	description, err := checkDocument("description", desc)
	if err != nil {
		return nil, err
	}
	caller, _ := CallerFrom(ctx)
	var out []*store.RequestedReviewer
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		cr, err := r.reviewableChangeRequest(ctx, tx, t)
		if err != nil {
			return err
		}
		now := r.now()
		var columns []string
		if p.changed() {
			cr.Subject, columns = subject, append(columns, "subject")
		}
		if descSet {
			cr.Description, columns = description, append(columns, "description")
		}
		if len(columns) > 0 {
			cr.UpdatedAt = now
			if err := store.UpdateChangeRequest(ctx, tx, cr, columns...); err != nil {
				return err
			}
		}
		out, err = store.RequestReviewers(ctx, tx, cr, users, caller.User.ID, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &model.RequestReviewersResult{Users: out}, nil
}

// checkReviewers checks that every user may review space s: a member of its
// organization with the review role or higher on it. Anyone else is a 400
// naming them (not a 404: the caller named them, and learns no more than
// that they cannot review).
func (r *Resolver) checkReviewers(ctx context.Context, s *store.Space, users []string) error {
	a, err := r.access(ctx, s.OrganizationID)
	if err != nil {
		return err
	}
	node := &store.AccessNode{ID: s.ID, ParentID: s.ParentID, DefaultLevel: s.DefaultLevel, Visibility: s.Visibility}
	for _, u := range users {
		m, err := store.GetMember(ctx, r.DB, s.OrganizationID, u)
		if errors.Is(err, store.ErrNotFound) {
			return Invalid("users", "%s cannot review this space: not a member of its organization", u)
		} else if err != nil {
			return err
		}
		if !a.spaceRole(memberGrantee(m), node).AtLeast(store.RoleReview) {
			return Invalid("users", "%s cannot review this space: it needs the review role or higher", u)
		}
	}
	return nil
}

func (r *mutationResolver) RemoveRequestedReviewer(ctx context.Context, spaceID, crRef, userID string) (bool, error) {
	// SECURITY: editors withdraw requests for reviews.
	t, _, err := r.threadOf(ctx, spaceID, &crRef, store.RoleEdit)
	if err != nil {
		return false, err
	}
	return store.RemoveRequestedReviewer(ctx, r.DB, t.cr.OrganizationID, t.cr.ID, userID)
}

type changeRequestReviewResolver struct{ *Resolver }

var _ generated.ChangeRequestReviewResolver = (*changeRequestReviewResolver)(nil)

func (r *Resolver) ChangeRequestReview() generated.ChangeRequestReviewResolver {
	return &changeRequestReviewResolver{r}
}

func (r *changeRequestReviewResolver) Reviewer(ctx context.Context, rv *store.Review) (*store.User, error) {
	return r.loaders(ctx).User.Load(ctx, rv.ReviewerID)()
}

func (r *changeRequestReviewResolver) RequestedBy(ctx context.Context, rv *store.Review) (*store.User, error) {
	return r.userOrNil(ctx, rv.RequestedBy)
}

func (r *changeRequestReviewResolver) Comment(ctx context.Context, rv *store.Review) (*model.CommentNode, error) {
	if rv.CommentID == nil {
		return nil, nil
	}
	c, err := store.GetComment(ctx, r.DB, rv.OrganizationID, rv.SpaceID, &rv.ChangeRequestID, *rv.CommentID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return &model.CommentNode{Comment: c}, err
}

func (r *changeRequestReviewResolver) Urls(_ context.Context, rv *store.Review) (*model.ChangeRequestReviewURLs, error) {
	return &model.ChangeRequestReviewURLs{Location: r.URLs.API("/v1/spaces/" + pathEscape(rv.SpaceID) +
		"/change-requests/" + pathEscape(rv.ChangeRequestID) + "/reviews/" + pathEscape(rv.ID))}, nil
}

type changeRequestRequestedReviewerResolver struct{ *Resolver }

var _ generated.ChangeRequestRequestedReviewerResolver = (*changeRequestRequestedReviewerResolver)(nil)

func (r *Resolver) ChangeRequestRequestedReviewer() generated.ChangeRequestRequestedReviewerResolver {
	return &changeRequestRequestedReviewerResolver{r}
}

func (r *changeRequestRequestedReviewerResolver) Kind(context.Context, *store.RequestedReviewer) (string, error) {
	return "user", nil
}

func (r *changeRequestRequestedReviewerResolver) User(ctx context.Context, q *store.RequestedReviewer) (*store.User, error) {
	return r.loaders(ctx).User.Load(ctx, q.UserID)()
}

func (r *changeRequestRequestedReviewerResolver) RequestedBy(ctx context.Context, q *store.RequestedReviewer) (*store.User, error) {
	return r.userOrNil(ctx, q.RequestedBy)
}

// reviewRule checks a merge rule about reviews against the change request's
// current reviews (those not outdated): nil when it passes, else a 409
// saying why.
func reviewRule(rule store.MergeRule, current []*store.Review) error {
	approvedBy := func(user string) bool {
		return slices.ContainsFunc(current, func(rv *store.Review) bool {
			return rv.ReviewerID == user && rv.Status == store.ReviewApproved
		})
	}
	switch rule.Rule {
	case store.MergeRuleRequireAtLeastOneReview:
		if len(current) == 0 {
			return Conflict("merge rule require_at_least_one_review: the change request has no review of its current revision")
		}
	case store.MergeRuleRequireAllReviewsApproved:
		var against []string
		for _, rv := range current {
			if rv.Status != store.ReviewApproved {
				against = append(against, rv.ReviewerID)
			}
		}
		if len(against) > 0 {
			return Conflict("merge rule require_all_reviews_approved: changes are requested by %s", strings.Join(against, ", "))
		}
	case store.MergeRuleRequireSpecificReviewers:
		var missing []string
		for _, u := range rule.Users {
			if !approvedBy(u) {
				missing = append(missing, u)
			}
		}
		if len(missing) > 0 {
			return Conflict("merge rule require_specific_reviewers: the current revision is not approved by %s", strings.Join(missing, ", "))
		}
	case store.MergeRuleRequireOneOfSpecificReviewers:
		if !slices.ContainsFunc(rule.Users, approvedBy) {
			return Conflict("merge rule require_one_of_specific_reviewers: the current revision is approved by none of %s", strings.Join(rule.Users, ", "))
		}
	}
	return nil
}

// reviewComment reads the comment left with a review: a JSON document
// itself, or one of GitBook's Document forms, {"markdown": "..."} or
// {"document": {...}} (kept as given, as a comment's body is), or the empty
// {}. One with no text (what an empty editor sends) is no comment: "".
func reviewComment(v map[string]any) (markdown string, doc json.RawMessage, err error) {
	switch {
	case v == nil || len(v) == 0:
		return "", nil, nil
	case v["object"] != nil:
		if _, err := checkDocument("comment", v); err != nil {
			return "", nil, err
		}
		markdown = strings.TrimSpace(document.Text(v))
	case v["markdown"] != nil || v["document"] != nil:
		md, isText := v["markdown"].(string)
		d, isDoc := v["document"].(map[string]any)
		switch {
		case len(v) != 1:
			return "", nil, Invalid("comment", `is {"markdown": "..."} or {"document": {...}}, not both`)
		case isText:
			markdown = strings.TrimSpace(md)
		case isDoc:
			if doc, err = checkDocument("comment.document", d); err != nil {
				return "", nil, err
			}
			if markdown = strings.TrimSpace(document.Text(d)); markdown == "" {
				doc = nil
			}
		default:
			return "", nil, Invalid("comment", `is {"markdown": "..."} or {"document": {...}}`)
		}
	default:
		return "", nil, Invalid("comment", `is a document, {"markdown": "..."} or {"document": {...}}`)
	}
	if err := checkLength("comment", markdown, 0, maxCommentBody); err != nil {
		return "", nil, err
	}
	return markdown, doc, nil
}
