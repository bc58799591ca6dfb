// Package otlp makes the process's TracerProvider from the standard
// OpenTelemetry environment variables: tracing is off unless an OTLP
// endpoint is named (or OTEL_TRACES_EXPORTER=otlp), and the exporter speaks
// the protocol OTEL_EXPORTER_OTLP_PROTOCOL names. Only the commands import
// it: it brings in the exporters (and gRPC's client).
//
// contrib's autoexport reads the same variables, but it registers the
// metric and log exporters too (a Prometheus bridge among them), which
// would double what tracing adds to the build and bump the Prometheus
// client: the choice of the trace exporter is the few lines of New.
package otlp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// Enabled reports whether the environment turns tracing on: an OTLP
// endpoint named (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), or OTEL_TRACES_EXPORTER=otlp (to the
// default endpoint, localhost); never with OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none. Another exporter is an error: docsapi has the
// OTLP exporter only.
func Enabled() (bool, error) {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return false, nil
	}
	switch exporter := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); exporter {
	case "none":
		return false, nil
	case "otlp":
		return true, nil
	case "":
		return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "", nil
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: docsapi exports traces with otlp, or none", exporter)
	}
}

// New returns the TracerProvider the environment configures, nil when
// tracing is off. It refuses what the SDK would only warn of and ignore: an
// unknown protocol, sampler or sampler argument. Spans are exported in
// batches (OTEL_BSP_* tune them); Shutdown flushes the last. Errors of the
// exporter later on (a collector down) are logged as warnings on log.
func New(ctx context.Context, log *slog.Logger) (*sdktrace.TracerProvider, error) {
	on, err := Enabled()
	if err != nil || !on {
		return nil, err
	}
	exporter, err := newExporter(ctx)
	if err != nil {
		return nil, err
	}
	// The service's name unless OTEL_SERVICE_NAME (or
	// OTEL_RESOURCE_ATTRIBUTES) says otherwise: later options win.
	res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName("docsapi")),
		resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithHost())
	if err != nil {
		_ = exporter.Shutdown(ctx)
		return nil, fmt.Errorf("tracing: %w", err)
	}
	// The SDK reads OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG; what
	// it cannot use it hands to the global error handler, and samples
	// everything. Those errors stop the start instead, but for an empty
	// OTEL_TRACES_SAMPLER, which the specification reads as unset (the
	// SDK's default, which it then takes).
	var mu sync.Mutex
	var refused []error
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		mu.Lock()
		defer mu.Unlock()
		refused = append(refused, err)
	}))
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("tracing: exporting spans", "err", err)
	}))
	mu.Lock()
	defer mu.Unlock()
	if len(refused) > 0 && os.Getenv("OTEL_TRACES_SAMPLER") != "" {
		_ = provider.Shutdown(ctx)
		return nil, fmt.Errorf("tracing: OTEL_TRACES_SAMPLER=%q OTEL_TRACES_SAMPLER_ARG=%q: %w",
			os.Getenv("OTEL_TRACES_SAMPLER"), os.Getenv("OTEL_TRACES_SAMPLER_ARG"), errors.Join(refused...))
	}
	return provider, nil
}

// newExporter is the OTLP exporter of OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
// else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf (the specification's
// default). Each exporter reads its endpoint, headers, timeout, compression
// and certificates from the environment itself.
func newExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	variable := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	if os.Getenv(variable) == "" {
		variable = "OTEL_EXPORTER_OTLP_PROTOCOL"
	}
	protocol := cmp.Or(os.Getenv(variable), "http/protobuf")
	var exporter sdktrace.SpanExporter
	var err error
	switch protocol {
	case "grpc":
		exporter, err = otlptracegrpc.New(ctx)
	case "http/protobuf", "http/json":
		// The HTTP exporter encodes as the variable says.
		exporter, err = otlptracehttp.New(ctx)
	default:
		return nil, fmt.Errorf("%s=%q: the OTLP protocols are grpc, http/protobuf and http/json", variable, protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("tracing: the OTLP exporter (%s): %w", protocol, err)
	}
	return exporter, nil
}
