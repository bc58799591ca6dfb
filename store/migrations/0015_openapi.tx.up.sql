-- OpenAPI specifications of an organization, fetched from a URL by a
-- background job (graph/openapi_spec.go), and the versions the job stored:
-- a new version only when the bundled document changed (digest).
CREATE TABLE openapi_specs (
    id                    text PRIMARY KEY,
    organization_id       text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    slug                  text NOT NULL,
    source_url            text NOT NULL,
    visibility            text NOT NULL DEFAULT 'private' CHECK (visibility IN ('private', 'public')),
    processing_state      text NOT NULL DEFAULT 'pending' CHECK (processing_state IN ('pending', 'progress', 'complete')),
    -- Bumped by every change of source; a job's result for an older
    -- generation is dropped.
    generation            integer NOT NULL DEFAULT 1,
    processing_started_at timestamptz,
    last_version_id       text,
    last_processed_at     timestamptz,
    last_error_code       text,
    last_errors           jsonb NOT NULL DEFAULT '[]',
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL,
    UNIQUE (organization_id, slug)
);
CREATE INDEX openapi_specs_list_idx ON openapi_specs (organization_id, created_at, id);
-- The sweep looks for specs the job has not finished.
CREATE INDEX openapi_specs_unfinished_idx ON openapi_specs (updated_at) WHERE processing_state <> 'complete';

CREATE TABLE openapi_spec_versions (
    id              text PRIMARY KEY,
    spec_id         text NOT NULL REFERENCES openapi_specs (id) ON DELETE CASCADE,
    -- SHA-256 of document, hex.
    digest          text NOT NULL,
    -- The bundled document (external $refs inlined), served raw.
    document        bytea NOT NULL,
    content_type    text NOT NULL,
    -- The files fetched: entry (the source URL's file) and each file an
    -- external $ref named, by path relative to the source's directory.
    entry           text NOT NULL,
    files           jsonb NOT NULL,
    created_at      timestamptz NOT NULL
);
CREATE INDEX openapi_spec_versions_spec_idx ON openapi_spec_versions (spec_id, created_at, id);
