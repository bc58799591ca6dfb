package graph

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/internal/merge"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/store"
)

// Change requests: branches of a space's content. Readers of the space see
// them; editors open, edit, update and merge them. Numbers are assigned
// under the space's row lock (no gaps, no duplicates); merge and update run
// under the same lock, so two merges land one after the other, the second
// merging onto the first's result or reporting a conflict.

const maxChangeRequestSubject = 100

func (r *spaceResolver) ChangeRequest(ctx context.Context, s *store.Space, id string) (*store.ChangeRequest, error) {
	// SECURITY: a visitor reads what a space publishes, not its proposals.
	if VisitorFrom(ctx) != nil {
		return nil, NotFound("change request")
	}
	cr, err := store.GetChangeRequest(ctx, r.DB, s, id)
	return cr, orNotFound(err, "change request")
}

// crFilter reads the filters of a change request list.
func crFilter(status *model.ChangeRequestStatus, creator, contributor, requestedReviewer, cluster *string) store.ChangeRequestFilter {
	f := store.ChangeRequestFilter{Status: store.CROpen, Creator: creator, Contributor: contributor,
		RequestedReviewer: requestedReviewer, Cluster: cluster}
	if status != nil {
		f.Status = string(*status)
	}
	return f
}

func (r *spaceResolver) ChangeRequestList(ctx context.Context, s *store.Space, page *string, limit *int, _ *int, _ *string, status *model.ChangeRequestStatus, creator, contributor, requestedReviewer, cluster *string) (*model.ChangeRequestList, error) {
	if VisitorFrom(ctx) != nil {
		return notForVisitors[*store.ChangeRequest](), nil
	}
	return r.changeRequestList(ctx, s.OrganizationID, []string{s.ID}, page, limit, crFilter(status, creator, contributor, requestedReviewer, cluster))
}

func (r *organizationResolver) ChangeRequests(ctx context.Context, o *store.Organization, page *string, limit *int, _ *int, _ *string, status *model.ChangeRequestStatus, creator, contributor, requestedReviewer, cluster *string) (*model.ChangeRequestList, error) {
	// SECURITY: the change requests of the spaces the caller can read.
	g, err := callerGrantee(ctx, o.ID)
	if err != nil {
		return nil, err
	}
	if !g.member {
		return nil, NotFound("organization")
	}
	a, nodes, err := r.orgSpaces(ctx, o.ID)
	if err != nil {
		return nil, err
	}
	var spaces []string
	for _, s := range nodes {
		if s.Live && a.spaceRole(g, s) != "" {
			spaces = append(spaces, s.ID)
		}
	}
	return r.changeRequestList(ctx, o.ID, spaces, page, limit, crFilter(status, creator, contributor, requestedReviewer, cluster))
}

func (r *Resolver) changeRequestList(ctx context.Context, orgID string, spaces []string, page *string, limit *int, f store.ChangeRequestFilter) (*model.ChangeRequestList, error) {
	return paginate(page, limit, listQuery[*store.ChangeRequest]{
		read: func(p store.Page) ([]*store.ChangeRequest, error) {
			return store.ListChangeRequests(ctx, r.DB, orgID, spaces, f, p)
		},
		key: func(cr *store.ChangeRequest) store.Keyset { return store.Keyset{Time: cr.CreatedAt, ID: cr.ID} },
	})
}

type changeRequestResolver struct{ *Resolver }

var _ generated.ChangeRequestResolver = (*changeRequestResolver)(nil)

func (r *Resolver) ChangeRequest() generated.ChangeRequestResolver { return &changeRequestResolver{r} }

func (r *changeRequestResolver) Status(_ context.Context, cr *store.ChangeRequest) (model.ChangeRequestStatus, error) {
	return model.ChangeRequestStatus(cr.Status), nil
}

func (r *changeRequestResolver) Description(_ context.Context, cr *store.ChangeRequest) (map[string]any, error) {
	if len(cr.Description) == 0 || string(cr.Description) == "null" {
		return nil, nil
	}
	var doc map[string]any
	return doc, json.Unmarshal(cr.Description, &doc)
}

func (r *changeRequestResolver) CreatedBy(ctx context.Context, cr *store.ChangeRequest) (*store.User, error) {
	if cr.CreatedBy == nil {
		return nil, nil
	}
	return r.loaders(ctx).User.Load(ctx, *cr.CreatedBy)()
}

func (r *changeRequestResolver) Space(_ context.Context, cr *store.ChangeRequest) (string, error) {
	return cr.SpaceID, nil
}

// Comments is the number of open comments on the change request.
func (r *changeRequestResolver) Comments(ctx context.Context, cr *store.ChangeRequest) (int, error) {
	return r.loaders(ctx).ChangeRequestOpenComments.Load(ctx, orgKey(cr.OrganizationID, cr.ID))()
}

func (r *changeRequestResolver) Outdated(ctx context.Context, cr *store.ChangeRequest) (bool, error) {
	if cr.Status == store.CRMerged {
		return false, nil
	}
	s, err := store.GetSpace(ctx, r.DB, cr.SpaceID)
	if err != nil {
		return false, err
	}
	return s.RevisionID != cr.Base(), nil
}

func (r *changeRequestResolver) ConversationsIssuesCluster(_ context.Context, cr *store.ChangeRequest) (*string, error) {
	return cr.ClusterID, nil
}

func (r *changeRequestResolver) Urls(_ context.Context, cr *store.ChangeRequest) (*model.ChangeRequestURLs, error) {
	space := pathEscape(cr.SpaceID)
	return &model.ChangeRequestURLs{
		App:      r.URLs.App("/s/" + space + "/~/changes/" + strconv.Itoa(cr.Number)),
		Location: r.URLs.API("/v1/spaces/" + space + "/change-requests/" + pathEscape(cr.ID)),
	}, nil
}

// Content is the change request's revision; computed reads the same (see
// spaceResolver.Content).
func (r *changeRequestResolver) Content(ctx context.Context, cr *store.ChangeRequest, _ bool) (*store.Revision, error) {
	return store.GetRevision(ctx, r.DB, cr.OrganizationID, cr.SpaceID, cr.Revision)
}

// editableSpace reads a space the caller may edit.
func (r *Resolver) editableSpace(ctx context.Context, spaceID string) (*store.Space, error) {
	s, err := r.space(ctx, spaceID)
	if err != nil {
		return nil, err
	}
	// SECURITY: change requests are opened, edited and merged by editors.
	return s, r.requireSpaceRole(ctx, s, store.RoleEdit)
}

// lockedChangeRequest reads change request ref (id or number) of space s
// for update.
func (r *Resolver) lockedChangeRequest(ctx context.Context, tx bun.Tx, s *store.Space, ref string) (*store.ChangeRequest, error) {
	cr, err := store.GetChangeRequest(ctx, tx, s, ref)
	if err != nil {
		return nil, orNotFound(err, "change request")
	}
	return store.LockChangeRequest(ctx, tx, s, cr.ID)
}

// checkDocument checks a JSON document given as a change request's description.
func checkDocument(field string, v map[string]any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	if v["object"] != "document" {
		return nil, Invalid(field, `must be a document: {"object": "document", "nodes": [...]}`)
	}
	raw, err := json.Marshal(v)
	if err != nil || len(raw) > 1<<20 {
		return nil, Invalid(field, "must be a JSON document of at most 1 MB")
	}
	return raw, nil
}

func (r *mutationResolver) CreateChangeRequest(ctx context.Context, spaceID string, input model.CreateChangeRequestInput) (*store.ChangeRequest, error) {
	space, err := r.editableSpace(ctx, spaceID)
	if err != nil {
		return nil, err
	}
	cluster, _ := input.ConversationsIssuesCluster.ValueOK()
	if cluster != nil {
		if err := r.checkChangeRequestCluster(ctx, space.OrganizationID, *cluster); err != nil {
			return nil, err
		}
	}
	caller, _ := CallerFrom(ctx)
	subject := ""
	if v, _ := input.Subject.ValueOK(); v != nil {
		subject = strings.TrimSpace(*v)
	}
	if err := checkLength("subject", subject, 0, maxChangeRequestSubject); err != nil {
		return nil, err
	}
	desc, _ := input.Description.ValueOK()
	description, err := checkDocument("description", desc)
	if err != nil {
		return nil, err
	}
	var cr *store.ChangeRequest
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		s, err := store.LockSpace(ctx, tx, space.OrganizationID, spaceID)
		if err != nil {
			return err
		}
		if s.DeletedAt != nil {
			return NotFound("space")
		}
		if cluster != nil && s.OrganizationID != space.OrganizationID {
			// Transferred since the cluster was checked: it stayed behind.
			return Invalid("conversationsIssuesCluster", "no such issues cluster in this organization")
		}
		number, err := store.NextChangeRequestNumber(ctx, tx, s.OrganizationID, s.ID)
		if err != nil {
			return err
		}
		now := r.now()
		cr = &store.ChangeRequest{ID: store.NewID(), OrganizationID: s.OrganizationID, SpaceID: s.ID, Number: number, Status: store.CROpen, Subject: subject,
			Description: description, CreatedBy: &caller.User.ID, CreatedAt: now, UpdatedAt: now,
			RevisionInitial: s.RevisionID, Revision: s.RevisionID, ClusterID: cluster}
		if err := store.CreateChangeRequest(ctx, tx, cr); err != nil {
			return err
		}
		return r.recordLive(ctx, tx, store.LiveEvent{Type: store.LiveChangeRequestOpened, OrganizationID: s.OrganizationID,
			SpaceID: &s.ID, ChangeRequestID: &cr.ID, RevisionID: &cr.Revision})
	})
	return cr, err
}

func (r *mutationResolver) UpdateChangeRequest(ctx context.Context, spaceID, ref string, input model.UpdateChangeRequestInput) (*store.ChangeRequest, error) {
	s, err := r.editableSpace(ctx, spaceID)
	if err != nil {
		return nil, err
	}
	var cr *store.ChangeRequest
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if input.Status.IsSet() {
			// A status change updates the space's counts (a trigger locks
			// its row): lock the space before the change request, as merges
			// do, so that the two never wait on each other in opposite orders.
			if _, err := store.LockSpace(ctx, tx, s.OrganizationID, s.ID); err != nil {
				return err
			}
		}
		if cr, err = r.lockedChangeRequest(ctx, tx, s, ref); err != nil {
			return err
		}
		p := &patch{}
		setRequired(p, "subject", "subject", input.Subject, &cr.Subject, length("subject", 0, maxChangeRequestSubject))
		var status *model.ChangeRequestInputStatus
		setOptional(p, "status", "status", input.Status, &status, nil)
		if p.err != nil {
			return p.err
		}
		if status != nil {
			if cr.Status == store.CRMerged {
				return Conflict("change request #%d is merged: its status cannot change", cr.Number)
			}
			cr.Status = string(*status)
		} else if input.Status.IsSet() {
			return Invalid("status", "must not be null")
		}
		if desc, set := input.Description.ValueOK(); set {
			if cr.Description, err = checkDocument("description", desc); err != nil {
				return err
			}
			p.columns = append(p.columns, "description")
		}
		if !p.changed() {
			return nil
		}
		cr.UpdatedAt = r.now()
		if err := store.UpdateChangeRequest(ctx, tx, cr, p.columns...); err != nil {
			return err
		}
		return r.recordLive(ctx, tx, store.LiveEvent{Type: store.LiveChangeRequestUpdated, OrganizationID: s.OrganizationID,
			SpaceID: &cr.SpaceID, ChangeRequestID: &cr.ID, RevisionID: &cr.Revision})
	})
	return cr, err
}

func (r *mutationResolver) MergeChangeRequest(ctx context.Context, spaceID, ref string, base *string) (*model.MergeResult, error) {
	return r.mergeBranch(ctx, spaceID, ref, base, true)
}

func (r *mutationResolver) UpdateChangeRequestFromMain(ctx context.Context, spaceID, ref string, base *string) (*model.MergeResult, error) {
	return r.mergeBranch(ctx, spaceID, ref, base, false)
}

// mergeBranch merges change request ref into the space's content (intoMain),
// or the space's content into the change request (!intoMain). seen, when
// not nil, is the change request's revision the caller saw: checked under
// the change request's row lock, so what is merged is what the caller saw.
func (r *Resolver) mergeBranch(ctx context.Context, spaceID, ref string, seen *string, intoMain bool) (*model.MergeResult, error) {
	space, err := r.editableSpace(ctx, spaceID)
	if err != nil {
		return nil, err
	}
	caller, _ := CallerFrom(ctx)
	var out *model.MergeResult
	err = store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		s, err := store.LockSpace(ctx, tx, space.OrganizationID, spaceID)
		if err != nil {
			return err
		}
		if s.EditMode == store.EditModeLocked && intoMain {
			return Conflict("the space is locked: nothing can be merged into it")
		}
		cr, err := r.lockedChangeRequest(ctx, tx, s, ref)
		if err != nil {
			return err
		}
		if cr.Status == store.CRMerged || cr.Status == store.CRArchived {
			return Conflict("change request #%d is %s", cr.Number, cr.Status)
		}
		if seen != nil && *seen != cr.Revision {
			return StaleBase(*seen, cr.Revision)
		}
		if intoMain {
			if err := r.checkMergeRules(ctx, tx, space, s, cr, caller.User.ID); err != nil {
				return err
			}
		}
		base, main, branch := cr.Base(), s.RevisionID, cr.Revision
		if !intoMain && main == base {
			out = &model.MergeResult{Revision: cr.Revision, Result: "update"} // already up to date
			return nil
		}
		merged, err := r.merge(ctx, tx, s.OrganizationID, base, main, branch)
		if err != nil {
			return err
		}
		now := r.now()
		rev := &store.Revision{ID: store.NewID(), SpaceID: s.ID, CreatedBy: &caller.User.ID, CreatedAt: now}
		if intoMain {
			rev.Type, rev.Parents = "merge", []string{main, branch}
		} else {
			rev.Type, rev.Parents = "update", []string{branch, main}
		}
		if err := store.CreateRevision(ctx, tx, rev, merged); err != nil {
			return err
		}
		cr.UpdatedAt = now
		if intoMain {
			// Pages the merge renamed or moved leave redirects from where
			// they were in the content it replaces.
			before, err := store.RevisionPages(ctx, tx, s.OrganizationID, main)
			if err != nil {
				return err
			}
			if err := r.recordPageMoves(ctx, tx, s, before, store.NewPageTree(merged.Pages)); err != nil {
				return err
			}
			s.RevisionID, s.UpdatedAt = rev.ID, now
			if err := store.UpdateSpace(ctx, tx, s, "revision_id"); err != nil {
				return err
			}
			if err := store.RecordSpaceContentUpdated(ctx, tx, s, rev.ID, caller.User.ID, now); err != nil {
				return err
			}
			cr.Status, cr.RevisionMerged = store.CRMerged, &rev.ID
			out = &model.MergeResult{Revision: rev.ID, Result: "merge"}
			if err := store.UpdateChangeRequest(ctx, tx, cr, "status", "revision_merged"); err != nil {
				return err
			}
			return r.recordLive(ctx, tx, store.LiveEvent{Type: store.LiveChangeRequestMerged, OrganizationID: s.OrganizationID,
				SpaceID: &s.ID, ChangeRequestID: &cr.ID, RevisionID: &rev.ID})
		}
		cr.Revision, cr.RevisionMergedAncestor = rev.ID, &main
		out = &model.MergeResult{Revision: rev.ID, Result: "update"}
		if err := store.UpdateChangeRequest(ctx, tx, cr, "revision", "revision_merged_ancestor"); err != nil {
			return err
		}
		return r.recordLive(ctx, tx, store.LiveEvent{Type: store.LiveChangeRequestUpdated, OrganizationID: s.OrganizationID,
			SpaceID: &s.ID, ChangeRequestID: &cr.ID, RevisionID: &rev.ID})
	})
	return out, err
}

// merge three-way merges the content of revisions ours and theirs, from
// base: the content of the result, or a 409 naming the pages in conflict.
// New bodies are stored in orgID, the space's organization.
func (r *Resolver) merge(ctx context.Context, tx bun.IDB, orgID, base, ours, theirs string) (store.Content, error) {
	var sets [3][]*store.RevisionPage
	var files [3][]*store.RevisionFile
	var digests []string
	for i, id := range []string{base, ours, theirs} {
		c, err := store.LoadContent(ctx, tx, orgID, id)
		if err != nil {
			return store.Content{}, err
		}
		sets[i], files[i] = c.Pages, c.Files
		for _, p := range c.Pages {
			if p.BodySHA256 != nil {
				digests = append(digests, *p.BodySHA256)
			}
		}
	}
	bodies, err := store.PageBodies(ctx, tx, orgID, slices.Compact(slices.Sorted(slices.Values(digests))))
	if err != nil {
		return store.Content{}, err
	}
	res, err := merge.Pages(sets[0], sets[1], sets[2], func(p *store.RevisionPage) string { return bodies[store.StringOf(p.BodySHA256)] })
	if err != nil {
		return store.Content{}, mergeError(err, sets)
	}
	for id, text := range res.Bodies {
		digest, err := store.SaveBody(ctx, tx, orgID, text)
		if err != nil {
			return store.Content{}, err
		}
		i := slices.IndexFunc(res.Pages, func(p *store.RevisionPage) bool { return p.ID == id })
		res.Pages[i].BodySHA256 = digest
	}
	return store.Content{Pages: res.Pages, Files: merge.Files(files[0], files[1], files[2])}, nil
}

// mergeError is the API error of a refused merge: a 409 naming the pages in
// conflict by title and id.
func mergeError(err error, sets [3][]*store.RevisionPage) error {
	var conflict *merge.ConflictError
	if !errors.As(err, &conflict) {
		return err
	}
	titles := make([]string, 0, len(conflict.Pages))
	for _, id := range conflict.Pages {
		titles = append(titles, pageLabel(sets, id))
	}
	return Conflict("conflicting changes to %d page(s): %s", len(titles), strings.Join(titles, ", "))
}

// pageLabel names a page of a merge for an error: its title and id.
func pageLabel(sets [3][]*store.RevisionPage, id string) string {
	for _, set := range sets {
		if i := slices.IndexFunc(set, func(p *store.RevisionPage) bool { return p.ID == id }); i >= 0 {
			return strconv.Quote(set[i].Title) + " (" + id + ")"
		}
	}
	return id
}

// checkMergeRules checks the merge rules that apply to the space (its own,
// or its organization's when it inherits), unless the caller may bypass them.
func (r *Resolver) checkMergeRules(ctx context.Context, tx bun.IDB, space, locked *store.Space, cr *store.ChangeRequest, callerID string) error {
	rules := space.MergeRules
	if rules.Type == store.MergeRulesInherit {
		org, err := store.GetOrganization(ctx, tx, space.OrganizationID)
		if err != nil {
			return err
		}
		rules = org.MergeRules
	}
	if rules.Type != store.MergeRulesRules {
		return nil
	}
	for _, rule := range rules.Rules {
		if rule.Rule == store.MergeRuleAllowBypass && slices.Contains(rule.Users, callerID) {
			return nil
		}
	}
	var current []*store.Review // the reviews not outdated, read once when a rule needs them
	for _, rule := range rules.Rules {
		switch rule.Rule {
		case store.MergeRuleAllowBypass:
		case store.MergeRuleRequireAtLeastOneReview, store.MergeRuleRequireAllReviewsApproved,
			store.MergeRuleRequireSpecificReviewers, store.MergeRuleRequireOneOfSpecificReviewers:
			if current == nil {
				var err error
				if current, err = store.CurrentReviews(ctx, tx, cr.OrganizationID, cr.ID); err != nil {
					return err
				}
			}
			if err := reviewRule(rule, current); err != nil {
				return err
			}
		case store.MergeRuleRequireUpToDateChangeRequest:
			if locked.RevisionID != cr.Base() {
				return Conflict("merge rule require_up_to_date_change_request: the space's content moved since the change request's base; update it first")
			}
		case store.MergeRuleRequireChangeRequestSubject:
			if strings.TrimSpace(cr.Subject) == "" {
				return Conflict("merge rule require_change_request_subject: give the change request a subject first")
			}
		case store.MergeRuleRequireChangeRequestDescription:
			if len(cr.Description) == 0 {
				return Conflict("merge rule require_change_request_description: give the change request a description first")
			}
		case store.MergeRuleRequireAgentReview:
			return Conflict("merge rule require_agent_review cannot be satisfied: this server has no review agent")
		default:
			// Custom expressions are not evaluated: refusing is the safe answer.
			return Conflict("merge rule %s cannot be satisfied: custom merge rule expressions are not evaluated by this server", rule.Rule)
		}
	}
	return nil
}
