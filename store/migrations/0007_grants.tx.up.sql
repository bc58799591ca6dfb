-- Grants give a user or a team a role on a space or a collection (and so on
-- everything inside the collection). A grant's user must be a member of the
-- organization: leaving it drops their grants.
CREATE TABLE content_grants (
    organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    space_id        text REFERENCES spaces (id) ON DELETE CASCADE,
    collection_id   text REFERENCES collections (id) ON DELETE CASCADE,
    user_id         text,
    team_id         text REFERENCES teams (id) ON DELETE CASCADE,
    role            text NOT NULL,
    created_at      timestamptz NOT NULL,
    CHECK ((space_id IS NULL) <> (collection_id IS NULL)),
    CHECK ((user_id IS NULL) <> (team_id IS NULL)),
    FOREIGN KEY (organization_id, user_id) REFERENCES organization_members (organization_id, user_id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX content_grants_space_user_key ON content_grants (space_id, user_id) WHERE space_id IS NOT NULL AND user_id IS NOT NULL;
CREATE UNIQUE INDEX content_grants_space_team_key ON content_grants (space_id, team_id) WHERE space_id IS NOT NULL AND team_id IS NOT NULL;
CREATE UNIQUE INDEX content_grants_collection_user_key ON content_grants (collection_id, user_id) WHERE collection_id IS NOT NULL AND user_id IS NOT NULL;
CREATE UNIQUE INDEX content_grants_collection_team_key ON content_grants (collection_id, team_id) WHERE collection_id IS NOT NULL AND team_id IS NOT NULL;
CREATE INDEX content_grants_organization_idx ON content_grants (organization_id);
