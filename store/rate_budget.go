package store

import (
	"context"
	"time"
)

// AddRateUsage adds n points to key's count for the window starting at
// window and returns the count after it, in one atomic statement, so every
// instance adding at once is counted (n = 0 reads the count).
func (db *DB) AddRateUsage(ctx context.Context, key string, window time.Time, n int64) (int64, error) {
	var used int64
	err := db.Pool.QueryRow(ctx, `INSERT INTO rate_budget_usage (key, window_start, used) VALUES ($1, $2, $3)
		ON CONFLICT (key, window_start) DO UPDATE SET used = rate_budget_usage.used + EXCLUDED.used
		RETURNING used`, key, window, n).Scan(&used)
	return used, translate(err)
}

// DeleteRateUsageBefore deletes the counts of the windows that started
// before t; it returns how many.
func (db *DB) DeleteRateUsageBefore(ctx context.Context, t time.Time) (int64, error) {
	tag, err := db.Pool.Exec(ctx, `DELETE FROM rate_budget_usage WHERE window_start < $1`, t)
	if err != nil {
		return 0, translate(err)
	}
	return tag.RowsAffected(), nil
}
