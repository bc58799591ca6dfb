package store_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docsapi/docsapi/store"
)

// IsUnavailable tells the database out of reach from everything else,
// wrapped or not.
func TestIsUnavailable(t *testing.T) {
	// A real refused connection: a port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, refused := pgx.Connect(ctx, "postgres://postgres@"+addr+"/postgres?sslmode=disable")
	if refused == nil {
		t.Fatal("connected to a closed port")
	}
	cancelled, stop := context.WithCancel(context.Background())
	stop()
	_, connectCancelled := pgx.Connect(cancelled, "postgres://postgres@"+addr+"/postgres?sslmode=disable")

	pg := func(code string) error { return &pgconn.PgError{Severity: "FATAL", Code: code} }
	wrap := func(err error) error { return fmt.Errorf("store: get space: %w", err) }
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", refused, true},
		{"connection refused, wrapped", wrap(refused), true},
		{"admin_shutdown", wrap(pg("57P01")), true},
		{"crash_shutdown", pg("57P02"), true},
		{"cannot_connect_now", pg("57P03"), true},
		{"connection_failure", pg("08006"), true},
		{"connection closed", wrap(pgconn.ErrConnClosed), true},
		{"bad connection", wrap(driver.ErrBadConn), true},
		{"connection dropped mid-statement", wrap(io.ErrUnexpectedEOF), true},
		{"connection reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true},
		{"a Citus worker lost at commit", &pgconn.PgError{Code: "XX000", Message: "could not commit transaction for shard 102015 on at least one active node"}, true},
		{"a Citus worker lost in a transaction", &pgconn.PgError{Code: "XX000", Message: "failure on connection marked as essential: 127.0.0.1:40295"}, true},

		{"nil", nil, false},
		{"statement timeout", pg("57014"), false},
		{"wrong password", pg("28P01"), false},
		{"no such database", pg("3D000"), false},
		{"unique violation", pg("23505"), false},
		{"not found", store.ErrNotFound, false},
		{"request cancelled", wrap(context.Canceled), false},
		{"connect cancelled by the caller", connectCancelled, false},
		{"an outbound HTTP request", &url.Error{Op: "Get", URL: "http://example.com", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}, false},
		{"anything else", errors.New("boom"), false},
		{"another internal error", &pgconn.PgError{Code: "XX000", Message: "cache lookup failed for relation 1234"}, false},
	} {
		if got := store.IsUnavailable(c.err); got != c.want {
			t.Errorf("%s (%v): IsUnavailable %v, want %v", c.name, c.err, got, c.want)
		}
	}
}
