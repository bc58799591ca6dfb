-- Live updates (GraphQL subscriptions, graph/subscription.go). A change
-- records a live event in its own transaction (store.RecordLiveEvent); an
-- insert trigger NOTIFYs docsapi_live with the event's id, which PostgreSQL
-- delivers at commit (never on rollback) to every server process LISTENing,
-- each of which reads the event and hands it to its own subscribers.
CREATE TABLE live_events (
    id                text PRIMARY KEY,
    type              text NOT NULL CHECK (type IN ('content_updated', 'change_request_opened', 'change_request_updated',
                          'change_request_merged', 'comment_posted', 'comment_resolved', 'site_structure_updated')),
    organization_id   text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    -- What the event is about: a space (and its change request, comment,
    -- revision), or a site.
    space_id          text,
    site_id           text,
    change_request_id text,
    comment_id        text,
    revision_id       text,
    -- Who made the change (a user id; NULL when no user did).
    actor_id          text,
    created_at        timestamptz NOT NULL
);
-- Subscribers read an event right after it is recorded, by id; the rows
-- stay as a history of who changed what.
CREATE INDEX live_events_space_idx ON live_events (space_id, created_at) WHERE space_id IS NOT NULL;
CREATE INDEX live_events_site_idx ON live_events (site_id, created_at) WHERE site_id IS NOT NULL;

CREATE FUNCTION docsapi_live_event_recorded() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('docsapi_live', NEW.id);
    RETURN NULL;
END
$$;
CREATE TRIGGER live_events_notify AFTER INSERT ON live_events
    FOR EACH ROW EXECUTE FUNCTION docsapi_live_event_recorded();

-- An integration's events reach its subscribers the same way: the id of the
-- integration_events row (store.RecordEvent) on docsapi_integration_events.
CREATE FUNCTION docsapi_integration_event_recorded() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('docsapi_integration_events', NEW.id);
    RETURN NULL;
END
$$;
CREATE TRIGGER integration_events_notify AFTER INSERT ON integration_events
    FOR EACH ROW EXECUTE FUNCTION docsapi_integration_event_recorded();
