package wholeserver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/docsapi/docsapi/cmd/docsapi/server/servertest"
	"github.com/docsapi/docsapi/store/pgtest"
	"github.com/docsapi/docsapi/tracing"
)

// newTracing is the SDK's TracerProvider exporting every span, as it ends,
// to the SDK's in-memory exporter.
func newTracing(t *testing.T) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	t.Helper()
	exporter := tracetest.NewInMemoryExporter()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	return provider, exporter
}

// awaitSpan waits for the span that matches (a request's ends after its
// answer was sent), and returns it with every span exported by then.
func awaitSpan(t *testing.T, exporter *tracetest.InMemoryExporter, what string, match func(tracetest.SpanStub) bool) (tracetest.SpanStub, tracetest.SpanStubs) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		spans := exporter.GetSpans()
		for _, s := range spans {
			if match(s) {
				return s, spans
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no span of %s among %d", what, len(spans))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// attr is the value of attribute key of s ("" if it has none).
func attr(s tracetest.SpanStub, key attribute.Key) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// isStatement tells a span of an SQL statement run (not of its preparing).
func isStatement(s tracetest.SpanStub) bool {
	return s.InstrumentationScope.Name == "github.com/exaring/otelpgx" && attr(s, "db.query.text") != "" &&
		attr(s, "pgx.prepare_stmt.name") == ""
}

// A site tree read over GraphQL by a caller that sends its trace context
// is one trace, under the caller's span: the request's span (with its id and
// organization), the operation's, its root field's, the loaders' and one
// span per SQL statement the store counted, each naming its pool; none of
// them carries a value of a statement. The request's log line leads to
// the trace.
func TestSiteTreeTrace(t *testing.T) {
	t.Parallel()
	provider, exporter := newTracing(t)
	logs := &lockedBuffer{}
	env := servertest.New(t, servertest.Options{Debug: true, Tracing: provider, Logs: logs})
	alice := env.NewUser("Alice")
	org := alice.NewOrg("Acme")
	site := buildSiteTree(t, env, alice, org, 2, 2, 2, 1)

	const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	header := http.Header{"Traceparent": {"00-" + callerTrace + "-" + callerSpan + "-01"}, "X-Request-Id": {"tree-trace-1"}}
	var out servertest.GraphQLResponse
	alice.DoWith("POST", "/graphql", map[string]any{"query": siteTreeQuery, "variables": map[string]any{"o": org, "s": site}}, header).
		Expect(http.StatusOK).Decode(&out)
	if len(out.Errors) > 0 {
		t.Fatalf("%+v", out.Errors)
	}
	counted := int(out.Extensions["stats"].(map[string]any)["sqlQueries"].(float64))

	request, spans := awaitSpan(t, exporter, "the request", func(s tracetest.SpanStub) bool {
		return attr(s, tracing.RequestID) == "tree-trace-1"
	})
	if request.SpanContext.TraceID().String() != callerTrace || request.Parent.SpanID().String() != callerSpan || !request.Parent.IsRemote() {
		t.Errorf("the request's span is not the caller's span's child: trace %s, parent %s", request.SpanContext.TraceID(), request.Parent.SpanID())
	}
	if request.SpanKind != trace.SpanKindServer || request.Name != "POST /graphql" || attr(request, tracing.Organization) != org {
		t.Errorf("request span %q (%s): organization %q, want %q", request.Name, request.SpanKind, attr(request, tracing.Organization), org)
	}
	line := "request_id=tree-trace-1 trace_id=" + callerTrace + " span_id=" + request.SpanContext.SpanID().String()
	if !strings.Contains(logs.String(), line) {
		t.Errorf("no log line with %q:\n%s", line, logs.String())
	}

	// Every span of the trace descends from the request's.
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range spans {
		if s.SpanContext.TraceID() == request.SpanContext.TraceID() {
			byID[s.SpanContext.SpanID()] = s
		}
	}
	names := map[string]bool{}
	statements := 0
	for _, s := range byID {
		names[s.Name] = true
		up := s
		for up.SpanContext.SpanID() != request.SpanContext.SpanID() {
			parent, ok := byID[up.Parent.SpanID()]
			if !ok {
				t.Fatalf("span %q is not under the request's", s.Name)
			}
			up = parent
		}
		if !isStatement(s) {
			continue
		}
		statements++
		// One PostgreSQL's pool; on a Citus cluster (DOCSAPI_TEST_CITUS) the
		// organization's worker's.
		wantPool := "primary"
		if pgtest.Citus() {
			wantPool = "worker"
		}
		if pool := attr(s, tracing.DBPool); pool != wantPool {
			t.Errorf("statement %q ran on pool %q, want %s", attr(s, "db.query.text"), pool, wantPool)
		}
		if text := attr(s, "db.query.text"); strings.Contains(text, org) || strings.Contains(text, site) {
			t.Errorf("a statement's text carries a value: %s", text)
		}
	}
	if statements != counted {
		t.Errorf("%d statements' spans, the store counted %d", statements, counted)
	}
	for _, name := range []string{"query Tree", "Query.site", "load SiteSections"} {
		if !names[name] {
			t.Errorf("no span %q in the trace: %v", name, names)
		}
	}
}

// A webhook's delivery is a span of the job that delivers it, and the
// receiver is sent its trace context; the job's span links to the request
// whose change made the event.
func TestDeliveryCarriesTraceContext(t *testing.T) {
	t.Parallel()
	provider, exporter := newTracing(t)
	env := servertest.New(t, servertest.Options{Jobs: true, Tracing: provider})
	vendor := env.NewUser("Vendor")
	org := vendor.NewOrg("Vendor Inc")
	base := "/v1/integrations/traced"
	vendor.Do("POST", base, publishBody(org, nil)).Expect(http.StatusOK)
	rc := newReceiver(t, func(int) int { return http.StatusOK })
	vendor.Do("PUT", base+"/dev", map[string]any{"tunnelUrl": rc.URL}).Expect(http.StatusNoContent)
	vendor.DoWith("POST", base+"/installations", map[string]any{"organization": org},
		http.Header{"X-Request-Id": {"install-1"}}).Expect(http.StatusCreated)
	id := eventIDs(vendor, base)[0]
	awaitStatus(t, vendor, base, id, "success")

	got := rc.received(id)
	if len(got) != 1 {
		t.Fatalf("%d deliveries", len(got))
	}
	parts := strings.Split(got[0].Traceparent, "-")
	if len(parts) != 4 {
		t.Fatalf("the delivery's traceparent is %q", got[0].Traceparent)
	}
	delivery, _ := awaitSpan(t, exporter, "the delivery", func(s tracetest.SpanStub) bool {
		return s.Name == "deliver integration event" && s.SpanContext.SpanID().String() == parts[2]
	})
	if delivery.SpanContext.TraceID().String() != parts[1] || attr(delivery, tracing.Organization) != org || delivery.SpanKind != trace.SpanKindClient {
		t.Errorf("delivery span: trace %s (traceparent %s), organization %q", delivery.SpanContext.TraceID(), got[0].Traceparent, attr(delivery, tracing.Organization))
	}
	install, _ := awaitSpan(t, exporter, "the installation's request", func(s tracetest.SpanStub) bool {
		return attr(s, tracing.RequestID) == "install-1"
	})
	job, _ := awaitSpan(t, exporter, "the delivery's job", func(s tracetest.SpanStub) bool {
		return s.SpanContext.SpanID() == delivery.Parent.SpanID()
	})
	if job.Name != "river.work/deliver_integration_event" {
		t.Errorf("the delivery's parent is %q", job.Name)
	}
	for _, l := range job.Links {
		if l.SpanContext.TraceID() == install.SpanContext.TraceID() {
			return
		}
	}
	t.Errorf("the job's span links to %v, not to the installation's trace %s", job.Links, install.SpanContext.TraceID())
}
