package graph

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/docsapi/docsapi/graph/generated"
	"github.com/docsapi/docsapi/graph/model"
	"github.com/docsapi/docsapi/graph/outbound"
	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/tracing"
)

// Development mode of integrations (PUT /v1/integrations/{name}/dev): while
// the publishing organization's admins have set a development URL, every
// event of the integration (of installations on the owner organization
// only, unless `all`) is POSTed there as JSON by a River job, signed with
// the integration's signing secret, retried with exponential backoff, and
// each attempt is written to the event's trace.
//
// Which events go there is decided when the event is recorded
// (store.RecordEvent, in the change's transaction) and checked again before
// every attempt: turning development mode off, or `all` off, stops the
// deliveries that would now go where they may not.
//
// The signing secret is the integration's own (the reference's
// IntegrationEnvironment.signingSecrets.integration), not one of the secrets
// its publisher stored: it is derived from a server secret and a nonce made
// when development mode is first turned on, and the owner's admins read it
// in Integration.development.signingSecret.

// SignatureHeader carries a delivery's signature: "t=<unix seconds>,v1=<hex
// HMAC-SHA256 of "<t>.<body>">".
const SignatureHeader = "X-GitBook-Signature"

// DeliveryConfig configures deliveries.
type DeliveryConfig struct {
	// Attempts is how many attempts a delivery makes before its event is
	// failed (default 5).
	Attempts int
	// Backoff is the wait after the first failed attempt, doubled after each
	// next one (default 10s: 10s, 20s, 40s, 80s).
	Backoff time.Duration
}

func (c DeliveryConfig) withDefaults() DeliveryConfig {
	if c.Attempts <= 0 {
		c.Attempts = 5
	}
	if c.Backoff <= 0 {
		c.Backoff = 10 * time.Second
	}
	return c
}

// DeliverIntegrationEventArgs is the job delivering an integration event.
type DeliverIntegrationEventArgs struct {
	IntegrationEventID string `json:"integrationEventId"`
}

// Kind names the job in River's table.
func (DeliverIntegrationEventArgs) Kind() string { return "deliver_integration_event" }

// maxDevURL is the reference's limit on tunnelUrl.
const maxDevURL = 256

// ownedIntegration reads an integration the caller administers the
// publishing organization of: 404 when they cannot see it, 403 when they
// see it without administering it.
func (r *Resolver) ownedIntegration(ctx context.Context, name string) (*store.Integration, error) {
	in, err := r.integration(ctx, name)
	if err != nil {
		return nil, err
	}
	// SECURITY: the development URL belongs to the publishing organization.
	if err := requireOrgRole(ctx, in.OrganizationID, store.RoleAdmin, "integration"); err != nil {
		return nil, err
	}
	return in, nil
}

func (r *mutationResolver) SetIntegrationDevelopmentMode(ctx context.Context, name string, input model.IntegrationDevelopmentInput) (bool, error) {
	url, _ := input.URL.ValueOK()
	tunnel, _ := input.TunnelURL.ValueOK()
	switch {
	case url == nil && tunnel == nil:
		return false, Invalid("url", "is required")
	case url == nil:
		url = tunnel
	case tunnel != nil && *tunnel != *url:
		return false, Invalid("tunnelUrl", "names the url another way: it must be the same")
	}
	if err := checkLength("url", *url, 1, maxDevURL); err != nil {
		return false, err
	}
	if _, err := outbound.CheckURL(*url); err != nil {
		return false, Invalid("url", "must be an absolute http or https URL")
	}
	in, err := r.ownedIntegration(ctx, name)
	if err != nil {
		return false, err
	}
	all, _ := input.All.ValueOK()
	if _, err := store.SetIntegrationDevelopment(ctx, r.DB, in.ID, url, all != nil && *all, store.NewSecret()); err != nil {
		return false, orNotFound(err, "integration") // unpublished meanwhile
	}
	return true, nil
}

func (r *mutationResolver) DisableIntegrationDevelopmentMode(ctx context.Context, name string) (bool, error) {
	in, err := r.ownedIntegration(ctx, name)
	if err != nil {
		return false, err
	}
	wasOn, err := store.SetIntegrationDevelopment(ctx, r.DB, in.ID, nil, false, store.NewSecret())
	return wasOn, orNotFound(err, "integration")
}

func (r *integrationResolver) Development(ctx context.Context, in *store.Integration) (*store.IntegrationDevelopment, error) {
	// SECURITY: the URL and the signing secret are the owner's admins' only.
	role, _ := orgRole(ctx, in.OrganizationID, "integration")
	if !role.AtLeast(store.RoleAdmin) {
		return nil, nil
	}
	return store.GetIntegrationDevelopment(ctx, r.DB, in.ID)
}

type integrationDevelopmentResolver struct{ *Resolver }

var _ generated.IntegrationDevelopmentResolver = (*integrationDevelopmentResolver)(nil)

// IntegrationDevelopment resolves the development mode's signing secret.
func (r *Resolver) IntegrationDevelopment() generated.IntegrationDevelopmentResolver {
	return &integrationDevelopmentResolver{r}
}

func (r *integrationDevelopmentResolver) SigningSecret(ctx context.Context, d *store.IntegrationDevelopment) (*string, error) {
	if d.SigningNonce == nil {
		return nil, nil
	}
	s, err := r.signingSecret(ctx, d)
	return &s, err
}

// signingSecret is an integration's signing secret: the HMAC of its id and
// nonce under the server's integration-signing secret, so nothing secret is
// stored with the integration and a new nonce would make a new secret.
func (r *Resolver) signingSecret(ctx context.Context, d *store.IntegrationDevelopment) (string, error) {
	key, err := store.ServerSecret(context.WithoutCancel(ctx), r.DB, "integration-signing")
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(d.ID + ":" + *d.SigningNonce))
	return "whsec_" + hex.EncodeToString(mac.Sum(nil)), nil
}

// Sign is the signature header value of body sent at t under secret.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// EnqueueDeliveries enqueues the delivery jobs of integration events whose
// transaction committed (store.DB.OnDeliveries).
func (r *Resolver) EnqueueDeliveries(ctx context.Context, ids []string) {
	for _, id := range ids {
		r.enqueue(ctx, DeliverIntegrationEventArgs{IntegrationEventID: id})
	}
}

// DeliveriesToSend lists the deliveries pending and due, for the sweep.
func (r *Resolver) DeliveriesToSend(ctx context.Context) ([]string, error) {
	return store.DeliveriesDue(ctx, r.DB)
}

// DeliverIntegrationEvent makes the next delivery attempt of an integration
// event, if one is due and no other job is making it. It answers how long to
// wait before the next attempt (0: no more attempts).
func (r *Resolver) DeliverIntegrationEvent(ctx context.Context, id string) (time.Duration, error) {
	cfg := r.Delivery.withDefaults()
	timeout := r.Outbound.Timeout()
	claim, err := store.ClaimDelivery(ctx, r.DB, id, timeout+time.Minute)
	if err != nil || claim == nil {
		return 0, err
	}
	ev, dev := claim.Event, claim.Dev
	line := &store.IntegrationEventLog{IntegrationEventID: ev.ID, Attempt: &claim.Attempt, LoggedAt: r.now()}
	// SECURITY: checked again at each attempt: the owner may have turned
	// development mode off, or limited it to its own organization.
	if dev.URL == nil || (!dev.All && ev.OrganizationID != dev.OrganizationID) || dev.SigningNonce == nil {
		line.Level, line.Message = store.EventLogInfo, "not delivered: development mode no longer sends this event"
		return 0, store.FinishDeliveryAttempt(ctx, r.DB, line, "", 0, false)
	}
	secret, err := r.signingSecret(ctx, dev)
	if err != nil {
		return 0, err
	}
	body, err := json.Marshal(ev.Payload())
	if err != nil {
		return 0, err
	}
	started := time.Now()
	code, sendErr := r.traceSend(ctx, *dev.URL, secret, ev, claim.Attempt, body)
	took := time.Since(started).Round(time.Millisecond)
	if sendErr == nil {
		line.Level, line.Message = store.EventLogInfo, fmt.Sprintf("attempt %d: delivered: the receiver answered %d in %s", claim.Attempt, code, took)
		return 0, store.FinishDeliveryAttempt(ctx, r.DB, line, store.EventSuccess, 0, true)
	}
	what := deliveryError(sendErr, code, timeout)
	if claim.Attempt >= cfg.Attempts {
		line.Level, line.Message = store.EventLogError, fmt.Sprintf("attempt %d: %s (%s); failed after %d attempts", claim.Attempt, what, took, claim.Attempt)
		return 0, store.FinishDeliveryAttempt(ctx, r.DB, line, store.EventFailed, 0, true)
	}
	wait := cfg.Backoff << (claim.Attempt - 1)
	line.Level, line.Message = store.EventLogWarn, fmt.Sprintf("attempt %d: %s (%s); next attempt in %s", claim.Attempt, what, took, wait)
	return wait, store.FinishDeliveryAttempt(ctx, r.DB, line, "", wait, true)
}

// traceSend is send in a span of its own (with tracing on, under the
// job's), the client span of the webhook: the receiver is sent its trace
// context (traceparent), so its own spans continue the delivery's.
func (r *Resolver) traceSend(ctx context.Context, url, secret string, ev *store.IntegrationEvent, attempt int, body []byte) (int, error) {
	ctx, span := tracing.Child(ctx, "deliver integration event", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(tracing.Organization.String(ev.OrganizationID), attribute.String("docsapi.integration_event", ev.ID),
			attribute.Int("docsapi.delivery.attempt", attempt), semconv.HTTPRequestMethodKey.String(http.MethodPost)))
	defer span.End()
	code, err := r.send(ctx, url, secret, ev, attempt, body)
	if code != 0 {
		span.SetAttributes(semconv.HTTPResponseStatusCode(code))
	}
	if err != nil {
		span.SetStatus(codes.Error, deliveryError(err, code, r.Outbound.Timeout()))
	}
	return code, err
}

// send POSTs body, signed, through the guarded client; a 2xx answer is a
// delivery. It answers the status code (0: none).
func (r *Resolver) send(ctx context.Context, url, secret string, ev *store.IntegrationEvent, attempt int, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, outbound.ErrBadURL
	}
	// W3C trace context: nothing without a span in ctx.
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "docsapi-integration-delivery")
	req.Header.Set(SignatureHeader, Sign(secret, time.Now(), body))
	req.Header.Set("X-GitBook-Event-Id", ev.ID)
	req.Header.Set("X-GitBook-Delivery-Attempt", strconv.Itoa(attempt))
	resp, err := r.Outbound.HTTP.Do(req)
	if err != nil {
		return 0, outbound.Classify(err)
	}
	defer resp.Body.Close()
	// The answer is not kept; reading a little of it lets the connection be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, &outbound.StatusError{Code: resp.StatusCode}
	}
	return resp.StatusCode, nil
}

// deliveryError says what went wrong, in words fit for the event's trace
// (read by the installation's admins): never the raw error.
func deliveryError(err error, code int, timeout time.Duration) string {
	switch {
	case errors.Is(err, outbound.ErrStatus):
		return fmt.Sprintf("the receiver answered %d", code)
	case errors.Is(err, outbound.ErrTimeout):
		return fmt.Sprintf("no answer within %s", timeout)
	case errors.Is(err, outbound.ErrBlockedAddress):
		return "the URL's address is not allowed"
	case errors.Is(err, outbound.ErrUnreachable):
		return "the receiver is unreachable"
	case errors.Is(err, outbound.ErrBadURL):
		return "the URL is not an http(s) URL"
	}
	return "the request failed"
}
