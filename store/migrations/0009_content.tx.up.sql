-- A space's content is a chain of immutable revisions. A revision is a tree
-- of pages; a page's body is stored once per distinct text (content
-- addressed), so a new revision copies small tree rows, not documents.
CREATE TABLE page_bodies (
    sha256   text PRIMARY KEY,
    markdown text NOT NULL
);

CREATE TABLE revisions (
    id         text PRIMARY KEY,
    space_id   text NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    parents    text[] NOT NULL DEFAULT '{}',
    -- edits: made by editing the content.
    type       text NOT NULL,
    created_by text REFERENCES users (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX revisions_space_idx ON revisions (space_id, created_at);

CREATE TABLE revision_pages (
    revision_id text NOT NULL REFERENCES revisions (id) ON DELETE CASCADE,
    page_id     text NOT NULL,
    parent_id   text,
    position    integer NOT NULL,
    -- document: a page with a body; group: a heading holding pages.
    type        text NOT NULL CHECK (type IN ('document', 'group')),
    title       text NOT NULL,
    slug        text NOT NULL,
    emoji       text,
    description text,
    hidden      boolean NOT NULL DEFAULT false,
    body_sha256 text REFERENCES page_bodies (sha256),
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (revision_id, page_id)
);

-- Every space starts with an empty revision: the one its revision_id names.
INSERT INTO revisions (id, space_id, type, created_at)
    SELECT revision_id, id, 'edits', created_at FROM spaces;
