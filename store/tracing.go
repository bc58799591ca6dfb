package store

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/docsapi/docsapi/tracing"
)

// Every SQL statement is traced at the pgx pool it runs on, whichever path
// sent it: the pgx reads of read.go, and bun's statements, which reach the
// same pool through database/sql (stdlib.OpenDBFromPool). One tracer there
// (otelpgx) makes one span per statement, where bun's hook (bunotel) would
// see bun's statements only, and both would trace bun's twice; and a pool's
// tracer knows which pool answered: the primary's (a Citus coordinator's),
// a replica's or a Citus worker's, each with its host (server.address).
//
// A statement gets a span only under a recording span (a request's, a
// job's): River's polling, the caller cache's listener and the checks of
// replicas and workers make none. With tracing off (Options.Tracing nil) the
// pools have no tracer at all.

// Pool names of tracing.DBPool.
const (
	poolPrimary     = "primary"
	poolCoordinator = "coordinator"
	poolReplica     = "replica"
	poolWorker      = "worker"
)

// sqlTracer is a pool's pgx tracer: otelpgx's spans, with the pool's name,
// the organization the statement reads (inOrganization), and the statement
// with its literal values taken out.
type sqlTracer struct {
	*otelpgx.Tracer
	pool atomic.Pointer[string]
}

// newSQLTracer is the tracer of a pool named pool, nil without a provider.
func newSQLTracer(provider trace.TracerProvider, pool string) *sqlTracer {
	if provider == nil {
		return nil
	}
	t := &sqlTracer{Tracer: otelpgx.NewTracer(otelpgx.WithTracerProvider(provider),
		// The pool's metrics are /metrics' business.
		otelpgx.WithMeterProvider(metricnoop.NewMeterProvider()),
		// A span per statement, not two: waiting for a connection shows
		// as the time before the statement's span.
		otelpgx.WithDisableAcquireTracer(),
		// bun writes values into its statements (simple protocol): what a
		// user wrote must not reach the collector. sanitizeSQL's text
		// replaces otelpgx's.
		otelpgx.WithDisableSQLStatementInAttributes())}
	t.pool.Store(&pool)
	return t
}

// rename names the pool anew: the primary's is a Citus coordinator's, found
// once connected.
func (t *sqlTracer) rename(pool string) {
	if t != nil {
		t.pool.Store(&pool)
	}
}

func (t *sqlTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	ctx = t.Tracer.TraceQueryStart(ctx, conn, data)
	t.describe(ctx, data.SQL)
	return ctx
}

func (t *sqlTracer) TracePrepareStart(ctx context.Context, conn *pgx.Conn, data pgx.TracePrepareStartData) context.Context {
	ctx = t.Tracer.TracePrepareStart(ctx, conn, data)
	t.describe(ctx, data.SQL)
	return ctx
}

// describe adds to the span otelpgx started (if it started one) what only
// the store knows.
func (t *sqlTracer) describe(ctx context.Context, sql string) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{tracing.DBPool.String(*t.pool.Load()), semconv.DBQueryText(sanitizeSQL(sql))}
	if org, ok := ctx.Value(organizationKey{}).(string); ok {
		attrs = append(attrs, tracing.Organization.String(org))
	}
	span.SetAttributes(attrs...)
}

// sanitizeSQL is sql with each string and number literal replaced by ?:
// bun's statements carry their values inline, and those are users' data.
// Placeholders ($1), identifiers (quoted or not) and keywords are kept.
func sanitizeSQL(sql string) string {
	out := make([]byte, 0, len(sql))
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case c == '\'':
			// A string literal; E'...' allows backslash escapes, and ''
			// is a quote in any.
			escapes := i > 0 && (sql[i-1] == 'E' || sql[i-1] == 'e') && (i == 1 || !isWordByte(sql[i-2]))
			if escapes {
				out = out[:len(out)-1]
			}
			for i++; i < len(sql); i++ {
				if escapes && sql[i] == '\\' {
					i++
					continue
				}
				if sql[i] == '\'' {
					if i+1 < len(sql) && sql[i+1] == '\'' {
						i++
						continue
					}
					break
				}
			}
			out = append(out, '?')
		case c == '"':
			// A quoted identifier, kept whole.
			j := strings.IndexByte(sql[i+1:], '"')
			if j < 0 {
				return string(append(out, sql[i:]...))
			}
			out = append(out, sql[i:i+j+2]...)
			i += j + 1
		case c >= '0' && c <= '9' && (i == 0 || !isWordByte(sql[i-1]) && sql[i-1] != '$'):
			for i+1 < len(sql) && (sql[i+1] >= '0' && sql[i+1] <= '9' || sql[i+1] == '.') {
				i++
			}
			out = append(out, '?')
		default:
			out = append(out, c)
		}
	}
	return string(out)
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
