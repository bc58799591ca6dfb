package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/docsapi/docsapi/cmd/docsapi/server"

	"github.com/docsapi/docsapi/graph/jobs"
	"github.com/docsapi/docsapi/store"
)

// serve runs the HTTP server until ctx ends (SIGINT or SIGTERM, or the
// embedded PostgreSQL dead for good), then stops accepting connections and
// lets in-flight requests finish. When the database ended it (a fatal
// cause) it returns the reason: the process then exits non-zero, for its
// own supervisor to restart it.
func serve(ctx context.Context, stop context.CancelFunc, db *store.DB, cfg *config, log *slog.Logger) error {
	if _, err := cfg.secretKey(); err != nil {
		return err
	}
	// Before the server: it routes reads only if the database has replicas.
	if err := db.AttachReplicas(ctx, cfg.replicaURLs(), cfg.replicas(log)); err != nil {
		return err
	}
	srv, err := server.New(db, cfg.server(log))
	if err != nil {
		return err
	}
	defer srv.Close()
	if cfg.BootstrapToken != "" {
		created, err := srv.Resolver.Bootstrap(ctx, cfg.BootstrapToken, cfg.BootstrapEmail, "My organization")
		if err != nil {
			return err
		}
		if created {
			log.Info("bootstrapped an owner and an organization", "email", cfg.BootstrapEmail)
		}
	}
	runner, err := jobs.Start(ctx, jobs.Config{DB: db, Resolver: srv.Resolver, Log: log, Tracing: cfg.tracing})
	if err != nil {
		return err
	}
	// failure is why the server stops when it is not a signal: the
	// embedded PostgreSQL dead for good.
	var failure error
	defer func() {
		timeout := cfg.ShutdownTimeout
		if failure != nil {
			// Without a database no job can finish, nor River resign its
			// leadership: waiting would only delay the exit.
			timeout = min(timeout, time.Second)
		}
		stopCtx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := runner.Stop(stopCtx); err != nil {
			log.Warn("stopping background jobs", "err", err)
		}
	}()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	httpSrv := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- httpSrv.Serve(ln) }()
	log.Info("serving", "addr", ln.Addr().String(), "graphql", cfg.server(log).PublicURL+"/graphql")
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	stop()
	if f := (fatal{}); errors.As(context.Cause(ctx), &f) {
		failure = f.error
	}
	if failure != nil {
		log.Error("cannot go on without the database", "err", failure)
	}
	log.Info("shutting down: draining in-flight requests", "timeout", cfg.ShutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := httpSrv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return failure
}
