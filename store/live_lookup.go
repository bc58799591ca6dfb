package store

import (
	"context"

	"github.com/uptrace/bun"
)

// Channels the subscriptions' listener (graph/live/hub.go) hears besides the
// events': it keeps caches of its own that must not outlive a change.
const (
	// AccessChannel carries the id of an organization whose collections,
	// grants, teams' members or spaces' placement, level or visibility
	// changed (migration 0034).
	AccessChannel = "docsapi_access"
	// CallersChannel is notified when users, tokens or memberships change
	// (migration 0003; CallerCache listens on it too).
	CallersChannel = callersChannel
)

// GetIntegrationByID reads integration id (the subscriptions' listener
// reads an integration event's integration once for all its subscribers).
func GetIntegrationByID(ctx context.Context, db bun.IDB, id string) (*Integration, error) {
	in := new(Integration)
	return in, translate(db.NewSelect().Model(in).Where("i.id = ?", id).Scan(ctx))
}
