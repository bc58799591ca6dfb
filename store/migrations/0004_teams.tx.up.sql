-- Teams group members of an organization. A team member must be a member of
-- the organization: leaving the organization leaves its teams (the
-- composite foreign key cascades).
CREATE TABLE teams (
    id              text PRIMARY KEY,
    organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    title           text NOT NULL,
    created_at      timestamptz NOT NULL
);
CREATE INDEX teams_organization_idx ON teams (organization_id, created_at, id);

CREATE TABLE team_members (
    team_id         text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    organization_id text NOT NULL,
    user_id         text NOT NULL,
    -- owner: manages the team; member: belongs to it.
    role            text NOT NULL CHECK (role IN ('owner', 'member')),
    PRIMARY KEY (team_id, user_id),
    FOREIGN KEY (organization_id, user_id) REFERENCES organization_members (organization_id, user_id) ON DELETE CASCADE
);
CREATE INDEX team_members_user_idx ON team_members (organization_id, user_id);

-- Member lists sort by join date or by last activity.
CREATE INDEX organization_members_joined_idx ON organization_members (organization_id, joined_at, user_id);
CREATE INDEX organization_members_seen_idx ON organization_members (organization_id, last_seen_at, user_id) WHERE last_seen_at IS NOT NULL;
