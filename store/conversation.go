package store

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/uptrace/bun"
)

// Conversation is a support conversation ingested for analysis, keyed by
// the organization and the id its source gave it.
type Conversation struct {
	bun.BaseModel `bun:"table:conversations,alias:cv"`

	OrganizationID string             `bun:"organization_id,pk"`
	ID             string             `bun:"id,pk"`
	Source         string             `bun:"source"`
	Subject        *string            `bun:"subject"`
	Parts          []ConversationPart `bun:"parts,type:jsonb"`
	MetadataURL    *string            `bun:"metadata_url"`
	Attributes     map[string]string  `bun:"attributes,type:jsonb"`
	CreatedAt      time.Time          `bun:"created_at"`
	IngestedAt     time.Time          `bun:"ingested_at"`
	UpdatedAt      time.Time          `bun:"updated_at"`
	ProcessedAt    *time.Time         `bun:"processed_at"`
}

// Object is the REST type name of a conversation.
func (Conversation) Object() string { return "conversation" }

// ConversationPart is a message of a conversation.
type ConversationPart struct {
	Type string `json:"type"`
	Role string `json:"role"`
	Body string `json:"body"`
}

// ConversationIssue is a problem a user raised in a conversation.
type ConversationIssue struct {
	bun.BaseModel `bun:"table:conversation_issues,alias:ci"`

	ID             string    `bun:"id,pk"`
	OrganizationID string    `bun:"organization_id"`
	ConversationID string    `bun:"conversation_id"`
	ClusterID      *string   `bun:"cluster_id"`
	Title          string    `bun:"title"`
	Summary        string    `bun:"summary"`
	Extractor      string    `bun:"extractor"`
	CreatedAt      time.Time `bun:"created_at"`
	IngestedAt     time.Time `bun:"ingested_at"`

	// Conversation is the issue's conversation when a list read it along.
	Conversation *Conversation `bun:"-"`
}

// Object is the REST type name of an issue.
func (ConversationIssue) Object() string { return "conversation-issue" }

// IssuesCluster groups similar issues of an organization. The counts are
// read with it (ListIssuesClusters, GetIssuesCluster), never written.
type IssuesCluster struct {
	bun.BaseModel `bun:"table:conversation_issue_clusters,alias:cl"`

	ID             string    `bun:"id,pk"`
	OrganizationID string    `bun:"organization_id"`
	Label          string    `bun:"label"`
	Summary        string    `bun:"summary"`
	Icon           string    `bun:"icon"`
	CreatedAt      time.Time `bun:"created_at"`
	UpdatedAt      time.Time `bun:"updated_at"`

	Issues         int                 `bun:"issues,scanonly"`
	Conversations  int                 `bun:"conversations,scanonly"`
	TasksTotal     int                 `bun:"tasks_total,scanonly"`
	TasksBacklog   int                 `bun:"tasks_backlog,scanonly"`
	TasksStarted   int                 `bun:"tasks_started,scanonly"`
	TasksCompleted int                 `bun:"tasks_completed,scanonly"`
	TasksCancelled int                 `bun:"tasks_cancelled,scanonly"`
	Status         IssuesClusterStatus `bun:"status,scanonly"`

	// Details holds the per-issue data of the cluster when a list read it
	// for its whole page (ClusterDetails); nil: read it on demand.
	Details *ClusterDetail `bun:"-"`
}

// ClusterDetail is what a cluster's weeklyPulse and sources are made of.
type ClusterDetail struct {
	// Dates are the dates of the conversations of its issues since the
	// requested instant, one per issue.
	Dates []time.Time
	// Sources counts its issues by the source of their conversation.
	Sources map[string]int
}

// Object is the REST type name of a cluster.
func (IssuesCluster) Object() string { return "issues-cluster" }

// IssuesClusterStatus is whether a cluster awaits action (pending) or has
// conversations awaiting extraction (analysing).
type IssuesClusterStatus string

const (
	ClusterPending   IssuesClusterStatus = "pending"
	ClusterAnalysing IssuesClusterStatus = "analysing"
)

// AllIssuesClusterStatuses lists the states of a cluster.
var AllIssuesClusterStatuses = []IssuesClusterStatus{ClusterPending, ClusterAnalysing}

func (s *IssuesClusterStatus) UnmarshalGQL(x any) error {
	return unmarshalEnum(s, x, "ConversationsIssuesClusterStatus", AllIssuesClusterStatuses)
}
func (s IssuesClusterStatus) MarshalGQL(w io.Writer) { marshalEnum(w, s) }

// UpsertConversation inserts c, or replaces the conversation of the same
// organization and id: its first ingestion time stays, and its issues are
// due again (processed_at cleared). keepCreatedAt keeps the stored date of
// the conversation (the input gave none).
func UpsertConversation(ctx context.Context, db bun.IDB, c *Conversation, keepCreatedAt bool) error {
	_, err := db.NewInsert().Model(c).
		On("CONFLICT (organization_id, id) DO UPDATE").
		Set("source = EXCLUDED.source, subject = EXCLUDED.subject, parts = EXCLUDED.parts").
		Set("metadata_url = EXCLUDED.metadata_url, attributes = EXCLUDED.attributes").
		Set("created_at = CASE WHEN ? THEN cv.created_at ELSE EXCLUDED.created_at END", keepCreatedAt).
		Set("updated_at = EXCLUDED.updated_at, processed_at = NULL").
		Exec(ctx)
	return translate(err)
}

// GetConversation returns conversation id of orgID.
func GetConversation(ctx context.Context, db bun.IDB, orgID, id string) (*Conversation, error) {
	ctx = inOrganization(ctx, orgID)
	c := new(Conversation)
	err := db.NewSelect().Model(c).Where("cv.organization_id = ? AND cv.id = ?", orgID, id).Scan(ctx)
	return c, translate(err)
}

// ConversationsByID returns the conversations of orgID with these ids.
func ConversationsByID(ctx context.Context, db bun.IDB, orgID string, ids []string) (map[string]*Conversation, error) {
	ctx = inOrganization(ctx, orgID)
	out := map[string]*Conversation{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []*Conversation
	err := db.NewSelect().Model(&rows).Where("cv.organization_id = ? AND cv.id IN (?)", orgID, bun.List(ids)).Scan(ctx)
	for _, c := range rows {
		out[c.ID] = c
	}
	return out, translate(err)
}

// ListConversations pages through the conversations of orgID, newest first;
// source, when set, keeps those of that source.
func ListConversations(ctx context.Context, db bun.IDB, orgID string, source *string, p Page) ([]*Conversation, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*Conversation
	q := db.NewSelect().Model(&rows).Where("cv.organization_id = ?", orgID)
	if source != nil {
		q = q.Where("cv.source = ?", *source)
	}
	err := p.scan(ctx, p.byTime(q, "cv.created_at", "cv.id", true))
	return rows, translate(err)
}

// ListConversationIssues pages through the issues of orgID, newest first,
// of one cluster and of one conversation when those are set.
func ListConversationIssues(ctx context.Context, db bun.IDB, orgID string, cluster, conversation *string, p Page) ([]*ConversationIssue, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*ConversationIssue
	q := db.NewSelect().Model(&rows).Where("ci.organization_id = ?", orgID)
	if cluster != nil {
		q = q.Where("ci.cluster_id = ?", *cluster)
	}
	if conversation != nil {
		q = q.Where("ci.conversation_id = ?", *conversation)
	}
	err := p.scan(ctx, p.byTime(q, "ci.created_at", "ci.id", true))
	return rows, translate(err)
}

// GetConversationIssue returns issue id of orgID.
func GetConversationIssue(ctx context.Context, db bun.IDB, orgID, id string) (*ConversationIssue, error) {
	ctx = inOrganization(ctx, orgID)
	i := new(ConversationIssue)
	err := db.NewSelect().Model(i).Where("ci.organization_id = ? AND ci.id = ?", orgID, id).Scan(ctx)
	return i, translate(err)
}

// clusterColumns are a cluster's columns and counts; the query they are in
// names the cluster table cl.
const clusterColumns = `cl.*,
	(SELECT count(*) FROM conversation_issues i WHERE i.cluster_id = cl.id AND i.organization_id = cl.organization_id) AS issues,
	(SELECT count(DISTINCT i.conversation_id) FROM conversation_issues i WHERE i.cluster_id = cl.id AND i.organization_id = cl.organization_id) AS conversations,
	t.tasks_total, t.tasks_backlog, t.tasks_started, t.tasks_completed, t.tasks_cancelled,
	CASE WHEN EXISTS (SELECT 1 FROM conversation_issues i JOIN conversations c
		ON c.organization_id = i.organization_id AND c.id = i.conversation_id
		WHERE i.cluster_id = cl.id AND i.organization_id = cl.organization_id AND c.processed_at IS NULL) THEN 'analysing' ELSE 'pending' END AS status`

// clusterTasks counts the change requests made for cl by status: its tasks.
const clusterTasks = `LEFT JOIN LATERAL (SELECT count(*) AS tasks_total,
	count(*) FILTER (WHERE cr.status = 'draft') AS tasks_backlog,
	count(*) FILTER (WHERE cr.status = 'open') AS tasks_started,
	count(*) FILTER (WHERE cr.status = 'merged') AS tasks_completed,
	count(*) FILTER (WHERE cr.status = 'archived') AS tasks_cancelled
	FROM change_requests cr WHERE cr.conversations_issues_cluster_id = cl.id AND cr.organization_id = cl.organization_id) t ON true`

// ClusterOrders are the orders of a cluster list: updatedAt sorts by time,
// the others by a count.
var ClusterOrders = map[string]string{
	"updatedAt": "updated_at", "issues": "issues", "conversations": "conversations",
	"tasksTotal": "tasks_total", "tasksBacklog": "tasks_backlog", "tasksStarted": "tasks_started",
}

// ListIssuesClusters pages through the clusters of orgID ordered by orderBy
// (a key of ClusterOrders), then id; status, when set, keeps those in it.
// The keyset holds the sort value: Time for updatedAt, Pos for counts.
func ListIssuesClusters(ctx context.Context, db bun.IDB, orgID, orderBy string, desc bool, status *IssuesClusterStatus, p Page) ([]*IssuesCluster, error) {
	ctx = inOrganization(ctx, orgID)
	col, ok := ClusterOrders[orderBy]
	if !ok {
		return nil, fmt.Errorf("store: unknown cluster order %q", orderBy)
	}
	cmp, dir := ">", "ASC"
	if desc {
		cmp, dir = "<", "DESC"
	}
	where, args := "organization_id = ?", []any{orgID}
	if status != nil {
		where += " AND status = ?"
		args = append(args, string(*status))
	}
	if p.After != nil {
		var after any = p.After.Pos
		if col == "updated_at" {
			after = p.After.Time
		}
		where += fmt.Sprintf(" AND (%s, id) %s (?, ?)", col, cmp)
		args = append(args, after, p.After.ID)
	}
	args = append(args, p.Limit+1)
	var rows []*IssuesCluster
	err := db.NewRaw(`SELECT * FROM (SELECT `+clusterColumns+` FROM conversation_issue_clusters cl `+clusterTasks+`) x
		WHERE `+where+fmt.Sprintf(` ORDER BY %s %s, id %s LIMIT ?`, col, dir, dir), args...).Scan(ctx, &rows)
	return rows, translate(err)
}

// GetIssuesCluster returns cluster id of orgID with its counts.
func GetIssuesCluster(ctx context.Context, db bun.IDB, orgID, id string) (*IssuesCluster, error) {
	ctx = inOrganization(ctx, orgID)
	c := new(IssuesCluster)
	err := db.NewRaw(`SELECT `+clusterColumns+` FROM conversation_issue_clusters cl `+clusterTasks+`
		WHERE cl.organization_id = ? AND cl.id = ?`, orgID, id).Scan(ctx, c)
	return c, translate(err)
}

// ClusterDetails reads the details of these clusters of orgID in two
// queries: conversation dates since since, and sources.
func ClusterDetails(ctx context.Context, db bun.IDB, orgID string, clusterIDs []string, since time.Time) (map[string]*ClusterDetail, error) {
	ctx = inOrganization(ctx, orgID)
	out := make(map[string]*ClusterDetail, len(clusterIDs))
	for _, id := range clusterIDs {
		out[id] = &ClusterDetail{Dates: []time.Time{}, Sources: map[string]int{}}
	}
	if len(clusterIDs) == 0 {
		return out, nil
	}
	err := eachRow(ctx, db, `SELECT i.cluster_id, c.created_at FROM conversation_issues i JOIN conversations c
		ON c.organization_id = i.organization_id AND c.id = i.conversation_id
		WHERE i.organization_id = ? AND i.cluster_id = ANY(?) AND c.created_at >= ?`, []any{orgID, clusterIDs, since}, func(scan func(...any) error) error {
		var id string
		var at time.Time
		if err := scan(&id, &at); err != nil {
			return err
		}
		out[id].Dates = append(out[id].Dates, at)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = eachRow(ctx, db, `SELECT i.cluster_id, c.source, count(*) FROM conversation_issues i JOIN conversations c
		ON c.organization_id = i.organization_id AND c.id = i.conversation_id
		WHERE i.organization_id = ? AND i.cluster_id = ANY(?) GROUP BY i.cluster_id, c.source`, []any{orgID, clusterIDs}, func(scan func(...any) error) error {
		var id, source string
		var n int
		if err := scan(&id, &source, &n); err != nil {
			return err
		}
		out[id].Sources[source] = n
		return nil
	})
	return out, err
}

// ClusterExists reports whether cluster id belongs to orgID.
func ClusterExists(ctx context.Context, db bun.IDB, orgID, id string) (bool, error) {
	ctx = inOrganization(ctx, orgID)
	ok, err := db.NewSelect().Model((*IssuesCluster)(nil)).Where("organization_id = ? AND id = ?", orgID, id).Exists(ctx)
	return ok, translate(err)
}

// LockConversationInsights serialises the processing of orgID's
// conversations for the rest of tx: clustering reads every issue, so two
// jobs must not interleave.
func LockConversationInsights(ctx context.Context, tx bun.Tx, orgID string) error {
	_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext('conversation-insights:' || ?))", orgID)
	return translate(err)
}

// UnprocessedConversations are orgID's conversations whose issues are due.
func UnprocessedConversations(ctx context.Context, db bun.IDB, orgID string) ([]*Conversation, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*Conversation
	err := db.NewSelect().Model(&rows).Where("cv.organization_id = ? AND cv.processed_at IS NULL", orgID).
		OrderExpr("cv.created_at, cv.id").Scan(ctx)
	return rows, translate(err)
}

// MarkConversationProcessed records that c's issues were extracted at
// processedAt, unless it changed since it was read (then it stays due).
func MarkConversationProcessed(ctx context.Context, db bun.IDB, c *Conversation, processedAt time.Time) error {
	_, err := db.NewUpdate().Model((*Conversation)(nil)).Set("processed_at = ?", processedAt).
		Where("organization_id = ? AND id = ? AND updated_at = ?", c.OrganizationID, c.ID, c.UpdatedAt).Exec(ctx)
	return translate(err)
}

// ReplaceConversationIssues deletes the issues of a conversation and inserts issues.
func ReplaceConversationIssues(ctx context.Context, db bun.IDB, orgID, conversationID string, issues []*ConversationIssue) error {
	if _, err := db.NewDelete().Model((*ConversationIssue)(nil)).
		Where("organization_id = ? AND conversation_id = ?", orgID, conversationID).Exec(ctx); err != nil {
		return translate(err)
	}
	if len(issues) == 0 {
		return nil
	}
	_, err := db.NewInsert().Model(&issues).Exec(ctx)
	return translate(err)
}

// OrganizationIssues are every issue of orgID, oldest first.
func OrganizationIssues(ctx context.Context, db bun.IDB, orgID string) ([]*ConversationIssue, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*ConversationIssue
	err := db.NewSelect().Model(&rows).Where("ci.organization_id = ?", orgID).OrderExpr("ci.created_at, ci.id").Scan(ctx)
	return rows, translate(err)
}

// OrganizationIssuesClusters are the clusters of orgID (without counts), oldest first.
func OrganizationIssuesClusters(ctx context.Context, db bun.IDB, orgID string) ([]*IssuesCluster, error) {
	ctx = inOrganization(ctx, orgID)
	var rows []*IssuesCluster
	err := db.NewSelect().Model(&rows).Where("cl.organization_id = ?", orgID).OrderExpr("cl.created_at, cl.id").Scan(ctx)
	return rows, translate(err)
}

// SetIssueCluster places issue id in clusterID.
func SetIssueCluster(ctx context.Context, db bun.IDB, id, clusterID string) error {
	_, err := db.NewUpdate().Model((*ConversationIssue)(nil)).Set("cluster_id = ?", clusterID).Where("id = ?", id).Exec(ctx)
	return translate(err)
}

// SaveIssuesCluster inserts c, or writes its label, summary and updated_at.
func SaveIssuesCluster(ctx context.Context, db bun.IDB, c *IssuesCluster) error {
	_, err := db.NewInsert().Model(c).On("CONFLICT (id, organization_id) DO UPDATE").
		Set("label = EXCLUDED.label, summary = EXCLUDED.summary, updated_at = EXCLUDED.updated_at").Exec(ctx)
	return translate(err)
}

// DeleteEmptyIssuesClusters removes orgID's clusters left with no issue
// (their conversations changed); change requests made for them keep no link.
func DeleteEmptyIssuesClusters(ctx context.Context, db bun.IDB, orgID string) error {
	_, err := db.NewRaw(`DELETE FROM conversation_issue_clusters cl WHERE cl.organization_id = ?
		AND NOT EXISTS (SELECT 1 FROM conversation_issues i WHERE i.cluster_id = cl.id AND i.organization_id = cl.organization_id)`, orgID).Exec(ctx)
	return translate(err)
}

// OrganizationsWithUnprocessedConversations are the organizations with
// conversations due since before dueBefore: their job's enqueue failed, or
// it died.
func OrganizationsWithUnprocessedConversations(ctx context.Context, db bun.IDB, dueBefore time.Time) ([]string, error) {
	var ids []string
	err := db.NewRaw(`SELECT DISTINCT organization_id FROM conversations
		WHERE processed_at IS NULL AND updated_at < ?`, dueBefore).Scan(ctx, &ids)
	return ids, translate(err)
}
