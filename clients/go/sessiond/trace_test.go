package sessiond

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/metadata"
)

func spanContext(t *testing.T) context.Context {
	t.Helper()
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
	return trace.ContextWithSpanContext(context.Background(), sc)
}

// withPropagator sets the global propagator for one test, then the empty
// (no-op) one again, OpenTelemetry's default.
func withPropagator(t *testing.T, p propagation.TextMapPropagator) {
	t.Helper()
	otel.SetTextMapPropagator(p)
	t.Cleanup(func() { otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator()) })
}

func TestTraceContextSendsTheSpanAsTraceparent(t *testing.T) {
	withPropagator(t, propagation.TraceContext{})
	md, _ := metadata.FromOutgoingContext(traceContext(spanContext(t)))
	got := md.Get("traceparent")
	want := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("traceparent = %v, want [%s]", got, want)
	}
}

func TestTraceContextSendsNothingWithoutAPropagator(t *testing.T) {
	withPropagator(t, propagation.NewCompositeTextMapPropagator())
	if _, ok := metadata.FromOutgoingContext(traceContext(spanContext(t))); ok {
		t.Fatal("metadata added with OpenTelemetry's default (no-op) propagator")
	}
}

func TestTraceContextKeepsTheCallersTraceparent(t *testing.T) {
	withPropagator(t, propagation.TraceContext{})
	mine := "00-11111111111111111111111111111111-2222222222222222-01"
	ctx := metadata.AppendToOutgoingContext(spanContext(t), "traceparent", mine)
	md, _ := metadata.FromOutgoingContext(traceContext(ctx))
	if got := md.Get("traceparent"); len(got) != 1 || got[0] != mine {
		t.Fatalf("traceparent = %v, want [%s]", got, mine)
	}
}
