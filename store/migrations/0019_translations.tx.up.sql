-- Translations (spec 4.17): a source space kept translated into another
-- language in a result space, by runs of a background job
-- (graph/translation.go).
CREATE TABLE translations (
    id                 text PRIMARY KEY,
    organization_id    text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    source_space_id    text NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    source_language    text NOT NULL,
    language           text NOT NULL,
    instructions       jsonb NOT NULL DEFAULT '{}',
    -- pending: a run is due; running: a job is translating; completed: the
    -- last run finished; failed: it did not (status_message says why).
    status             text NOT NULL DEFAULT 'completed' CHECK (status IN ('pending', 'running', 'completed', 'failed')),
    status_message     text,
    run_started_at     timestamptz,
    result_space_id    text REFERENCES spaces (id) ON DELETE SET NULL,
    result_revision_id text,
    runs               integer NOT NULL DEFAULT 0,
    total_words        bigint NOT NULL DEFAULT 0,
    -- The source pages ever translated: their number is stats.totalPages.
    translated_pages   text[] NOT NULL DEFAULT '{}',
    total_duration     integer NOT NULL DEFAULT 0,
    latest_duration    integer NOT NULL DEFAULT 0,
    latest_pages       integer NOT NULL DEFAULT 0,
    latest_words       integer NOT NULL DEFAULT 0,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL
);
CREATE INDEX translations_list_idx ON translations (organization_id, created_at, id);
-- The sweep looks for runs that are due or whose job died.
CREATE INDEX translations_unfinished_idx ON translations (updated_at) WHERE status IN ('pending', 'running');
