package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Every process LISTENs for what the others change: callers (the caller
// cache), organizations' access (the subscriptions' access snapshots),
// live events and integration events (subscriptions). The store raises
// these notifications itself, in the transaction of the change, on the
// connection it writes through, rather than by triggers: on a Citus
// cluster a trigger runs on the worker that holds the row, where no
// process listens, and a worker may not even prepare a transaction that
// notified (PREPARE TRANSACTION refuses NOTIFY), while the coordinator,
// which every process talks to, delivers them as one PostgreSQL does: at
// commit, to every listener, never for a transaction rolled back.

// notification is one NOTIFY.
type notification struct{ channel, payload string }

// notifyAtCommit raises a notification on channel with payload when the
// transaction of ctx (RunInTx) commits, or at once outside one (a single
// statement, already committed).
func notifyAtCommit(ctx context.Context, db bun.IDB, channel, payload string) error {
	if w, ok := ctx.Value(txWritesKey{}).(*txWrites); ok {
		w.mu.Lock()
		defer w.mu.Unlock()
		n := notification{channel, payload}
		for _, m := range w.notifications {
			if m == n {
				return nil // PostgreSQL folds them anyway
			}
		}
		w.notifications = append(w.notifications, n)
		return nil
	}
	d, _ := db.(*DB)
	sent := payload
	if d != nil {
		sent = withOrigin(channel, payload, d.origin)
	}
	if _, err := db.ExecContext(ctx, "SELECT pg_notify(?, ?)", channel, sent); err != nil {
		return translate(err)
	}
	if d != nil && d.OnNotified != nil {
		d.OnNotified(channel, payload)
	}
	return nil
}

// sendNotifications raises, in tx, the notifications queued for its commit:
// one statement whatever their number.
func (w *txWrites) sendNotifications(ctx context.Context, tx bun.Tx) error {
	w.mu.Lock()
	pending := w.notifications
	w.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	channels := make([]string, len(pending))
	payloads := make([]string, len(pending))
	for i, n := range pending {
		channels[i], payloads[i] = n.channel, withOrigin(n.channel, n.payload, w.origin)
	}
	_, err := tx.ExecContext(ctx, "SELECT pg_notify(c, p) FROM unnest(?::text[], ?::text[]) AS n(c, p)",
		pgdialect.Array(channels), pgdialect.Array(payloads))
	return err
}

// AccessChanged tells every process that the access to orgID's content
// changed (its collections, grants, teams' members, or its spaces'
// placement, level, visibility or deletion), at the commit of ctx's
// transaction. Every store function that writes those calls it.
func AccessChanged(ctx context.Context, db bun.IDB, orgID string) error {
	return notifyAtCommit(ctx, db, AccessChannel, orgID)
}

// everyOrganization is the AccessChannel payload of a change that may
// touch any organization's access (a user deleted: their team
// memberships go with them).
const everyOrganization = "*"

// EveryOrganization tells whether an AccessChannel payload names every
// organization rather than one.
func EveryOrganization(payload string) bool { return payload == everyOrganization }

// eventPayload is the payload of a live or integration event's
// notification: its organization and id, so that the listener reads it
// from the organization's shard alone.
func eventPayload(orgID, id string) string { return orgID + "/" + id }

// ParseEventPayload splits an event notification's payload into its
// organization and id.
func ParseEventPayload(payload string) (orgID, id string, ok bool) {
	return strings.Cut(payload, "/")
}

// PublishedChannel carries what changes what visitors of published sites
// read: a site (its row, its structure, its customization, its share links
// and visitor key: every such write takes the site's lock or writes its
// row) or a space (its row: its title, its live revision, its deletion).
// Payloads are "site/<organization>/<site>" and "space/<organization>/<space>"
// (ParsePublishedPayload). Every process's reader drops what it rendered
// from them (graph/published_changes.go).
const PublishedChannel = "docsapi_published"

// siteChanged and spaceChanged raise the PublishedChannel notification of
// a change to a site or a space, at the commit of ctx's transaction.
func siteChanged(ctx context.Context, db bun.IDB, orgID, siteID string) error {
	return notifyAtCommit(ctx, db, PublishedChannel, "site/"+orgID+"/"+siteID)
}

func spaceChanged(ctx context.Context, db bun.IDB, orgID, spaceID string) error {
	return notifyAtCommit(ctx, db, PublishedChannel, "space/"+orgID+"/"+spaceID)
}

// PublishedChange is what a PublishedChannel payload says.
type PublishedChange struct {
	Kind  string // "site" or "space"
	OrgID string
	ID    string
	// Origin is the DB.Origin of the DB that raised it; empty when heard
	// through DB.OnNotified, from this process itself.
	Origin string
}

// ParsePublishedPayload reads a PublishedChannel payload:
// {kind}/{organization}/{id}, then /{origin} when PostgreSQL delivers it.
func ParsePublishedPayload(payload string) (PublishedChange, bool) {
	parts := strings.Split(payload, "/")
	if len(parts) != 3 && len(parts) != 4 {
		return PublishedChange{}, false
	}
	c := PublishedChange{Kind: parts[0], OrgID: parts[1], ID: parts[2]}
	if len(parts) == 4 {
		c.Origin = parts[3]
	}
	return c, (c.Kind == "site" || c.Kind == "space") && c.ID != ""
}

// withOrigin is the payload PostgreSQL delivers of a notification raised
// by the DB of origin: a PublishedChannel one names it, for that DB's
// listener hears its own changes at commit (OnNotified) and need not hear
// them again. Hearing them twice is harmless but costly: the second time,
// after pages were made of the change, drops them for nothing.
func withOrigin(channel, payload, origin string) string {
	if channel != PublishedChannel || origin == "" {
		return payload
	}
	return payload + "/" + origin
}

// newOrigin names a DB among those that notify each other: random, so
// that two processes (or two DBs of one test) never share one.
func newOrigin() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Origin is the name this DB gives itself in the PublishedChannel payloads
// it raises (ParsePublishedPayload).
func (d *DB) Origin() string { return d.origin }
