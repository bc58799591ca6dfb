package server

import (
	"context"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/docsapi/docsapi/tracing"
)

// A request's span is the root of what it causes (tracing's Child spans,
// the SQL statements'): continuing the trace of a caller that sent W3C
// trace context (traceparent, tracestate), and naming the request's id
// and, once read, its organization. A websocket gets none: it lives as long
// as its subscriptions, and a span of hours helps no one.

// startRequestSpan starts the span of request r of id id.
func startRequestSpan(ctx context.Context, tracer trace.Tracer, r *http.Request, id string) (context.Context, trace.Span) {
	ctx = propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(r.Header))
	ctx, span := tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		semconv.HTTPRequestMethodKey.String(r.Method), semconv.URLPath(r.URL.Path), tracing.RequestID.String(id)))
	return tracing.WithOrganizations(ctx, span), span
}

// endRequestSpan names the span after the route the request matched (as
// /metrics labels it: "GET /v1/spaces/{spaceId}", "/graphql") and ends it
// with the answer's status: an error from 500 on.
func endRequestSpan(span trace.Span, method, route string, status int) {
	name, path := method+" "+route, route
	if _, p, ok := strings.Cut(route, " "); ok {
		name, path = route, p
	}
	span.SetName(name)
	span.SetAttributes(semconv.HTTPRoute(path), semconv.HTTPResponseStatusCode(status))
	if status >= http.StatusInternalServerError {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	span.End()
}
