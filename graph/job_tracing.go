package graph

import (
	"context"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/riverqueue/rivercontrib/otelriver"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/docsapi/docsapi/tracing"
)

// JobMiddleware is the River middleware of the clients that insert jobs
// (enqueue.go) and work them (graph/jobs) with tracing on; none without a
// provider. River's own (otelriver) gives each job worked a span, linked to
// the span that enqueued it, whose trace context the job carries in its
// metadata: a job runs later, maybe much later, in a trace of its own. The
// job's span is then told the organizations its work reads, as a request's
// is.
func JobMiddleware(provider trace.TracerProvider) []rivertype.Middleware {
	if provider == nil {
		return nil
	}
	return []rivertype.Middleware{
		otelriver.NewMiddleware(&otelriver.MiddlewareConfig{TracerProvider: provider,
			// River's metrics are not exported: /metrics is Prometheus's.
			MeterProvider:          metricnoop.NewMeterProvider(),
			EnableTracePropagation: true, EnableWorkSpanJobKindSuffix: true}),
		river.WorkerMiddlewareFunc(func(ctx context.Context, _ *rivertype.JobRow, doInner func(context.Context) error) error {
			return doInner(tracing.WithOrganizations(ctx, trace.SpanFromContext(ctx)))
		}),
	}
}
