-- Integrations (spec 4.14): published by an organization under a global
-- name, installed on organizations and, within them, on spaces and sites.
CREATE TABLE integrations (
    id                      text PRIMARY KEY,
    name                    text NOT NULL UNIQUE,
    organization_id         text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    version                 integer NOT NULL,
    runtime                 text NOT NULL,
    title                   text NOT NULL,
    description             text NOT NULL,
    summary                 text NOT NULL,
    visibility              text NOT NULL,
    target                  text NOT NULL,
    scopes                  text[] NOT NULL,
    categories              text[] NOT NULL,
    blocks                  jsonb NOT NULL,
    content_sources         jsonb NOT NULL,
    configurations          jsonb NOT NULL,
    external_links          jsonb NOT NULL,
    -- Icon and preview images live in the blob store: {sha256, contentType}.
    icon                    jsonb,
    preview_images          jsonb NOT NULL,
    script                  text NOT NULL,
    -- The secrets map as JSON, sealed with AES-256-GCM under the server key
    -- (nonce followed by ciphertext); never sent back.
    secrets                 bytea,
    content_security_policy jsonb,
    created_at              timestamptz NOT NULL,
    updated_at              timestamptz NOT NULL
);
CREATE INDEX integrations_org_idx ON integrations (organization_id);

CREATE TABLE integration_installations (
    id              text PRIMARY KEY,
    integration_id  text NOT NULL REFERENCES integrations (id) ON DELETE CASCADE,
    organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    status          text NOT NULL CHECK (status IN ('active', 'pending', 'paused')),
    space_selection text NOT NULL CHECK (space_selection IN ('all', 'selected')),
    site_selection  text NOT NULL CHECK (site_selection IN ('all', 'selected')),
    configuration   jsonb NOT NULL,
    external_ids    text[] NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    UNIQUE (integration_id, organization_id)
);
CREATE INDEX integration_installations_org_idx ON integration_installations (organization_id);

-- Installations of an organization's installation on its spaces and sites.
CREATE TABLE integration_space_installations (
    installation_id text NOT NULL REFERENCES integration_installations (id) ON DELETE CASCADE,
    space_id        text NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    status          text NOT NULL CHECK (status IN ('active', 'pending', 'paused')),
    configuration   jsonb NOT NULL,
    external_ids    text[] NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    PRIMARY KEY (installation_id, space_id)
);
CREATE INDEX integration_space_installations_space_idx ON integration_space_installations (space_id);

CREATE TABLE integration_site_installations (
    installation_id text NOT NULL REFERENCES integration_installations (id) ON DELETE CASCADE,
    site_id         text NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    status          text NOT NULL CHECK (status IN ('active', 'pending', 'paused')),
    configuration   jsonb NOT NULL,
    external_ids    text[] NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    PRIMARY KEY (installation_id, site_id)
);
CREATE INDEX integration_site_installations_site_idx ON integration_site_installations (site_id);

-- Events: what happened, written in the transaction of the change itself
-- (store.RecordEvent), so an event exists exactly when its change does.
CREATE TABLE events (
    id              text PRIMARY KEY,
    type            text NOT NULL,
    organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    space_id        text,
    site_id         text,
    -- Who made the change (a user id; NULL when no user did).
    actor_id        text,
    -- The type's own payload members (eventId, type and installationId are
    -- added per integration when read).
    payload         jsonb NOT NULL,
    created_at      timestamptz NOT NULL
);

-- An event as one installation receives it: one row per installation the
-- event concerns, with its delivery status. The installation may be gone
-- since (its own deletion event), hence SET NULL and the organization kept.
CREATE TABLE integration_events (
    id              text PRIMARY KEY,
    event_id        text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    integration_id  text NOT NULL REFERENCES integrations (id) ON DELETE CASCADE,
    installation_id text REFERENCES integration_installations (id) ON DELETE SET NULL,
    organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    -- pending until a delivery succeeds (success) or its last attempt fails (failed).
    status          text NOT NULL CHECK (status IN ('pending', 'success', 'failed')),
    created_at      timestamptz NOT NULL,
    -- The order events happened in, even within one instant.
    seq             bigserial NOT NULL
);
CREATE INDEX integration_events_integration_idx ON integration_events (integration_id, seq);

-- The delivery log of an integration event, one line per step: delivery
-- jobs append their attempts here; GET INT/events/{eventId} shows it as the
-- trace.
CREATE TABLE integration_event_logs (
    integration_event_id text NOT NULL REFERENCES integration_events (id) ON DELETE CASCADE,
    seq                  bigserial,
    attempt              integer,
    level                text NOT NULL CHECK (level IN ('debug', 'info', 'warn', 'error')),
    message              text NOT NULL,
    logged_at            timestamptz NOT NULL,
    PRIMARY KEY (integration_event_id, seq)
);
