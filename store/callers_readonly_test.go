package store_test

import (
	"testing"

	"github.com/docsapi/docsapi/store"
)

// What the caller cache's hook deems a read: a write by raw SQL is not one
// (bun names every NewRaw query a SELECT), so it empties the caches.
func TestCallerHookTellsWritesFromReads(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		query string
		read  bool
	}{
		{"SELECT id FROM api_tokens WHERE digest = 'x'", true},
		{"\n\t  select * from users", true},
		{`WITH m AS (SELECT user_id FROM organization_members) SELECT * FROM users JOIN m ON true`, true},
		{"DELETE FROM api_tokens WHERE user_id = 'carol'", false},
		{"UPDATE users SET display_name = 'x'", false},
		{`INSERT INTO "organization_members" (user_id) VALUES ('x')`, false},
		{"WITH gone AS (DELETE FROM api_tokens RETURNING id) SELECT count(*) FROM gone", false},
		{"TRUNCATE users", false},
		{"WITH t AS (SELECT id FROM api_tokens WHERE deleted_at IS NULL AND updated_at > now()) SELECT * FROM t", true},
		{"", false},
	} {
		if got := store.ReadOnly(c.query); got != c.read {
			t.Errorf("%q: read %v, want %v", c.query, got, c.read)
		}
	}
}
