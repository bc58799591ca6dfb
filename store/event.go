package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/uptrace/bun"
)

// Events: what happened in an organization, recorded by
// RecordEvent in the transaction of the change itself, and handed to every
// installation the event concerns as an IntegrationEvent with a delivery
// status and log.

// Event is one happening.
type Event struct {
	bun.BaseModel `bun:"table:events,alias:ev"`

	ID             string          `bun:"id,pk"`
	Type           string          `bun:"type"`
	OrganizationID string          `bun:"organization_id"`
	SpaceID        *string         `bun:"space_id"`
	SiteID         *string         `bun:"site_id"`
	ActorID        *string         `bun:"actor_id"`
	Payload        json.RawMessage `bun:"payload,type:jsonb"`
	CreatedAt      time.Time       `bun:"created_at"`
}

// IntegrationEvent is an event as one installation receives it.
type IntegrationEvent struct {
	bun.BaseModel `bun:"table:integration_events,alias:ie"`

	ID             string                `bun:"id,pk"`
	EventID        string                `bun:"event_id"`
	IntegrationID  string                `bun:"integration_id"`
	InstallationID *string               `bun:"installation_id"`
	OrganizationID string                `bun:"organization_id"`
	Status         IntegrationEventState `bun:"status"`
	CreatedAt      time.Time             `bun:"created_at"`
	Seq            int64                 `bun:"seq,nullzero"`
	// Deliver: development mode sends this event to the integration's
	// development URL (graph/delivery.go).
	Deliver bool `bun:"deliver"`

	// Joined in its organization as well: on a Citus cluster a join of
	// two tenant tables must name the distribution column on both sides.
	Event *Event `bun:"rel:belongs-to,join:event_id=id,join:organization_id=organization_id"`
}

// IntegrationEventLog is a line of an integration event's delivery log.
type IntegrationEventLog struct {
	bun.BaseModel `bun:"table:integration_event_logs,alias:iel"`

	IntegrationEventID string        `bun:"integration_event_id,pk"`
	Seq                int64         `bun:"seq,pk,autoincrement"`
	OrganizationID     string        `bun:"organization_id"`
	Attempt            *int          `bun:"attempt"`
	Level              EventLogLevel `bun:"level"`
	Message            string        `bun:"message"`
	LoggedAt           time.Time     `bun:"logged_at"`
}

// Payload is what the installation receives: the event's own members with
// its eventId, type and installationId.
func (e *IntegrationEvent) Payload() map[string]any {
	out := map[string]any{}
	if e.Event != nil {
		_ = json.Unmarshal(e.Event.Payload, &out)
		out["eventId"], out["type"] = e.Event.ID, e.Event.Type
	}
	if e.InstallationID != nil {
		out["installationId"] = *e.InstallationID
	}
	return out
}

// NewEvent describes an event to record. Who receives it:
//   - with InstallationID, that installation only (its own setup or deletion);
//   - with SpaceID, the organization's active installations that cover the
//     space (all spaces selected, or installed on it);
//   - with SiteID, likewise for the site;
//   - else every active installation of the organization.
type NewEvent struct {
	Type           string
	OrganizationID string
	InstallationID string
	SpaceID        string
	SiteID         string
	// ActorID is the user who made the change ("" for none).
	ActorID string
	Payload map[string]any
	At      time.Time
}

// noDeliveryTarget is the log line of an event no one delivers: delivery
// needs a target (development mode) the integration does not have.
const noDeliveryTarget = "not delivered: no delivery target is configured for this integration"

// queuedForDelivery is the first log line of an event development mode sends.
const queuedForDelivery = "queued for delivery to the integration's development URL"

// RecordEvent records e in db, which must be the transaction of the change
// the event tells of, and hands it to the installations it concerns. It
// returns the event's id.
func RecordEvent(ctx context.Context, db bun.IDB, e NewEvent) (string, error) {
	payload, err := json.Marshal(e.Payload)
	if err != nil {
		return "", err
	}
	ev := &Event{ID: NewID(), Type: e.Type, OrganizationID: e.OrganizationID, Payload: payload, CreatedAt: e.At}
	if e.SpaceID != "" {
		ev.SpaceID = &e.SpaceID
	}
	if e.SiteID != "" {
		ev.SiteID = &e.SiteID
	}
	if e.ActorID != "" {
		ev.ActorID = &e.ActorID
	}
	if _, err := db.NewInsert().Model(ev).Exec(ctx); err != nil {
		return "", translate(err)
	}
	// Each target says whether the integration's development mode sends it
	// the event: SECURITY: only events of the owner organization's
	// installations, unless the owner asked for all (dev_all).
	var targets []struct {
		ID             string `bun:"id"`
		IntegrationID  string `bun:"integration_id"`
		OrganizationID string `bun:"organization_id"`
		Deliver        bool   `bun:"deliver"`
	}
	q := db.NewSelect().TableExpr("integration_installations AS ii").Column("ii.id", "ii.integration_id", "ii.organization_id").
		ColumnExpr("(SELECT i.dev_url IS NOT NULL AND (i.dev_all OR i.organization_id = ii.organization_id) FROM integrations i WHERE i.id = ii.integration_id) AS deliver")
	switch {
	case e.InstallationID != "":
		q = q.Where("ii.id = ?", e.InstallationID)
	case e.SpaceID != "":
		q = q.Where("ii.organization_id = ? AND ii.status = 'active'", e.OrganizationID).
			Where("(ii.space_selection = 'all' OR EXISTS (SELECT 1 FROM integration_space_installations s WHERE s.installation_id = ii.id AND s.organization_id = ii.organization_id AND s.space_id = ?))", e.SpaceID)
	case e.SiteID != "":
		q = q.Where("ii.organization_id = ? AND ii.status = 'active'", e.OrganizationID).
			Where("(ii.site_selection = 'all' OR EXISTS (SELECT 1 FROM integration_site_installations s WHERE s.installation_id = ii.id AND s.organization_id = ii.organization_id AND s.site_id = ?))", e.SiteID)
	default:
		q = q.Where("ii.organization_id = ? AND ii.status = 'active'", e.OrganizationID)
	}
	if err := q.Scan(ctx, &targets); err != nil {
		return "", translate(err)
	}
	if len(targets) == 0 {
		return ev.ID, nil
	}
	rows := make([]*IntegrationEvent, len(targets))
	logs := make([]*IntegrationEventLog, len(targets))
	var deliveries []string
	for i, t := range targets {
		rows[i] = &IntegrationEvent{ID: NewID(), EventID: ev.ID, IntegrationID: t.IntegrationID, InstallationID: &t.ID,
			OrganizationID: t.OrganizationID, Status: EventPending, CreatedAt: e.At, Deliver: t.Deliver}
		msg := noDeliveryTarget
		if t.Deliver {
			msg = queuedForDelivery
			deliveries = append(deliveries, rows[i].ID)
		}
		logs[i] = &IntegrationEventLog{IntegrationEventID: rows[i].ID, OrganizationID: t.OrganizationID, Level: EventLogInfo, Message: msg, LoggedAt: e.At}
	}
	if _, err := db.NewInsert().Model(&rows).Exec(ctx); err != nil {
		return "", translate(err)
	}
	if _, err := db.NewInsert().Model(&logs).Exec(ctx); err != nil {
		return "", translate(err)
	}
	for _, row := range rows {
		if err := notifyAtCommit(ctx, db, IntegrationEventsChannel, eventPayload(row.OrganizationID, row.ID)); err != nil {
			return "", err
		}
	}
	afterCommitDeliver(ctx, deliveries)
	return ev.ID, nil
}

// ListIntegrationEvents pages through an integration's events on the
// organizations orgIDs, newest first.
func ListIntegrationEvents(ctx context.Context, db bun.IDB, integrationID string, orgIDs []string, p Page) ([]*IntegrationEvent, error) {
	var rows []*IntegrationEvent
	if len(orgIDs) == 0 {
		return rows, nil
	}
	q := db.NewSelect().Model(&rows).Relation("Event").
		Where("ie.integration_id = ? AND ie.organization_id IN (?)", integrationID, bun.List(orgIDs))
	return rows, p.scan(ctx, bySeq(p, q, "ie.seq", true))
}

// GetIntegrationEvent reads event id of an integration.
func GetIntegrationEvent(ctx context.Context, db bun.IDB, integrationID, id string) (*IntegrationEvent, error) {
	e := new(IntegrationEvent)
	err := db.NewSelect().Model(e).Relation("Event").Where("ie.id = ? AND ie.integration_id = ?", id, integrationID).Scan(ctx)
	return e, translate(err)
}

// IntegrationEventLogs is the delivery log of an integration event, in order.
func IntegrationEventLogs(ctx context.Context, db bun.IDB, id string) ([]*IntegrationEventLog, error) {
	var rows []*IntegrationEventLog
	err := db.NewSelect().Model(&rows).Where("iel.integration_event_id = ?", id).OrderExpr("iel.seq").Scan(ctx)
	return rows, translate(err)
}

// RecordSpaceContentUpdated records space_content_updated: the primary
// content of a space is now revisionID (a merge, an import).
func RecordSpaceContentUpdated(ctx context.Context, db bun.IDB, s *Space, revisionID, actorID string, at time.Time) error {
	_, err := RecordEvent(ctx, db, NewEvent{Type: "space_content_updated", OrganizationID: s.OrganizationID, SpaceID: s.ID, ActorID: actorID,
		Payload: map[string]any{"spaceId": s.ID, "revisionId": revisionID}, At: at})
	return err
}

// RecordSpaceVisibilityUpdated records, in the change's transaction, that a
// space's visibility changed (the reference's space_visibility_updated).
func RecordSpaceVisibilityUpdated(ctx context.Context, db bun.IDB, s *Space, previous ContentVisibility, actorID string, at time.Time) error {
	_, err := RecordEvent(ctx, db, NewEvent{Type: "space_visibility_updated", OrganizationID: s.OrganizationID, SpaceID: s.ID, ActorID: actorID,
		Payload: map[string]any{"spaceId": s.ID, "previousVisibility": previous, "visibility": s.Visibility}, At: at})
	return err
}
