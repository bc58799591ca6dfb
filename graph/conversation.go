package graph

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/internal/insights"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/graph/translator"
	"github.com/docsapi/docsapi/store"
)

// Conversation insights. Admins (the ingestConversations
// permission) ingest support conversations; re-ingesting an id replaces
// that conversation. After the commit a job (ProcessConversationsArgs, run
// by graph/jobs) extracts, for every conversation changed since, the
// problems its user raised — through the configured language model when the
// provider can (translator.IssueExtractor), with the deterministic built-in
// extractor (insights.Extract) otherwise — and places each new issue in the
// cluster of similar issues (TF-IDF vectors, cosine similarity at least
// clusterThreshold) or in a new one. Readers of the organization read it all.

// Bounds of an ingestion.
const (
	maxIngestBatch          = 1000
	maxConversationID       = 255
	maxConversationSubject  = 512
	maxConversationParts    = 1000
	maxConversationPartBody = 100_000
	maxConversationURL      = 2048
	maxClusterLabel         = 100
)

// clusterThreshold is the cosine similarity from which an issue joins a
// cluster: measured on paraphrased complaints (graph/internal/insights
// tests and wholeserver/conversation_test.go), it groups rephrasings of one problem
// and keeps complaints that share only generic words apart.
const clusterThreshold = 0.2

// pulseWeeks is the length of a cluster's weeklyPulse: always 13 weeks, the
// quarter up to now.
const pulseWeeks = 13

// builtinExtractor names the built-in extractor on the issues it finds.
const builtinExtractor = "builtin"

var conversationSourceRE = regexp.MustCompile(`^(email|integration:[^:]+:[^:]+)$`)

var conversationRoles = map[string]bool{"user": true, "assistant": true, "team-member": true}

// ProcessConversationsArgs is the job that extracts the issues of an
// organization's changed conversations and clusters them.
type ProcessConversationsArgs struct {
	OrganizationID string `json:"organizationId"`
}

// Kind names the job in River's table.
func (ProcessConversationsArgs) Kind() string { return "process_conversations" }

func (r *mutationResolver) IngestConversations(ctx context.Context, orgID string, input []*model.ConversationInput) (bool, error) {
	// SECURITY: the ingestConversations permission: organization admins.
	if err := requireOrgRole(ctx, orgID, store.RoleAdmin, "organization"); err != nil {
		return false, err
	}
	if len(input) == 0 {
		return false, Invalid("body", "must hold a conversation or a non-empty array of them")
	}
	if len(input) > maxIngestBatch {
		return false, Invalid("body", "at most %d conversations at once", maxIngestBatch)
	}
	now := r.now()
	rows := make([]*store.Conversation, len(input))
	keep := make([]bool, len(input))
	seen := map[string]bool{}
	for i, in := range input {
		field := "body"
		if len(input) > 1 {
			field = "[" + strconv.Itoa(i) + "]"
		}
		c, hasDate, err := conversationRow(orgID, in, field, now)
		if err != nil {
			return false, err
		}
		if seen[c.ID] {
			return false, Invalid(field+".id", "%q appears twice", c.ID)
		}
		seen[c.ID] = true
		rows[i], keep[i] = c, !hasDate
	}
	err := store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		for i, c := range rows {
			if err := store.UpsertConversation(ctx, tx, c, keep[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	r.enqueue(ctx, ProcessConversationsArgs{OrganizationID: orgID})
	return true, nil
}

// conversationRow checks one ingested conversation and makes its row;
// hasDate says whether the input dated it (metadata.createdAt).
func conversationRow(orgID string, in *model.ConversationInput, field string, now time.Time) (*store.Conversation, bool, error) {
	if err := checkLength(field+".id", in.ID, 1, maxConversationID); err != nil {
		return nil, false, err
	}
	c := &store.Conversation{OrganizationID: orgID, ID: in.ID, Source: "email", Attributes: map[string]string{},
		CreatedAt: now, IngestedAt: now, UpdatedAt: now}
	if s, _ := in.Subject.ValueOK(); s != nil {
		if err := checkLength(field+".subject", *s, 0, maxConversationSubject); err != nil {
			return nil, false, err
		}
		c.Subject = s
	}
	if s, _ := in.Source.ValueOK(); s != nil {
		if !conversationSourceRE.MatchString(*s) {
			return nil, false, Invalid(field+".source", "must be `email` or `integration:<integration>:<installation>`")
		}
		c.Source = *s
	}
	if len(in.Parts) > maxConversationParts {
		return nil, false, Invalid(field+".parts", "at most %d parts", maxConversationParts)
	}
	c.Parts = make([]store.ConversationPart, 0, len(in.Parts))
	for j, p := range in.Parts {
		pf := fmt.Sprintf("%s.parts[%d]", field, j)
		if p.Type != "message" {
			return nil, false, Invalid(pf+".type", "must be `message`")
		}
		if !conversationRoles[p.Role] {
			return nil, false, Invalid(pf+".role", "must be `user`, `assistant` or `team-member`")
		}
		if err := checkLength(pf+".body", p.Body, 0, maxConversationPartBody); err != nil {
			return nil, false, err
		}
		c.Parts = append(c.Parts, store.ConversationPart{Type: p.Type, Role: p.Role, Body: p.Body})
	}
	hasDate := false
	if m, _ := in.Metadata.ValueOK(); m != nil {
		if u, _ := m.URL.ValueOK(); u != nil {
			if err := checkLength(field+".metadata.url", *u, 0, maxConversationURL); err != nil {
				return nil, false, err
			}
			c.MetadataURL = u
		}
		if attrs, _ := m.Attributes.ValueOK(); attrs != nil {
			for k, v := range attrs {
				s, ok := v.(string)
				if !ok {
					return nil, false, Invalid(field+".metadata.attributes."+k, "must be a string")
				}
				c.Attributes[k] = s
			}
		}
		if d, _ := m.CreatedAt.ValueOK(); d != nil {
			c.CreatedAt, hasDate = store.Now(func() time.Time { return *d }), true
		}
	}
	return c, hasDate, nil
}

// readInsights checks the caller reads orgID's conversation insights: its
// readers; others get NotFound(what).
func readInsights(ctx context.Context, orgID, what string) error {
	// SECURITY: the organization's readers; guests and outsiders see nothing.
	_, err := contentRole(ctx, orgID, what)
	return err
}

func (r *organizationResolver) Conversations(ctx context.Context, o *store.Organization, page *string, limit *int, _ *int, _ *string, source *string) (*model.ConversationList, error) {
	if err := readInsights(ctx, o.ID, "organization"); err != nil {
		return nil, err
	}
	return paginate(page, limit, listQuery[*store.Conversation]{
		read: func(p store.Page) ([]*store.Conversation, error) {
			return store.ListConversations(ctx, r.DB, o.ID, source, p)
		},
		key: func(c *store.Conversation) store.Keyset { return store.Keyset{Time: c.CreatedAt, ID: c.ID} },
	})
}

func (r *organizationResolver) Conversation(ctx context.Context, o *store.Organization, id string) (*model.ConversationDetail, error) {
	if err := readInsights(ctx, o.ID, "conversation"); err != nil {
		return nil, err
	}
	c, err := store.GetConversation(ctx, r.DB, o.ID, id)
	if err != nil {
		return nil, orNotFound(err, "conversation")
	}
	parts := make([]*store.ConversationPart, len(c.Parts))
	for i := range c.Parts {
		parts[i] = &c.Parts[i]
	}
	attrs := make(map[string]any, len(c.Attributes))
	for k, v := range c.Attributes {
		attrs[k] = v
	}
	return &model.ConversationDetail{Conversation: c, Parts: parts,
		Metadata: &model.ConversationMetadata{URL: c.MetadataURL, Attributes: attrs, CreatedAt: &c.CreatedAt}}, nil
}

func (r *organizationResolver) ConversationIssues(ctx context.Context, o *store.Organization, page *string, limit *int, _ *int, _ *string, cluster, conversation *string) (*model.ConversationIssueList, error) {
	if err := readInsights(ctx, o.ID, "organization"); err != nil {
		return nil, err
	}
	return paginate(page, limit, listQuery[*store.ConversationIssue]{
		read: func(p store.Page) ([]*store.ConversationIssue, error) {
			return store.ListConversationIssues(ctx, r.DB, o.ID, cluster, conversation, p)
		},
		key: func(i *store.ConversationIssue) store.Keyset { return store.Keyset{Time: i.CreatedAt, ID: i.ID} },
		// One query for the conversations of the page.
		prime: func(issues []*store.ConversationIssue) error {
			ids := make([]string, 0, len(issues))
			for _, i := range issues {
				ids = append(ids, i.ConversationID)
			}
			convs, err := store.ConversationsByID(ctx, r.DB, o.ID, ids)
			if err != nil {
				return err
			}
			for _, i := range issues {
				i.Conversation = convs[i.ConversationID]
			}
			return nil
		},
	})
}

func (r *organizationResolver) ConversationIssue(ctx context.Context, o *store.Organization, id string) (*store.ConversationIssue, error) {
	if err := readInsights(ctx, o.ID, "conversation issue"); err != nil {
		return nil, err
	}
	i, err := store.GetConversationIssue(ctx, r.DB, o.ID, id)
	return i, orNotFound(err, "conversation issue")
}

func (r *organizationResolver) ConversationsClusters(ctx context.Context, o *store.Organization, page *string, limit *int, _ *int, _ *string, order *model.ListOrder, orderBy *model.ConversationsIssuesClusterOrderBy, status *store.IssuesClusterStatus) (*model.ConversationsIssuesClusterList, error) {
	if err := readInsights(ctx, o.ID, "organization"); err != nil {
		return nil, err
	}
	by := model.ConversationsIssuesClusterOrderByUpdatedAt
	if orderBy != nil {
		by = *orderBy
	}
	desc := order == nil || *order == model.ListOrderDesc
	return paginate(page, limit, listQuery[*store.IssuesCluster]{
		read: func(p store.Page) ([]*store.IssuesCluster, error) {
			return store.ListIssuesClusters(ctx, r.DB, o.ID, string(by), desc, status, p)
		},
		key: func(c *store.IssuesCluster) store.Keyset { return clusterKey(c, by) },
		// The pulse and sources of the whole page, in two queries.
		prime: func(clusters []*store.IssuesCluster) error {
			ids := make([]string, len(clusters))
			for i, c := range clusters {
				ids[i] = c.ID
			}
			details, err := store.ClusterDetails(ctx, r.DB, o.ID, ids, r.pulseStart(r.now()))
			if err != nil {
				return err
			}
			for _, c := range clusters {
				c.Details = details[c.ID]
			}
			return nil
		},
	})
}

// clusterKey is the sort key of c in the order by.
func clusterKey(c *store.IssuesCluster, by model.ConversationsIssuesClusterOrderBy) store.Keyset {
	k := store.Keyset{ID: c.ID}
	switch by {
	case model.ConversationsIssuesClusterOrderByUpdatedAt:
		k.Time = c.UpdatedAt
	case model.ConversationsIssuesClusterOrderByIssues:
		k.Pos = c.Issues
	case model.ConversationsIssuesClusterOrderByConversations:
		k.Pos = c.Conversations
	case model.ConversationsIssuesClusterOrderByTasksTotal:
		k.Pos = c.TasksTotal
	case model.ConversationsIssuesClusterOrderByTasksBacklog:
		k.Pos = c.TasksBacklog
	case model.ConversationsIssuesClusterOrderByTasksStarted:
		k.Pos = c.TasksStarted
	}
	return k
}

func (r *organizationResolver) ConversationsCluster(ctx context.Context, o *store.Organization, id string) (*store.IssuesCluster, error) {
	if err := readInsights(ctx, o.ID, "conversations issues cluster"); err != nil {
		return nil, err
	}
	c, err := store.GetIssuesCluster(ctx, r.DB, o.ID, id)
	return c, orNotFound(err, "conversations issues cluster")
}

// checkChangeRequestCluster checks that a change request being created for
// cluster id may be: the cluster belongs to the space's organization.
func (r *Resolver) checkChangeRequestCluster(ctx context.Context, orgID, id string) error {
	ok, err := store.ClusterExists(ctx, r.DB, orgID, id)
	if err != nil {
		return err
	}
	if !ok {
		return Invalid("conversationsIssuesCluster", "no conversations issues cluster %q in this organization", id)
	}
	return nil
}

// ConversationsToProcess is what the periodic sweep enqueues: organizations
// with conversations due for over a minute (their enqueue failed, or the job
// failed and is not retrying).
func (r *Resolver) ConversationsToProcess(ctx context.Context) ([]string, error) {
	return store.OrganizationsWithUnprocessedConversations(ctx, r.DB, r.now().Add(-time.Minute))
}

// issueExtractor is the configured provider when it extracts issues, else nil.
func (r *Resolver) issueExtractor() translator.IssueExtractor {
	x, _ := r.Translator.(translator.IssueExtractor)
	return x
}

// ProcessConversations is the job's work: under the organization's lock,
// replace the issues of every conversation changed since it was processed,
// then place the new issues in clusters. A provider failure fails the job
// (River retries it; the sweep enqueues it again later) and changes nothing.
func (r *Resolver) ProcessConversations(ctx context.Context, orgID string) error {
	return store.RunInTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		if err := store.LockConversationInsights(ctx, tx, orgID); err != nil {
			return err
		}
		convs, err := store.UnprocessedConversations(ctx, tx, orgID)
		if err != nil || len(convs) == 0 {
			return err
		}
		now := r.now()
		for _, c := range convs {
			issues, extractor, err := r.extractIssues(ctx, c)
			if err != nil {
				return fmt.Errorf("conversation %q: %w", c.ID, err)
			}
			rows := make([]*store.ConversationIssue, len(issues))
			for i, is := range issues {
				rows[i] = &store.ConversationIssue{ID: store.NewID(), OrganizationID: orgID, ConversationID: c.ID,
					Title: truncateRunes(is.Title, insights.MaxTitle), Summary: is.Summary, Extractor: extractor,
					CreatedAt: c.CreatedAt, IngestedAt: now}
			}
			if err := store.ReplaceConversationIssues(ctx, tx, orgID, c.ID, rows); err != nil {
				return err
			}
			if err := store.MarkConversationProcessed(ctx, tx, c, now); err != nil {
				return err
			}
		}
		return r.clusterIssues(ctx, tx, orgID, now)
	})
}

// extractIssues finds the problems raised in c, and says what found them.
func (r *Resolver) extractIssues(ctx context.Context, c *store.Conversation) ([]insights.Issue, string, error) {
	messages := make([]insights.Message, len(c.Parts))
	for i, p := range c.Parts {
		messages[i] = insights.Message{Role: p.Role, Body: p.Body}
	}
	if x := r.issueExtractor(); x != nil {
		subject := ""
		if c.Subject != nil {
			subject = *c.Subject
		}
		issues, err := x.ExtractIssues(ctx, subject, messages)
		return issues, x.Name(), err
	}
	return insights.Extract(messages), builtinExtractor, nil
}

// clusterIssues places the organization's unclustered issues: each joins
// the existing cluster it is most similar to, or starts one. Clusters keep
// their members, so their ids (which change requests name) stay. Every
// cluster's label and summary are then made again from its members, and
// clusters left empty (their conversations changed) are removed.
func (r *Resolver) clusterIssues(ctx context.Context, tx bun.Tx, orgID string, now time.Time) error {
	issues, err := store.OrganizationIssues(ctx, tx, orgID)
	if err != nil {
		return err
	}
	existing, err := store.OrganizationIssuesClusters(ctx, tx, orgID)
	if err != nil {
		return err
	}
	texts := make([]string, len(issues))
	for i, is := range issues {
		texts[i] = is.Title + ". " + is.Summary
	}
	corpus := insights.NewCorpus(texts)
	vectors := make([]insights.Vector, len(issues))
	for i := range texts {
		vectors[i] = corpus.Vector(texts[i])
	}
	// The existing clusters that still have members are numbered 0..n-1; one
	// left empty is not reused for other issues (a change request may name
	// it for its old topic): it is removed below.
	members := map[string]bool{}
	for _, is := range issues {
		if is.ClusterID != nil {
			members[*is.ClusterID] = true
		}
	}
	index := map[string]int{}
	clusters := make([]*store.IssuesCluster, 0, len(existing))
	for _, c := range existing {
		if members[c.ID] {
			index[c.ID] = len(clusters)
			clusters = append(clusters, c)
		}
	}
	assigned := make([]int, len(issues))
	for i, is := range issues {
		assigned[i] = -1
		if is.ClusterID != nil {
			if n, ok := index[*is.ClusterID]; ok {
				assigned[i] = n
			}
		}
	}
	placed := insights.Cluster(vectors, assigned, clusterThreshold)
	byCluster := map[int][]int{}
	changed := map[int]bool{}
	for i, n := range placed {
		byCluster[n] = append(byCluster[n], i)
		if assigned[i] < 0 {
			changed[n] = true
		}
		for n >= len(clusters) {
			clusters = append(clusters, &store.IssuesCluster{ID: store.NewID(), OrganizationID: orgID, Icon: "messages", CreatedAt: now})
		}
	}
	for n, c := range clusters {
		m := byCluster[n]
		if len(m) == 0 {
			continue // removed below
		}
		central := issues[insights.Central(vectors, m)]
		conversations := map[string]bool{}
		for _, i := range m {
			conversations[issues[i].ConversationID] = true
		}
		label := truncateRunes(central.Title, maxClusterLabel)
		summary := fmt.Sprintf("%s (%s in %s)", strings.TrimSpace(central.Summary),
			plural(len(m), "issue"), plural(len(conversations), "conversation"))
		if label == c.Label && summary == c.Summary && !changed[n] {
			continue
		}
		c.Label, c.Summary, c.UpdatedAt = label, summary, now
		if err := store.SaveIssuesCluster(ctx, tx, c); err != nil {
			return err
		}
	}
	for i, n := range placed {
		if assigned[i] < 0 {
			if err := store.SetIssueCluster(ctx, tx, issues[i].ID, clusters[n].ID); err != nil {
				return err
			}
		}
	}
	return store.DeleteEmptyIssuesClusters(ctx, tx, orgID)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

type conversationResolver struct{ *Resolver }

func (r *Resolver) Conversation() generated.ConversationResolver { return &conversationResolver{r} }

func (r *conversationResolver) Urls(_ context.Context, c *store.Conversation) (*model.ConversationURLs, error) {
	return &model.ConversationURLs{Source: c.MetadataURL,
		Location: r.URLs.API("/v1/orgs/" + pathEscape(c.OrganizationID) + "/conversations/" + pathEscape(c.ID))}, nil
}

type conversationIssueResolver struct{ *Resolver }

func (r *Resolver) ConversationIssue() generated.ConversationIssueResolver {
	return &conversationIssueResolver{r}
}

func (r *conversationIssueResolver) Urls(_ context.Context, i *store.ConversationIssue) (*model.ConversationIssueURLs, error) {
	return &model.ConversationIssueURLs{Location: r.URLs.API("/v1/orgs/" + pathEscape(i.OrganizationID) + "/conversations-issues/" + pathEscape(i.ID))}, nil
}

type conversationIssueItemResolver struct{ *Resolver }

func (r *Resolver) ConversationIssueItem() generated.ConversationIssueItemResolver {
	return &conversationIssueItemResolver{r}
}

func (r *conversationIssueItemResolver) Issue(_ context.Context, i *store.ConversationIssue) (*store.ConversationIssue, error) {
	return i, nil
}

func (r *conversationIssueItemResolver) Conversation(ctx context.Context, i *store.ConversationIssue) (*store.Conversation, error) {
	if i.Conversation != nil {
		return i.Conversation, nil
	}
	return store.GetConversation(ctx, r.DB, i.OrganizationID, i.ConversationID)
}

type issuesClusterResolver struct{ *Resolver }

func (r *Resolver) ConversationsIssuesCluster() generated.ConversationsIssuesClusterResolver {
	return &issuesClusterResolver{r}
}

const week = 7 * 24 * time.Hour

// pulseStart is where the 13 weeks of a weeklyPulse ending at now begin.
func (r *Resolver) pulseStart(now time.Time) time.Time { return now.Add(-pulseWeeks * week) }

// details are c's details: read with its list, or now, once per request.
// The fields asking for them resolve concurrently, so the row is not
// written to: the request's memo holds what is read here.
func (r *issuesClusterResolver) details(ctx context.Context, c *store.IssuesCluster) (*store.ClusterDetail, error) {
	if c.Details != nil {
		return c.Details, nil
	}
	return memoized(r.loaders(ctx), memoKey{"clusterDetails", c.ID}, func() (*store.ClusterDetail, error) {
		d, err := store.ClusterDetails(ctx, r.DB, c.OrganizationID, []string{c.ID}, r.pulseStart(r.now()))
		return d[c.ID], err
	})
}

// WeeklyPulse counts the cluster's issues by the week of their conversation,
// over the 13 weeks that end now (the resolver's clock), oldest first.
func (r *issuesClusterResolver) WeeklyPulse(ctx context.Context, c *store.IssuesCluster) ([]int, error) {
	d, err := r.details(ctx, c)
	if err != nil {
		return nil, err
	}
	now := r.now()
	start := r.pulseStart(now)
	pulse := make([]int, pulseWeeks)
	for _, at := range d.Dates {
		n := int(at.Sub(start) / week)
		if n == pulseWeeks && at.Equal(now) { // this very instant closes the last week
			n--
		}
		if n >= 0 && n < pulseWeeks {
			pulse[n]++
		}
	}
	return pulse, nil
}

func (r *issuesClusterResolver) Sources(ctx context.Context, c *store.IssuesCluster) (map[string]any, error) {
	d, err := r.details(ctx, c)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(d.Sources))
	for k, v := range d.Sources {
		out[k] = v
	}
	return out, nil
}

func (r *issuesClusterResolver) Stats(_ context.Context, c *store.IssuesCluster) (*model.ConversationsIssuesClusterStats, error) {
	return &model.ConversationsIssuesClusterStats{Issues: c.Issues, Conversations: c.Conversations,
		TasksTotal: c.TasksTotal, TasksBacklog: c.TasksBacklog, TasksStarted: c.TasksStarted,
		TasksCompleted: c.TasksCompleted, TasksCancelled: c.TasksCancelled}, nil
}

func (r *issuesClusterResolver) Urls(_ context.Context, c *store.IssuesCluster) (*model.ConversationsIssuesClusterURLs, error) {
	org, id := pathEscape(c.OrganizationID), pathEscape(c.ID)
	return &model.ConversationsIssuesClusterURLs{Location: r.URLs.API("/v1/orgs/" + org + "/conversations-clusters/" + id),
		App: r.URLs.App("/o/" + org + "/insights/clusters/" + id)}, nil
}
