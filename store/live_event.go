package store

import (
	"context"
	"io"
	"time"

	"github.com/uptrace/bun"
)

// Live events are what GraphQL subscriptions deliver (graph/subscription.go):
// a space's content and change requests and comments changed, a site's
// structure changed. Each is recorded in the transaction of the change it
// tells of, which NOTIFYs LiveChannel with the event's organization and id
// at commit (notify.go), and each server process reads the event and hands
// it to its subscribers.

// The channels the notifications travel on; the payload is an id.
const (
	// LiveChannel carries live_events rows: "<organization id>/<id>"
	// (ParseEventPayload).
	LiveChannel = "docsapi_live"
	// IntegrationEventsChannel carries integration_events rows, as
	// LiveChannel does.
	IntegrationEventsChannel = "docsapi_integration_events"
)

// LiveEventType is what a live event tells of (GraphQL LiveEventType).
type LiveEventType string

// Live event types.
const (
	LiveContentUpdated       LiveEventType = "content_updated"
	LiveChangeRequestOpened  LiveEventType = "change_request_opened"
	LiveChangeRequestUpdated LiveEventType = "change_request_updated"
	LiveChangeRequestMerged  LiveEventType = "change_request_merged"
	LiveCommentPosted        LiveEventType = "comment_posted"
	LiveCommentResolved      LiveEventType = "comment_resolved"
	LiveSiteStructureUpdated LiveEventType = "site_structure_updated"
)

// AllLiveEventTypes lists the live event types.
var AllLiveEventTypes = []LiveEventType{LiveContentUpdated, LiveChangeRequestOpened, LiveChangeRequestUpdated,
	LiveChangeRequestMerged, LiveCommentPosted, LiveCommentResolved, LiveSiteStructureUpdated}

func (v *LiveEventType) UnmarshalGQL(x any) error {
	return unmarshalEnum(v, x, "LiveEventType", AllLiveEventTypes)
}
func (v LiveEventType) MarshalGQL(w io.Writer) { marshalEnum(w, v) }

// LiveEvent is one change as subscribers see it.
type LiveEvent struct {
	bun.BaseModel `bun:"table:live_events,alias:le"`

	ID              string        `bun:"id,pk"`
	Type            LiveEventType `bun:"type"`
	OrganizationID  string        `bun:"organization_id"`
	SpaceID         *string       `bun:"space_id"`
	SiteID          *string       `bun:"site_id"`
	ChangeRequestID *string       `bun:"change_request_id"`
	CommentID       *string       `bun:"comment_id"`
	RevisionID      *string       `bun:"revision_id"`
	ActorID         *string       `bun:"actor_id"`
	CreatedAt       time.Time     `bun:"created_at"`
}

// RecordLiveEvent records e (its ID is set here) in db, which must be the
// transaction of the change the event tells of: subscribers hear of it when,
// and only if, the change commits.
func RecordLiveEvent(ctx context.Context, db bun.IDB, e *LiveEvent) error {
	e.ID = NewID()
	if _, err := db.NewInsert().Model(e).Exec(ctx); err != nil {
		return translate(err)
	}
	return notifyAtCommit(ctx, db, LiveChannel, eventPayload(e.OrganizationID, e.ID))
}

// GetLiveEvent reads live event id of organization orgID.
func GetLiveEvent(ctx context.Context, db bun.IDB, orgID, id string) (*LiveEvent, error) {
	ctx = inOrganization(ctx, orgID)
	e := new(LiveEvent)
	return e, translate(db.NewSelect().Model(e).Where("le.id = ? AND le.organization_id = ?", id, orgID).Scan(ctx))
}

// GetIntegrationEventByID reads integration event id of organization
// orgID with its event, whatever its integration.
func GetIntegrationEventByID(ctx context.Context, db bun.IDB, orgID, id string) (*IntegrationEvent, error) {
	ctx = inOrganization(ctx, orgID)
	e := new(IntegrationEvent)
	return e, translate(db.NewSelect().Model(e).Relation("Event").Where("ie.id = ? AND ie.organization_id = ?", id, orgID).Scan(ctx))
}

// ListenOnce takes a connection out of the pool for good (a connection that
// has LISTENed is closed, never handed to someone else), LISTENs on
// channels, calls ready, then handle for each notification, until ctx ends
// or the connection fails: its error says which.
func (db *DB) ListenOnce(ctx context.Context, channels []string, ready func(), handle func(channel, payload string)) error {
	pooled, err := db.Pool.Acquire(ctx)
	if err != nil {
		return err
	}
	conn := pooled.Hijack()
	defer conn.Close(context.Background())
	for _, ch := range channels {
		if _, err := conn.Exec(ctx, "LISTEN "+ch); err != nil {
			return err
		}
	}
	ready()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		handle(n.Channel, n.Payload)
	}
}

// PruneLiveEvents deletes the live events recorded before t; it returns how
// many. Subscribers read an event right after it is recorded, so old ones
// are history only.
func PruneLiveEvents(ctx context.Context, db bun.IDB, t time.Time) (int64, error) {
	res, err := db.NewDelete().Model((*LiveEvent)(nil)).Where("created_at < ?", t).Exec(ctx)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}
