package store

import (
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// A unique key violated is named as the schema names it, whether
// PostgreSQL reports it or a Citus coordinator passes on a worker's error
// about a shard's key (no constraint field, the shard's id appended).
func TestViolatedConstraint(t *testing.T) {
	for _, tc := range []struct {
		err  pgconn.PgError
		want string
	}{
		{pgconn.PgError{ConstraintName: "sites_basename_key"}, "sites_basename_key"},
		{pgconn.PgError{Message: `duplicate key value violates unique constraint "sites_basename_key_102040"`}, "sites_basename_key"},
		{pgconn.PgError{ConstraintName: "users_email_key_102008"}, "users_email_key"},
		{pgconn.PgError{Message: "duplicate key value violates unique constraint"}, ""},
		{pgconn.PgError{ConstraintName: "key_"}, "key_"},
	} {
		if got := violatedConstraint(&tc.err); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.err, got, tc.want)
		}
	}
}
