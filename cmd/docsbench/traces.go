package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/docsapi/docsapi/tracing/otlp"
)

// With -traces the servers trace every request (the SDK's default sampler,
// and no caller trace context: all are sampled), and the spans are
// exported as docsapi exports them (tracing/otlp, OTLP over http/protobuf
// in batches) to a collector of this process that reads them and answers
// 200: what tracing costs the server, with a collector that keeps up.

// spanSink is that collector.
type spanSink struct {
	srv      *http.Server
	requests atomic.Int64
	bytes    atomic.Int64
}

// startTracing starts the sink and returns the provider exporting to it.
func startTracing(ctx context.Context) (*sdktrace.TracerProvider, *spanSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	sink := &spanSink{}
	sink.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		sink.requests.Add(1)
		sink.bytes.Add(n)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})}
	go func() { _ = sink.srv.Serve(ln) }()
	os.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+ln.Addr().String())
	os.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	for _, v := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_TRACES_SAMPLER", "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER"} {
		os.Unsetenv(v)
	}
	provider, err := otlp.New(ctx, slog.Default())
	if err != nil {
		sink.srv.Close()
		return nil, nil, err
	}
	return provider, sink, nil
}

// stop flushes the spans and stops the sink, and says what it received.
func (s *spanSink) stop(provider *sdktrace.TracerProvider, out io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = provider.Shutdown(ctx)
	s.srv.Close()
	fmt.Fprintf(out, "traces: every request traced, exported over OTLP/HTTP to a sink in this process: %d exports, %.1f MB\n",
		s.requests.Load(), float64(s.bytes.Load())/1e6)
}
