-- Collections organize an organization's spaces in a tree. The children of a
-- container (the organization's root, or a collection) — collections and
-- spaces alike — share one order, by position. Changes to a container's
-- order happen under a lock on the organization's row.
CREATE TABLE collections (
    id              text PRIMARY KEY,
    organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    parent_id       text REFERENCES collections (id),
    title           text NOT NULL,
    description     text,
    -- A role name, 'inherit', or NULL for "guest" (no access by default).
    -- No column default: NULL is a meaningful level (guest), and bun writes
    -- DEFAULT for a nil value in an UPDATE. Inserts always give one.
    default_level   text,
    position        integer NOT NULL DEFAULT 0,
    created_by      text REFERENCES users (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
CREATE INDEX collections_organization_idx ON collections (organization_id, created_at, id);
CREATE INDEX collections_parent_idx ON collections (parent_id, position, id);

ALTER TABLE spaces ADD COLUMN position integer NOT NULL DEFAULT 0;
ALTER TABLE spaces ADD CONSTRAINT spaces_parent_fkey FOREIGN KEY (parent_id) REFERENCES collections (id);
CREATE INDEX spaces_parent_idx ON spaces (parent_id, position, id) WHERE deleted_at IS NULL;
