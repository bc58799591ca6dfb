-- Live events are kept a while as a history, then pruned by age
-- (graph/jobs: prune_live_events).
CREATE INDEX live_events_created_idx ON live_events (created_at);
