// Package tracing owns mcpflow's OpenTelemetry tracing: the tracer
// provider runs are traced with (none, so tracing is off, until the
// service installs one), the spans of a run and of its steps, the trace id
// a run gets, the W3C trace context (traceparent, tracestate) a step hands
// its upstream MCP call as plain strings, and the reading of the standard
// OTEL_* variables that decide whether tracing is on. It starts no
// goroutine: exporting is the installed provider's business.
//
// A run actor holds one *Run and calls it from its Receive only; every
// method of a nil *Run does nothing, so a run traced with tracing off
// costs a nil check per hook.
package tracing

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// scope names the instrumentation, as OpenTelemetry's tracer name.
const scope = "github.com/mcpflow/mcpflow/actors/tracing"

// installed is the provider Install set.
type installed struct{ provider trace.TracerProvider }

var current atomic.Pointer[installed]

// Install makes tp the tracer provider of the runs that start from now
// on; nil turns tracing off. The returned func puts back the provider
// installed before, unless another was installed since.
func Install(tp trace.TracerProvider) (restore func()) {
	var next *installed
	if tp != nil {
		next = &installed{provider: tp}
	}
	prev := current.Swap(next)
	return func() { current.CompareAndSwap(next, prev) }
}

// Enabled reports whether a tracer provider is installed.
func Enabled() bool { return current.Load() != nil }

// tracer is the installed provider's tracer, or nil.
func tracer() trace.Tracer {
	h := current.Load()
	if h == nil {
		return nil
	}
	return h.provider.Tracer(scope)
}

// Carrier is a W3C trace context as its two header values: what an
// actor message carries (plain strings) to the upstream call it leads to.
// The zero Carrier carries nothing.
type Carrier struct {
	TraceParent string
	TraceState  string
}

// carrierOf is the trace context of span, as a child of it would see its
// parent. Tracing off (span nil), it is empty.
func carrierOf(span trace.Span) Carrier {
	if span == nil {
		return Carrier{}
	}
	m := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpan(context.Background(), span), m)
	return Carrier{TraceParent: m.Get("traceparent"), TraceState: m.Get("tracestate")}
}

// Meta is the MCP request _meta that carries a trace context upstream
// ({"traceparent": …, "tracestate": …}), or nil when there is none.
func Meta(traceparent, tracestate string) map[string]any {
	if traceparent == "" {
		return nil
	}
	m := map[string]any{"traceparent": traceparent}
	if tracestate != "" {
		m["tracestate"] = tracestate
	}
	return m
}
