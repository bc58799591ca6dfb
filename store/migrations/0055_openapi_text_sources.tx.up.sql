-- An OpenAPI specification's source is a URL or a text (GitBook's
-- OpenAPISpecSource): a spec published from a text has no source_url, and
-- keeps the text as its source until a put replaces it
-- (graph/openapi_spec.go).
ALTER TABLE openapi_specs
    ALTER COLUMN source_url DROP NOT NULL,
    ADD COLUMN source_text text,
    ADD CONSTRAINT openapi_specs_one_source CHECK (num_nonnulls(source_url, source_text) = 1);
