// Package tracing is what the server's layers share to make OpenTelemetry
// spans: the attributes that name a request and an organization, child
// spans that cost nothing unless a recording span is above them, and the
// organization of the data a request (or job) read, for its span.
//
// Only the roots are made with a configured TracerProvider: a request's span
// (cmd/docsapi/server), a job's (graph/jobs) and the SQL statements' (the
// store's pgx tracer, under a recording span only). Everything between them
// (GraphQL operations and root fields, loader batches, webhook deliveries)
// is a Child of whatever recording span is in the context: with tracing off
// there is none, and a Child is one context lookup.
//
// The OTLP exporter, configured from the standard environment variables, is
// in tracing/otlp, which only the commands import.
package tracing

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Scope is the instrumentation scope of docsapi's own spans.
const Scope = "github.com/docsapi/docsapi"

// The attributes docsapi gives its spans.
const (
	// RequestID is the request's id (X-Request-Id), on its span.
	RequestID = attribute.Key("docsapi.request_id")
	// Organization is the organization whose data a request or a job read
	// (the first, when it read several), on its span; and the organization
	// an SQL statement reads, on the statement's span.
	Organization = attribute.Key("docsapi.organization")
	// Organizations lists them all when a request read several.
	Organizations = attribute.Key("docsapi.organizations")
	// DBPool is the pool that ran an SQL statement: primary, replica, or on
	// a Citus cluster coordinator or worker (the host is server.address).
	DBPool = attribute.Key("docsapi.db.pool")
)

// Child starts a span under the recording span of ctx, with the same
// provider; with none (tracing off, or this trace not sampled) it returns
// ctx and a span that records nothing, at the cost of a context lookup.
func Child(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, parent
	}
	return tracerOf(parent.TracerProvider()).Start(ctx, name, opts...)
}

// Recording reports whether ctx has a recording span: whether what a
// caller would add to it (attributes worth computing) is kept.
func Recording(ctx context.Context) bool { return trace.SpanFromContext(ctx).IsRecording() }

// lastTracer is the tracer of the provider asked last: a process has one
// provider (tests a few), and asking the SDK's provider for its tracer takes
// a lock at every span.
var lastTracer atomic.Pointer[providerTracer]

type providerTracer struct {
	provider trace.TracerProvider
	tracer   trace.Tracer
}

func tracerOf(p trace.TracerProvider) trace.Tracer {
	if last := lastTracer.Load(); last != nil && last.provider == p {
		return last.tracer
	}
	t := p.Tracer(Scope)
	lastTracer.Store(&providerTracer{p, t})
	return t
}

// readsKey is the context key of a span's organizations.
type readsKey struct{}

// organizationsRead collects the organizations whose data were read under a
// request's or a job's span, and names them on it.
type organizationsRead struct {
	span trace.Span
	mu   sync.Mutex
	orgs []string
}

// WithOrganizations returns ctx whose organizations read (NoteOrganization)
// are named on span; ctx itself when span records nothing.
func WithOrganizations(ctx context.Context, span trace.Span) context.Context {
	if !span.IsRecording() {
		return ctx
	}
	return context.WithValue(ctx, readsKey{}, &organizationsRead{span: span})
}

// NoteOrganization records that the data of org are read under ctx: the
// store calls it for every read of one organization's rows. Without a span
// of WithOrganizations above it, it costs a context lookup.
func NoteOrganization(ctx context.Context, org string) {
	r, ok := ctx.Value(readsKey{}).(*organizationsRead)
	if !ok || org == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Contains(r.orgs, org) {
		return
	}
	r.orgs = append(r.orgs, org)
	if len(r.orgs) == 1 {
		r.span.SetAttributes(Organization.String(org))
		return
	}
	r.span.SetAttributes(Organizations.StringSlice(slices.Clone(r.orgs)))
}
