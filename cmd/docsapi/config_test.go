package main

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi/graph"
	"github.com/docsapi/docsapi/tracing/otlp"
)

// DOCSAPI_SECRET_KEY: empty (no key), 64 hex digits or base64 of 32 bytes;
// anything else stops the server from starting.
func TestSecretKeyConfig(t *testing.T) {
	for _, c := range []struct {
		value string
		ok    bool
		n     int
	}{
		{"", true, 0},
		{strings.Repeat("ab", 32), true, 32},
		{"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", true, 32},
		{"short", false, 0},
		{strings.Repeat("ab", 16), false, 0},
	} {
		key, err := (&config{SecretKey: c.value}).secretKey()
		if (err == nil) != c.ok || len(key) != c.n {
			t.Errorf("%q: %d bytes, %v", c.value, len(key), err)
		}
	}
}

// DOCSAPI_STATEMENT_TIMEOUT: 30s by default, 0 for none; the flag overrides
// it; a value that is no duration stops the server rather than turning the
// limit off.
func TestStatementTimeoutConfig(t *testing.T) {
	t.Setenv("DOCSAPI_STATEMENT_TIMEOUT", "") // restored when the test ends
	for _, c := range []struct {
		env  *string
		args []string
		want time.Duration
		ok   bool
	}{
		{nil, nil, 30 * time.Second, true},
		{ptr("5s"), nil, 5 * time.Second, true},
		{ptr("0"), nil, 0, true},
		{ptr("5s"), []string{"-statement-timeout", "2m"}, 2 * time.Minute, true},
		{nil, []string{"-statement-timeout", "-1s"}, -time.Second, false},
		{ptr("soon"), nil, 0, false},
	} {
		if c.env != nil {
			os.Setenv("DOCSAPI_STATEMENT_TIMEOUT", *c.env)
		} else {
			os.Unsetenv("DOCSAPI_STATEMENT_TIMEOUT")
		}
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		cfg := bindConfig(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := cfg.check()
		if (err == nil) != c.ok || (c.ok && cfg.StatementTimeout != c.want) {
			t.Errorf("env %v, args %v: %s, %v", c.env, c.args, cfg.StatementTimeout, err)
		}
	}
}

func ptr(s string) *string { return &s }

// The git import limits come from DOCSAPI_GIT_MAX_*, flags overriding
// them, with graph's defaults when neither is set.
func TestGitLimitsConfig(t *testing.T) {
	limits := func(args ...string) graph.GitLimits {
		fs := flag.NewFlagSet("docsapi", flag.ContinueOnError)
		c := bindConfig(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return c.server(slog.New(slog.DiscardHandler)).GitLimits
	}
	if got, want := limits(), (graph.GitLimits{MaxFiles: graph.DefaultGitMaxFiles, MaxBytes: graph.DefaultGitMaxBytes,
		MaxFileBytes: graph.DefaultGitMaxFileBytes}); got != want {
		t.Errorf("defaults: %+v, want %+v", got, want)
	}
	t.Setenv("DOCSAPI_GIT_MAX_FILES", "50")
	t.Setenv("DOCSAPI_GIT_MAX_BYTES", "1000")
	t.Setenv("DOCSAPI_GIT_MAX_FILE_BYTES", "200")
	if got, want := limits("-git-max-file-bytes", "300"), (graph.GitLimits{MaxFiles: 50, MaxBytes: 1000, MaxFileBytes: 300}); got != want {
		t.Errorf("environment and flag: %+v, want %+v", got, want)
	}
}

// DOCSAPI_PG_RESTARTS: 5 restarts of a dead embedded PostgreSQL by
// default, 0 for none (pgserver's negative Attempts); the flag overrides
// it; a value that is no number, or a negative one, stops the server rather
// than turning the restarts off.
func TestPGRestartsConfig(t *testing.T) {
	t.Setenv("DOCSAPI_PG_RESTARTS", "") // restored when the test ends
	for _, c := range []struct {
		env      *string
		args     []string
		attempts int
		ok       bool
	}{
		{nil, nil, 5, true},
		{ptr("2"), nil, 2, true},
		{ptr("0"), nil, -1, true},
		{ptr("2"), []string{"-pg-restarts", "7"}, 7, true},
		{nil, []string{"-pg-restarts", "-1"}, 0, false},
		{ptr("many"), nil, 0, false},
	} {
		if c.env != nil {
			os.Setenv("DOCSAPI_PG_RESTARTS", *c.env)
		} else {
			os.Unsetenv("DOCSAPI_PG_RESTARTS")
		}
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		cfg := bindConfig(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := cfg.check()
		if (err == nil) != c.ok || (c.ok && cfg.supervision().Attempts != c.attempts) {
			t.Errorf("env %v, args %v: %d attempts, %v", c.env, c.args, cfg.supervision().Attempts, err)
		}
	}
}

// Where files are stored: DOCSAPI_BLOB_URL, else the directory of
// DOCSAPI_BLOB_DIR (earlier configurations), else <data dir>/blobs, where
// earlier versions kept them; naming both is refused.
func TestBlobConfig(t *testing.T) {
	for _, c := range []struct {
		args []string
		url  string
		ok   bool
	}{
		{[]string{"-data-dir", "/srv/docs"}, "file:///srv/docs/blobs", true},
		{[]string{"-blob-dir", "/mnt/files"}, "file:///mnt/files", true},
		{[]string{"-blob-url", "s3://files?region=eu-west-1"}, "s3://files?region=eu-west-1", true},
		{[]string{"-blob-url", "s3://files", "-blob-dir", "/mnt/files"}, "", false},
	} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		cfg := bindConfig(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := cfg.check()
		if (err == nil) != c.ok {
			t.Errorf("%v: %v", c.args, err)
		}
		if got := cfg.server(slog.Default()).BlobURL; c.ok && got != c.url {
			t.Errorf("%v: bucket %q, want %q", c.args, got, c.url)
		}
	}
}

// DOCSAPI_REPLICA_URLS names replicas of DATABASE_URL (none without it);
// DOCSAPI_REPLICA_MAX_LAG is 10s by default, positive, the flag overriding
// it; a value that is no duration stops the server.
func TestReplicaConfig(t *testing.T) {
	t.Setenv("DOCSAPI_REPLICA_MAX_LAG", "")
	t.Setenv("DATABASE_URL", "")
	t.Setenv("DOCSAPI_REPLICA_URLS", "")
	for _, c := range []struct {
		env  map[string]string
		args []string
		urls int
		lag  time.Duration
		ok   bool
	}{
		{nil, nil, 0, 10 * time.Second, true},
		{map[string]string{"DATABASE_URL": "postgres://p/db", "DOCSAPI_REPLICA_URLS": "postgres://r1/db, postgres://r2/db,"}, nil, 2, 10 * time.Second, true},
		{map[string]string{"DOCSAPI_REPLICA_MAX_LAG": "2s"}, []string{"-replica-max-lag", "30s"}, 0, 30 * time.Second, true},
		{map[string]string{"DOCSAPI_REPLICA_URLS": "postgres://r1/db"}, nil, 1, 10 * time.Second, false},
		{map[string]string{"DOCSAPI_REPLICA_MAX_LAG": "soon"}, nil, 0, 0, false},
		{nil, []string{"-replica-max-lag", "0s"}, 0, 0, false},
	} {
		for _, k := range []string{"DOCSAPI_REPLICA_MAX_LAG", "DATABASE_URL", "DOCSAPI_REPLICA_URLS"} {
			os.Unsetenv(k)
		}
		for k, v := range c.env {
			os.Setenv(k, v)
		}
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		cfg := bindConfig(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := cfg.check()
		if (err == nil) != c.ok || (c.ok && (len(cfg.replicaURLs()) != c.urls || cfg.replicas(nil).MaxLag != c.lag)) {
			t.Errorf("env %v, args %v: %d replicas, lag %s, %v", c.env, c.args, len(cfg.replicaURLs()), cfg.ReplicaMaxLag, err)
		}
	}
}

// DOCSAPI_LOG_LEVEL: info by default or empty (a line per request),
// debug, warn or error (in any case), the flag overriding it; anything else
// stops the server, saying what it takes.
func TestLogLevelConfig(t *testing.T) {
	t.Setenv("DOCSAPI_LOG_LEVEL", "")
	for _, c := range []struct {
		env  *string
		args []string
		want slog.Level
		ok   bool
	}{
		{nil, nil, slog.LevelInfo, true},
		{ptr("debug"), nil, slog.LevelDebug, true},
		{ptr("WARN"), nil, slog.LevelWarn, true},
		{ptr("debug"), []string{"-log-level", "error"}, slog.LevelError, true},
		{ptr("verbose"), nil, 0, false},
		{ptr(""), nil, slog.LevelInfo, true},
	} {
		if c.env != nil {
			os.Setenv("DOCSAPI_LOG_LEVEL", *c.env)
		} else {
			os.Unsetenv("DOCSAPI_LOG_LEVEL")
		}
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		cfg := bindConfig(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := cfg.check()
		if (err == nil) != c.ok || (!c.ok && !strings.Contains(err.Error(), "DOCSAPI_LOG_LEVEL")) {
			t.Errorf("env %v, args %v: %v", c.env, c.args, err)
			continue
		}
		if !c.ok {
			continue
		}
		log := cfg.logger()
		if !log.Enabled(context.Background(), c.want) || log.Enabled(context.Background(), c.want-1) {
			t.Errorf("env %v, args %v: the logger does not log from %s on", c.env, c.args, c.want)
		}
	}
}

// Tracing is off unless an OTLP endpoint is named (or OTEL_TRACES_EXPORTER
// is otlp), and never with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none;
// the exporter speaks grpc, http/protobuf (the default) or http/json as
// OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL says; an exporter, a protocol or a
// sampler it cannot use stops the server, naming the variable.
func TestTracingConfig(t *testing.T) {
	vars := []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG"}
	for _, v := range vars {
		t.Setenv(v, "")
	}
	const endpoint = "http://127.0.0.1:4318"
	for _, c := range []struct {
		env     map[string]string
		on      bool
		refused string // in the error, if the server refuses to start
	}{
		{nil, false, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}, true, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": endpoint + "/v1/traces"}, true, ""},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_SDK_DISABLED": "true"}, false, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_TRACES_EXPORTER": "none"}, false, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, true, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, true, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.1"}, true, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_TRACES_EXPORTER": "zipkin"}, false, "OTEL_TRACES_EXPORTER"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"}, false, "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_TRACES_SAMPLER": ""}, true, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_TRACES_SAMPLER": "sometimes"}, false, "OTEL_TRACES_SAMPLER"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}, false, "OTEL_TRACES_SAMPLER_ARG"},
	} {
		for _, v := range vars {
			os.Unsetenv(v)
		}
		for k, v := range c.env {
			os.Setenv(k, v)
		}
		provider, err := otlp.New(context.Background(), slog.New(slog.DiscardHandler))
		switch {
		case c.refused != "":
			if err == nil || !strings.Contains(err.Error(), c.refused) {
				t.Errorf("%v: %v, want an error naming %s", c.env, err, c.refused)
			}
		case err != nil:
			t.Errorf("%v: %v", c.env, err)
		case (provider != nil) != c.on:
			t.Errorf("%v: tracing on %v, want %v", c.env, provider != nil, c.on)
		}
		if provider != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = provider.Shutdown(ctx)
			cancel()
		}
	}
}
