-- Conversation insights (spec 4.15): conversations ingested from support
-- tools, the issues a background job extracts from them, and the clusters it
-- groups similar issues into (graph/conversation.go).
CREATE TABLE conversations (
    organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    -- The id the source gave it: ingesting the same id again updates it.
    id              text NOT NULL,
    source          text NOT NULL,
    subject         text,
    parts           jsonb NOT NULL DEFAULT '[]',
    metadata_url    text,
    attributes      jsonb NOT NULL DEFAULT '{}',
    -- When the conversation took place (metadata.createdAt, else its first ingestion).
    created_at      timestamptz NOT NULL,
    ingested_at     timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    -- NULL: its issues are due (new, or changed since they were extracted).
    processed_at    timestamptz,
    PRIMARY KEY (organization_id, id)
);
CREATE INDEX conversations_list_idx ON conversations (organization_id, created_at, id);
CREATE INDEX conversations_unprocessed_idx ON conversations (organization_id, updated_at) WHERE processed_at IS NULL;

CREATE TABLE conversation_issue_clusters (
    id              text PRIMARY KEY,
    organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    label           text NOT NULL,
    summary         text NOT NULL,
    icon            text NOT NULL DEFAULT 'messages',
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
CREATE INDEX conversation_issue_clusters_org_idx ON conversation_issue_clusters (organization_id, updated_at, id);

CREATE TABLE conversation_issues (
    id              text PRIMARY KEY,
    organization_id text NOT NULL,
    conversation_id text NOT NULL,
    cluster_id      text REFERENCES conversation_issue_clusters (id) ON DELETE SET NULL,
    title           text NOT NULL,
    summary         text NOT NULL,
    -- Which extractor found it: "builtin", or the provider's name.
    extractor       text NOT NULL,
    created_at      timestamptz NOT NULL,
    ingested_at     timestamptz NOT NULL,
    FOREIGN KEY (organization_id, conversation_id) REFERENCES conversations (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX conversation_issues_list_idx ON conversation_issues (organization_id, created_at, id);
CREATE INDEX conversation_issues_conversation_idx ON conversation_issues (organization_id, conversation_id);
CREATE INDEX conversation_issues_cluster_idx ON conversation_issues (cluster_id);

-- A change request made to address a cluster's issues: its tasks.
ALTER TABLE change_requests ADD COLUMN conversations_issues_cluster_id text
    REFERENCES conversation_issue_clusters (id) ON DELETE SET NULL;
CREATE INDEX change_requests_cluster_idx ON change_requests (conversations_issues_cluster_id)
    WHERE conversations_issues_cluster_id IS NOT NULL;
