package sessiond

import (
	"context"

	"go.opentelemetry.io/otel"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// traceContext adds the trace context of ctx's span to the outgoing
// metadata, as the global OpenTelemetry propagator writes it
// (otel.SetTextMapPropagator(propagation.TraceContext{}) for W3C
// traceparent / tracestate, which the server reads), so that the server's
// spans join the caller's trace. With no propagator set (OpenTelemetry's
// default) or no span in ctx nothing is added; a traceparent the caller put
// in the outgoing metadata is kept.
func traceContext(ctx context.Context) context.Context {
	if md, ok := metadata.FromOutgoingContext(ctx); ok && len(md.Get("traceparent")) > 0 {
		return ctx
	}
	carrier := metadataCarrier{}
	otel.GetTextMapPropagator().Inject(ctx, carrier)
	if len(carrier) == 0 {
		return ctx
	}
	kv := make([]string, 0, 2*len(carrier))
	for k, v := range carrier {
		kv = append(kv, k, v[0])
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

// metadataCarrier lets a propagator write gRPC metadata (keys lower-case).
type metadataCarrier metadata.MD

func (c metadataCarrier) Get(key string) string {
	if v := metadata.MD(c).Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

func (c metadataCarrier) Set(key, value string) { metadata.MD(c).Set(key, value) }

func (c metadataCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// TraceUnaryInterceptor sends the caller's trace context with every unary
// call (see traceContext). Dial installs it outermost, so every retry of a
// call carries the same context.
func TraceUnaryInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply interface{}, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return invoker(traceContext(ctx), method, req, reply, cc, opts...)
	}
}

// TraceStreamInterceptor is TraceUnaryInterceptor for streams (WatchEntries, WatchSessions).
func TraceStreamInterceptor() grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		return streamer(traceContext(ctx), desc, cc, method, opts...)
	}
}
