// Command docsapi runs the documentation platform's management API.
//
//	docsapi [serve]                               start the server (the default)
//	docsapi migrate                               apply database migrations and exit
//	docsapi users create --email E --name N       create a user; prints {user, token}
//	docsapi tokens create --user ID [--developer] issue an API token (a developer token: ad-hoc
//	                                              documents under DOCSAPI_TRUSTED_DOCUMENTS); prints {token}
//	docsapi routes [--markdown]                   print the REST route table (docs/api-coverage.md)
//	docsapi openapi                               print the OpenAPI document of /v1 (for DOCSAPI_PUBLIC_URL)
//
// Configuration comes from DOCSAPI_* environment variables, each mirrored by
// a flag (see config.go or `docsapi serve -h`).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/docsapi/docsapi/cmd/docsapi/server"
	"github.com/docsapi/docsapi/store"
	"github.com/docsapi/docsapi/tracing/otlp"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "docsapi:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	if cmd == "users" || cmd == "tokens" {
		if len(args) == 0 || args[0] != "create" {
			return fmt.Errorf("usage: docsapi %s create [flags]", cmd)
		}
		cmd, args = cmd+" create", args[1:]
	}
	fs := flag.NewFlagSet("docsapi "+cmd, flag.ContinueOnError)
	cfg := bindConfig(fs)
	var email, name, userID string
	var markdown, developer bool
	switch cmd {
	case "routes":
		fs.BoolVar(&markdown, "markdown", false, "print docs/api-coverage.md")
	case "serve", "migrate", "openapi":
	case "users create":
		fs.StringVar(&email, "email", "", "email address of the new user")
		fs.StringVar(&name, "name", "", "display name of the new user")
	case "tokens create":
		fs.StringVar(&userID, "user", "", "id of the user")
		fs.BoolVar(&developer, "developer", false, "a developer token: runs ad-hoc GraphQL documents and introspection when DOCSAPI_TRUSTED_DOCUMENTS allows registered ones only to others")
	default:
		return fmt.Errorf("unknown command %q (serve, migrate, users create, tokens create, routes, openapi)", cmd)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if cmd == "routes" {
		return printRoutes(os.Stdout, markdown)
	}
	if cmd == "openapi" {
		return printOpenAPI(os.Stdout, cfg.server(nil).PublicURL)
	}
	if err := cfg.check(); err != nil {
		return err
	}
	log := cfg.logger()
	// The store's and the listeners' lines follow the level too.
	slog.SetDefault(log)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if cmd == "serve" {
		provider, err := otlp.New(ctx, log)
		if err != nil {
			return err
		}
		if provider != nil {
			cfg.tracing = provider
			defer flushSpans(provider, log)
			log.Info("tracing: spans are exported over OTLP (the OTEL_* variables)")
		}
	}
	// An embedded PostgreSQL that died for good ends the command, as a
	// signal does, but with an error (a fatal cause).
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	fail := func(err error) { cancel(fatal{err}) }
	db, closeDB, err := store.Connect(ctx, store.ConnectOptions{
		DatabaseURL: cfg.DatabaseURL, DataDir: cfg.DataDir, MaxConns: cfg.MaxConns,
		StatementTimeout: cfg.StatementTimeout, Supervision: cfg.supervision(), OnFailure: fail, Log: log,
		Tracing: cfg.tracing,
	})
	if err != nil {
		return err
	}
	defer closeDB()
	if err := db.Migrate(ctx, log); err != nil {
		return err
	}

	switch cmd {
	case "migrate":
		log.Info("database is up to date")
		return nil
	case "serve":
		return serve(ctx, stop, db, cfg, log)
	}

	srv, err := server.New(db, cfg.server(log))
	if err != nil {
		return err
	}
	var out any
	switch cmd {
	case "users create":
		out, err = srv.Resolver.CreateUser(ctx, email, name)
	case "tokens create":
		var token string
		token, err = srv.Resolver.CreateToken(ctx, userID, developer)
		out = map[string]string{"token": token}
	}
	if err != nil {
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// flushSpans exports the spans not yet exported, for a few seconds at most:
// a collector that does not answer must not hold the exit.
func flushSpans(provider *sdktrace.TracerProvider, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := provider.Shutdown(ctx); err != nil {
		log.Warn("tracing: the last spans were not exported", "err", err)
	}
}

// fatal is the cause of a context cancelled because the process cannot go
// on (the embedded PostgreSQL dead for good): the command ends with its
// error, and docsapi exits non-zero. A signal's cause is not one.
type fatal struct{ error }

func (f fatal) Unwrap() error { return f.error }
