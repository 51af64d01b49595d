package tracing

import (
	"context"
	"crypto/rand"
	"crypto/sha256"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// runKey carries, in the context a run span starts with, the run's id,
// from which IDs derives the trace id.
type runKey struct{}

// RunTraceID is the trace id of every span of run runID, in each of its
// incarnations (start, resume, recovery after a restart): the first 16
// bytes of SHA-256("mcpflow.run/" + runID). Run ids are random, so trace
// ids stay unique and evenly spread (a ratio sampler keeps or drops a
// run's incarnations alike), and anyone holding a run id can find its
// trace.
func RunTraceID(runID string) trace.TraceID {
	sum := sha256.Sum256([]byte("mcpflow.run/" + runID))
	var id trace.TraceID
	copy(id[:], sum[:len(id)])
	return id
}

// IDs is the id generator of the tracer provider the service installs:
// a run span's trace id is RunTraceID of its run; every other id is
// random. Without it (another provider installed) runs still trace, each
// incarnation in a trace of its own.
func IDs() sdktrace.IDGenerator { return idGenerator{} }

type idGenerator struct{}

// NewIDs returns the ids of a root span.
func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if runID, ok := ctx.Value(runKey{}).(string); ok && runID != "" {
		return RunTraceID(runID), randomSpanID()
	}
	var id trace.TraceID
	for !id.IsValid() {
		_, _ = rand.Read(id[:]) // never fails (crypto/rand)
	}
	return id, randomSpanID()
}

// NewSpanID returns the id of a span in an existing trace.
func (idGenerator) NewSpanID(context.Context, trace.TraceID) trace.SpanID { return randomSpanID() }

func randomSpanID() trace.SpanID {
	var id trace.SpanID
	for !id.IsValid() {
		_, _ = rand.Read(id[:]) // never fails (crypto/rand)
	}
	return id
}
