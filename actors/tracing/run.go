package tracing

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// Span names.
const (
	RunSpan  = "workflow.run"
	StepSpan = "workflow.step"
)

// Attribute keys. Spans may carry run ids (metrics may not).
const (
	AttrRunID           = attribute.Key("mcpflow.run.id")
	AttrRunStart        = attribute.Key("mcpflow.run.start") // "new", "resume" or "recover"
	AttrRunStatus       = attribute.Key("mcpflow.run.status")
	AttrRunOutcome      = attribute.Key("mcpflow.run.outcome")
	AttrRunHalted       = attribute.Key("mcpflow.run.halted")
	AttrDeploymentID    = attribute.Key("mcpflow.deployment.id")
	AttrArtifactID      = attribute.Key("mcpflow.artifact.id")
	AttrArtifactVersion = attribute.Key("mcpflow.artifact.version")
	AttrNodeID          = attribute.Key("mcpflow.step.node_id")
	AttrFrameID         = attribute.Key("mcpflow.step.frame_id")
	AttrStepType        = attribute.Key("mcpflow.step.type")
	AttrCapability      = attribute.Key("mcpflow.step.capability")
	AttrConnection      = attribute.Key("mcpflow.step.connection")
	AttrOutcome         = attribute.Key("mcpflow.step.outcome")
	AttrNextNodeID      = attribute.Key("mcpflow.step.next_node_id")
	AttrAttempts        = attribute.Key("mcpflow.step.attempts")
	AttrGeneration      = attribute.Key("mcpflow.session.generation")
)

// Run traces one incarnation of a run: its span, and the spans of the
// steps it runs. Not safe for concurrent use: its run actor calls it from
// its Receive. A nil *Run (tracing off) does nothing.
type Run struct {
	tracer trace.Tracer
	runID  string
	// ctx holds the run span, the parent of every step span.
	ctx  context.Context
	span trace.Span
	// calls are the spans of the call steps in flight, by call id.
	calls map[string]trace.Span
	// finished counts, by frame and node, the call steps whose span
	// Finished ended and whose trace entry the next Steps brings.
	finished map[[2]string]int
}

// StartRun starts the span of one incarnation of run rec: new (no
// checkpoint yet), resumed (resumed set) or recovered after a restart.
// It returns nil when tracing is off. Each incarnation's span is a root
// span; with IDs (the service's provider) all share the run's trace
// (RunTraceID).
func StartRun(rec store.Run, resumed bool) *Run {
	t := tracer()
	if t == nil {
		return nil
	}
	start := "new"
	switch {
	case resumed:
		start = "resume"
	case rec.Checkpoint != nil:
		start = "recover"
	}
	ctx, span := t.Start(context.WithValue(context.Background(), runKey{}, rec.ID), RunSpan,
		trace.WithNewRoot(),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			AttrRunID.String(rec.ID), AttrRunStart.String(start), AttrDeploymentID.String(rec.DeploymentID),
			AttrArtifactID.String(rec.ArtifactID), AttrArtifactVersion.Int(rec.ArtifactVersion),
		))
	return &Run{tracer: t, runID: rec.ID, ctx: ctx, span: span, calls: map[string]trace.Span{}, finished: map[[2]string]int{}}
}

// Attempt notes that one attempt of call goes out (attempt counts from
// 1): the first starts the step's span, a child of the run's; each adds
// an "attempt" event. remote is set when the call goes to an upstream
// (a tool call or a resource read) on connection ("" when not yet
// known). It returns the step's trace context for the upstream request.
func (r *Run) Attempt(call workflow.Call, attempt int, connection string, remote bool) Carrier {
	if r == nil || r.span == nil {
		return Carrier{}
	}
	span, ok := r.calls[call.ID]
	if !ok {
		kind := trace.SpanKindInternal
		if remote {
			kind = trace.SpanKindClient
		}
		attrs := []attribute.KeyValue{
			AttrRunID.String(r.runID), AttrNodeID.String(call.NodeID), AttrFrameID.String(call.FrameID),
			AttrStepType.String(workflow.NodeCall), AttrCapability.String(call.Capability),
		}
		if connection != "" {
			attrs = append(attrs, AttrConnection.String(connection))
		}
		_, span = r.tracer.Start(r.ctx, StepSpan, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
		r.calls[call.ID] = span
	}
	span.AddEvent("attempt", trace.WithAttributes(attribute.Int("attempt", attempt)))
	return carrierOf(span)
}

// Finished ends the span of call, which the run hands res: its outcome,
// attempts and session generation, or its error. A tool error (outcome
// "error") or a lost session (outcome "session_lost", "elicitation_lost") marks the span as
// an error too, though the workflow may route it.
func (r *Run) Finished(call workflow.Call, res workflow.Result) {
	if r == nil {
		return
	}
	span, ok := r.calls[call.ID]
	if !ok {
		return
	}
	delete(r.calls, call.ID)
	span.SetAttributes(AttrAttempts.Int(res.Attempts), AttrGeneration.Int64(res.Generation))
	switch {
	case res.Err != nil:
		span.RecordError(res.Err)
		span.SetStatus(codes.Error, res.Err.Error())
	default:
		span.SetAttributes(AttrOutcome.String(res.Outcome))
		switch res.Outcome {
		case workflow.OutcomeError:
			span.SetStatus(codes.Error, "the tool reported an error")
		case workflow.OutcomeSessionLost:
			span.SetStatus(codes.Error, "the session was lost during the call")
		case workflow.OutcomeElicitationLost:
			span.SetStatus(codes.Error, "the server's request the call waited on was lost with mcpflow's process")
		}
		// Its trace entry comes with the next Steps.
		r.finished[[2]string{call.FrameID, call.NodeID}]++
	}
	span.End()
}

// Steps takes the trace entries the run commits next. The entry of a
// call step whose span Finished ended is skipped; every other entry is a
// step that ran in place (a condition, a join, an end, a pure wf.std node
// spec …) and becomes a span of its own, as brief as it was.
func (r *Run) Steps(entries []workflow.TraceEntry) {
	if r == nil || r.span == nil {
		return
	}
	now := time.Now()
	for _, e := range entries {
		key := [2]string{e.FrameID, e.NodeID}
		if r.finished[key] > 0 {
			r.finished[key]--
			continue
		}
		_, span := r.tracer.Start(r.ctx, StepSpan, trace.WithTimestamp(now), trace.WithAttributes(
			AttrRunID.String(r.runID), AttrNodeID.String(e.NodeID), AttrFrameID.String(e.FrameID),
			AttrStepType.String(e.StepType), AttrOutcome.String(e.Outcome), AttrNextNodeID.String(e.NextNodeID),
		))
		if e.Error != "" {
			span.RecordError(errors.New(e.Error))
			span.SetStatus(codes.Error, e.Error)
		}
		span.End(trace.WithTimestamp(now))
	}
	// Every call finished before this commit has its entry in it.
	clear(r.finished)
}

// End ends the run's span as rec says the incarnation stopped: completed
// (with its outcome), failed (an error, with the run's), cancelled,
// interrupted, or still running (halted by a shutdown). The spans of
// steps still in flight end with it, with an event saying so. End may be
// called again: it does nothing more.
func (r *Run) End(rec store.Run) {
	if r == nil || r.span == nil {
		return
	}
	for id, span := range r.calls {
		span.AddEvent("run stopped during the step", trace.WithAttributes(AttrRunStatus.String(rec.Status)))
		if rec.Status == store.RunFailed {
			span.SetStatus(codes.Error, "the run failed during the step")
		}
		span.End()
		delete(r.calls, id)
	}
	r.span.SetAttributes(AttrRunStatus.String(rec.Status))
	switch rec.Status {
	case store.RunCompleted:
		if rec.Outcome != nil {
			r.span.SetAttributes(AttrRunOutcome.String(*rec.Outcome))
		}
	case store.RunFailed:
		msg := "the run failed"
		if rec.Error != nil {
			msg = *rec.Error
		}
		r.span.RecordError(errors.New(msg))
		r.span.SetStatus(codes.Error, msg)
	case store.RunRunning:
		r.span.SetAttributes(AttrRunHalted.Bool(true))
	}
	r.span.End()
	r.span = nil
}
