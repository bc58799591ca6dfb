-- Development mode of integrations (PUT INT/dev) and the delivery of their
-- events to the development URL (graph/delivery.go).

-- dev_url is where the integration's events are POSTed while it is set;
-- dev_all extends that to the events of installations on every organization,
-- not only the owner's. signing_nonce, made once, derives the integration's
-- signing secret from a server secret, so no secret is stored here.
ALTER TABLE integrations
    ADD COLUMN dev_url       text,
    ADD COLUMN dev_all       boolean NOT NULL DEFAULT false,
    ADD COLUMN signing_nonce text;

-- deliver: the event was recorded while development mode sent it somewhere;
-- attempts counts the delivery attempts made; next_attempt_at is when the
-- next may start (a running attempt holds it forward as a lease, so an event
-- enqueued twice is sent once per attempt).
ALTER TABLE integration_events
    ADD COLUMN deliver         boolean NOT NULL DEFAULT false,
    ADD COLUMN attempts        integer NOT NULL DEFAULT 0,
    ADD COLUMN next_attempt_at timestamptz;

-- What the periodic sweep looks for: deliveries still pending.
CREATE INDEX integration_events_pending_delivery_idx ON integration_events (next_attempt_at)
    WHERE deliver AND status = 'pending';
