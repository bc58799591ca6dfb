-- Comments on a space's content or on a change request's, with replies and
-- reactions. A comment's status is open until resolved.
CREATE TABLE comments (
    id                text PRIMARY KEY,
    space_id          text NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    change_request_id text REFERENCES change_requests (id) ON DELETE CASCADE,
    page_id           text,
    node_id           text,
    table_cell        jsonb,
    revision_id       text NOT NULL,
    body              text NOT NULL,
    posted_by         text REFERENCES users (id) ON DELETE SET NULL,
    posted_at         timestamptz NOT NULL,
    edited_at         timestamptz,
    status            text NOT NULL CHECK (status IN ('open', 'resolved')),
    resolved_at       timestamptz,
    resolved_by       text REFERENCES users (id) ON DELETE SET NULL
);
CREATE INDEX comments_space_idx ON comments (space_id, change_request_id, posted_at, id);

CREATE TABLE comment_replies (
    id         text PRIMARY KEY,
    comment_id text NOT NULL REFERENCES comments (id) ON DELETE CASCADE,
    body       text NOT NULL,
    posted_by  text REFERENCES users (id) ON DELETE SET NULL,
    posted_at  timestamptz NOT NULL,
    edited_at  timestamptz
);
CREATE INDEX comment_replies_comment_idx ON comment_replies (comment_id, posted_at, id);

-- A reaction of a user to a comment or a reply (target), once per emoji.
CREATE TABLE comment_reactions (
    target_id  text NOT NULL,
    user_id    text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    emoji      text NOT NULL,
    reacted_at timestamptz NOT NULL,
    PRIMARY KEY (target_id, user_id, emoji)
);
