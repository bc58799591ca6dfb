package store_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/store/pgserver"
	"github.com/docsapi/docsapi/store/pgtest"
)

// The embedded server Connect starts is supervised: when it dies and cannot
// be restarted (its data directory made unusable), OnFailure is called with
// the reason, once, and Health says so; the stop function still returns.
// Stopping it on purpose is no failure.
func TestConnectReportsAnEmbeddedServerThatCannotComeBack(t *testing.T) {
	t.Parallel()
	dir := pgtest.NewDataDir(t)
	failures := make(chan error, 2)
	db, closeDB, err := store.Connect(context.Background(), store.ConnectOptions{DataDir: dir, MaxConns: 4,
		Supervision: pgserver.Supervision{Attempts: 2, Backoff: 20 * time.Millisecond},
		OnFailure:   func(err error) { failures <- err },
		Log:         slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Health(); err != nil {
		t.Fatalf("Health: %v", err)
	}
	pgdata := filepath.Join(dir, "pgdata")
	if err := os.Rename(filepath.Join(pgdata, "PG_VERSION"), filepath.Join(pgdata, "PG_VERSION.moved")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(db.Embedded().PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-failures:
		if !strings.Contains(err.Error(), "could not be restarted (2 restarts") {
			t.Errorf("OnFailure: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("OnFailure not called: %v", db.Health())
	}
	if db.Health() == nil {
		t.Error("Health is nil after the supervisor gave up")
	}
	closed := make(chan struct{})
	go func() { closeDB(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the stop function hangs")
	}
	if len(failures) != 0 {
		t.Errorf("OnFailure called again: %v", <-failures)
	}

	// A healthy server stopped on purpose.
	if err := os.Rename(filepath.Join(pgdata, "PG_VERSION.moved"), filepath.Join(pgdata, "PG_VERSION")); err != nil {
		t.Fatal(err)
	}
	db, closeDB, err = store.Connect(context.Background(), store.ConnectOptions{DataDir: dir, MaxConns: 4,
		OnFailure: func(err error) { failures <- err }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Health(); err != nil {
		t.Fatalf("Health after a restart on the same data: %v", err)
	}
	closeDB()
	time.Sleep(100 * time.Millisecond)
	if len(failures) != 0 {
		t.Errorf("a stop on purpose was reported: %v", <-failures)
	}
}
