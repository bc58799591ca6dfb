package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Delivery of integration events in development mode (graph/delivery.go):
// the integration's development URL, and the claims and attempts of the
// delivery jobs on integration_events.

// IntegrationDevelopment is an integration's development mode: the columns
// of integrations that PUT and DELETE /v1/integrations/{name}/dev change,
// kept out of Integration so that publishing a new version leaves them
// alone.
type IntegrationDevelopment struct {
	bun.BaseModel `bun:"table:integrations,alias:i"`

	ID             string  `bun:"id,pk"`
	OrganizationID string  `bun:"organization_id"`
	URL            *string `bun:"dev_url"`
	All            bool    `bun:"dev_all"`
	// SigningNonce derives the integration's signing secret (graph/delivery.go).
	SigningNonce *string `bun:"signing_nonce"`
}

// GetIntegrationDevelopment reads the development mode of integration id.
func GetIntegrationDevelopment(ctx context.Context, db bun.IDB, id string) (*IntegrationDevelopment, error) {
	d := new(IntegrationDevelopment)
	return d, translate(db.NewSelect().Model(d).Where("i.id = ?", id).Scan(ctx))
}

// SetIntegrationDevelopment turns development mode on (url not nil) or off,
// keeping the signing nonce once made (nonce is used when there is none). It
// reports whether development mode was on before.
func SetIntegrationDevelopment(ctx context.Context, db bun.IDB, id string, url *string, all bool, nonce string) (bool, error) {
	var wasOn bool
	err := RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewSelect().Table("integrations").ColumnExpr("dev_url IS NOT NULL").Where("id = ?", id).For("NO KEY UPDATE").Scan(ctx, &wasOn); err != nil {
			return err
		}
		_, err := tx.NewUpdate().Table("integrations").Set("dev_url = ?, dev_all = ?", url, all && url != nil).
			Set("signing_nonce = COALESCE(signing_nonce, ?)", nonce).Where("id = ?", id).Exec(ctx)
		return err
	})
	return wasOn, translate(err)
}

// DeliveryClaim is an attempt a delivery job may make now: the event, the
// attempt's number, and the integration's development mode at this moment.
type DeliveryClaim struct {
	Event   *IntegrationEvent
	Attempt int
	Dev     *IntegrationDevelopment
}

// ClaimDelivery claims the next delivery attempt of integration event id,
// holding it for lease (a job that dies mid-attempt leaves it to the sweep
// after the lease). Nothing to claim (nil): the event is delivered, failed,
// not for delivery, not due yet, or another job holds it.
func ClaimDelivery(ctx context.Context, db bun.IDB, id string, lease time.Duration) (*DeliveryClaim, error) {
	var attempt int
	err := db.NewRaw(`UPDATE integration_events SET attempts = attempts + 1, next_attempt_at = now() + ? * interval '1 millisecond'
		WHERE id = ? AND deliver AND status = 'pending' AND (next_attempt_at IS NULL OR next_attempt_at <= now())
		RETURNING attempts`, lease.Milliseconds(), id).Scan(ctx, &attempt)
	if err != nil {
		err = translate(err)
		if err == ErrNotFound {
			return nil, nil
		}
		return nil, err
	}
	e := new(IntegrationEvent)
	if err := db.NewSelect().Model(e).Relation("Event").Where("ie.id = ?", id).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	dev, err := GetIntegrationDevelopment(ctx, db, e.IntegrationID)
	if err != nil {
		return nil, err
	}
	return &DeliveryClaim{Event: e, Attempt: attempt, Dev: dev}, nil
}

// FinishDeliveryAttempt writes an attempt's log line and its outcome: status
// success or failed ends the delivery; "" leaves it pending, due again in
// retryIn. deliver false takes the event out of delivery (development mode
// was turned off), leaving its status.
func FinishDeliveryAttempt(ctx context.Context, db bun.IDB, line *IntegrationEventLog, status IntegrationEventState, retryIn time.Duration, deliver bool) error {
	return RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		if err := inParentOrganization(ctx, tx, &line.OrganizationID, "integration_events", line.IntegrationEventID); err != nil {
			return err
		}
		if _, err := tx.NewInsert().Model(line).Returning("seq").Exec(ctx); err != nil {
			return err
		}
		q := tx.NewUpdate().Table("integration_events").Set("next_attempt_at = now() + ? * interval '1 millisecond'", retryIn.Milliseconds()).
			Set("deliver = ?", deliver).Where("id = ?", line.IntegrationEventID)
		if status != "" {
			q = q.Set("status = ?", status)
		}
		_, err := q.Exec(ctx)
		return err
	})
}

// DeliveriesDue lists the integration events whose delivery is pending and
// due: the sweep enqueues them again (an enqueue lost after a commit, a job
// that died mid-attempt).
func DeliveriesDue(ctx context.Context, db bun.IDB) ([]string, error) {
	var ids []string
	err := db.NewSelect().Table("integration_events").Column("id").
		Where("deliver AND status = 'pending' AND (next_attempt_at IS NULL OR next_attempt_at <= now())").
		OrderExpr("next_attempt_at NULLS FIRST").Limit(1000).Scan(ctx, &ids)
	return ids, translate(err)
}

// afterCommitDeliver notes integration events to deliver once the
// transaction of ctx (RunInTx) commits: RunInTx hands them to
// DB.OnDeliveries then. Outside RunInTx nothing is noted; the sweep finds
// them.
func afterCommitDeliver(ctx context.Context, ids []string) {
	if len(ids) == 0 {
		return
	}
	if w, ok := ctx.Value(txWritesKey{}).(*txWrites); ok {
		w.mu.Lock()
		w.deliveries = append(w.deliveries, ids...)
		w.mu.Unlock()
	}
}
