-- The rate budget (graph/budget): points spent per caller (a token, or an
-- anonymous client's address) per fixed window, shared by every instance.
-- UNLOGGED: a count lost to a crash only gives callers a fresh window, and
-- the table is written on every flush of every instance, which the WAL need
-- not carry. Windows that have ended are deleted by the instances as they
-- go (budget.Budget's flusher).
CREATE UNLOGGED TABLE rate_budget_usage (
    key text NOT NULL,
    window_start timestamptz NOT NULL,
    used bigint NOT NULL,
    PRIMARY KEY (key, window_start)
);
CREATE INDEX rate_budget_usage_window_idx ON rate_budget_usage (window_start);
