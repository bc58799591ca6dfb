package store

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/docsapi/docsapi/store/pgserver"
)

// ConnectOptions say which database to use.
type ConnectOptions struct {
	// DatabaseURL selects an existing server. Empty starts an embedded one.
	DatabaseURL string
	// DataDir holds the embedded server's cluster.
	DataDir string
	// MaxConns bounds the pool (0: pgx's default).
	MaxConns int32
	// StatementTimeout is the pool's statement_timeout (0: none), see Options.
	StatementTimeout time.Duration
	// Tracing traces the SQL statements (nil: none), see Options.
	Tracing trace.TracerProvider
	// Supervision tunes the restarts of an embedded server this call
	// starts, should it die (zero: pgserver's defaults; its Log is Log).
	Supervision pgserver.Supervision
	// OnFailure is called, once and from another goroutine, when the
	// embedded server died and could not be restarted: the process cannot
	// go on without its database and should exit (main cancels the serve
	// context with the error). It is not called after the stop function.
	OnFailure func(error)
	Log       *slog.Logger
}

// Connect opens the database: the server at DatabaseURL, or an embedded
// server in DataDir started (or joined, when another docsapi process runs
// it) for the purpose. The returned stop function closes the pool and stops
// an embedded server this call started.
//
// An embedded server this call starts is durable (fsync and
// synchronous_commit on: an acknowledged commit survives a crash) and
// supervised: when its process dies it is restarted on the same data
// directory, and the pool reconnects to it by itself (DB.Health says
// whether it is up); when it cannot be restarted, OnFailure is called. A
// server another process runs is that process's to supervise.
func Connect(ctx context.Context, opts ConnectOptions) (*DB, func(), error) {
	pool := Options{MaxConns: opts.MaxConns, StatementTimeout: opts.StatementTimeout, Tracing: opts.Tracing}
	if opts.DatabaseURL != "" {
		db, err := OpenWith(ctx, opts.DatabaseURL, pool)
		if err != nil {
			return nil, nil, err
		}
		return db, db.Close, nil
	}
	if err := os.MkdirAll(opts.DataDir, 0o700); err != nil {
		return nil, nil, err
	}
	logPath := filepath.Join(opts.DataDir, "postgres.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, nil, err
	}
	log := opts.Log
	if log == nil {
		log = slog.Default()
	}
	supervision := opts.Supervision
	if supervision.Log == nil {
		supervision.Log = log
	}
	srv, err := pgserver.Start(ctx, pgserver.Options{DataDir: opts.DataDir, Durable: true, Log: logFile, Supervise: &supervision})
	if err != nil {
		logFile.Close()
		return nil, nil, err
	}
	if srv.Attached() {
		log.Info("embedded postgres run by another docsapi process: attached to it; that process supervises it, this one does not",
			"dataDir", opts.DataDir, "port", srv.Port())
	} else {
		log.Info("embedded postgres running", "dataDir", opts.DataDir, "port", srv.Port(), "pid", srv.PID(), "log", logPath)
	}
	stopped := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-srv.Failed():
			if opts.OnFailure != nil {
				opts.OnFailure(srv.Err())
			}
		case <-stopped:
		}
	}()
	stopServer := func() {
		close(stopped)
		<-watched
		srv.Stop()
		logFile.Close()
	}
	if err := ensureDatabase(ctx, srv.URL("postgres"), "docsapi"); err != nil {
		stopServer()
		return nil, nil, err
	}
	db, err := OpenWith(ctx, srv.URL("docsapi"), pool)
	if err != nil {
		stopServer()
		return nil, nil, err
	}
	db.embedded = srv
	return db, func() { db.Close(); stopServer() }, nil
}

func ensureDatabase(ctx context.Context, adminURL, name string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return fmt.Errorf("store: create database %s: %w", name, err)
	}
	return nil
}
