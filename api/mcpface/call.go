package mcpface

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// workflowHandler answers a call of t's tool: it starts a run of the
// deployment and follows it to its end or its interrupt.
func (f *Face) workflowHandler(s *served, t workflowTool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return f.startAndFollow(ctx, s, req, t, req.Params.Arguments)
	}
}

// startAndFollow is a tool call as a run: a retry of a 2026-era
// interrupt goes on with the run it names; anything else starts one.
func (f *Face) startAndFollow(ctx context.Context, s *served, req *mcp.CallToolRequest, t workflowTool, args json.RawMessage) (*mcp.CallToolResult, error) {
	if req.Params.RequestState != "" {
		return f.answerInterrupt(ctx, s, req, t)
	}
	key, err := idempotencyKey(req)
	if err != nil {
		return toolError("%v", err), nil
	}
	runID, refused, err := f.startRun(ctx, s, t, args, key, samples(req))
	if refused != nil || err != nil {
		return refused, err
	}
	return f.followRun(ctx, s, req, t, runID, 0)
}

// startRun starts a run of t's deployment with the tool's arguments,
// without waiting for it (workflow.runs.start, wait false): the run's id,
// or the tool error that tells the model what to correct. key is the
// call's idempotency key, if any; sampling says that the client declared
// sampling, so that the run's sampling requests may come to it.
func (f *Face) startRun(ctx context.Context, s *served, t workflowTool, args json.RawMessage, key *string, sampling bool) (string, *mcp.CallToolResult, error) {
	input := protocol.Object{}
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &input); err != nil {
			return "", toolError("the arguments must be a JSON object: %v", err), nil
		}
	}
	var started protocol.RunResult
	no := false
	params := protocol.StartRunParams{DeploymentID: t.deploymentID, WorkflowInput: input, Wait: &no, IdempotencyKey: key}
	if sampling {
		params.ClientSampling = &sampling
	}
	err := s.api.Call(ctx, protocol.MethodRunsStart, params, &started)
	if refused, ok := invalidInput(err); ok {
		return "", toolError("%s", refused), nil // the model can correct its arguments
	}
	if err != nil {
		return "", nil, sdkError(err)
	}
	if started.RunID == nil { // unrunnable: the deployment's dependencies are broken
		return "", toolError("the workflow cannot run now: %s", started.NextActions.Reason), nil
	}
	return *started.RunID, nil, nil
}

// followRun follows a run from after its event after, sending progress
// when the client asked for it, until it ends (its envelope) or waits in
// an interrupt (handed to interrupted). A cancelled request cancels the
// run; a client that went away leaves it running.
func (f *Face) followRun(ctx context.Context, s *served, req *mcp.CallToolRequest, t workflowTool, runID string, after int64) (*mcp.CallToolResult, error) {
	p := newProgress(req, t.total, time.Duration(f.cfg.HeartbeatMS)*time.Millisecond)
	for {
		stop, cursor, err := f.watchRun(ctx, s, runID, after, p)
		if err != nil {
			if ctx.Err() != nil {
				return nil, f.callEnded(ctx, s, runID)
			}
			return nil, sdkError(err)
		}
		after = cursor
		var r protocol.RunResult
		if err := s.api.Call(ctx, protocol.MethodRunsInspect, protocol.RunIDParams{RunID: runID}, &r); err != nil {
			if ctx.Err() != nil {
				return nil, f.callEnded(ctx, s, runID)
			}
			return nil, sdkError(err)
		}
		switch {
		case r.Status == store.RunInterrupted:
			return f.interrupted(ctx, s, req, t, r, after)
		case store.Terminal(r.Status):
			p.stop()
			if t.answer != nil {
				return t.answer(r), nil
			}
			return result(envelopeOf(r), ""), nil
		case stop == stopLagged:
			continue // subscribe again after the cursor
		}
	}
}

// How a watch of a run stopped.
type stopReason int

const (
	stopEnded       stopReason = iota // the run ended
	stopInterrupted                   // the run waits in an interrupt
	stopLagged                        // the subscription lagged: subscribe again
)

// watchRun subscribes to a run's events after after and reports each as
// progress, until the run ends or is interrupted, or the subscription
// lags. It returns the last sequence number seen.
func (f *Face) watchRun(ctx context.Context, s *served, runID string, after int64, p *progress) (stopReason, int64, error) {
	sub, cancel := context.WithCancel(ctx)
	defer cancel()
	res, events, err := subscribeRun(sub, s, runID, after)
	if err != nil {
		return 0, after, err
	}
	if !res.Active {
		return stopEnded, max(after, res.LastSequence), nil
	}
	for {
		select {
		case <-ctx.Done():
			return 0, after, ctx.Err()
		case <-p.beat():
			p.heartbeat(ctx)
		case n := <-events:
			e, lagged, err := runEventOf(n, runID)
			switch {
			case err != nil:
				return 0, after, err
			case lagged:
				return stopLagged, max(after, e.Seq), nil
			}
			after = e.Seq
			p.event(ctx, e.RunEvent)
			switch {
			case e.Status != nil && e.Status.Terminal:
				return stopEnded, after, nil
			case e.Kind == "interrupted", e.Status != nil && e.Status.Status == store.RunInterrupted:
				return stopInterrupted, after, nil
			}
		}
	}
}

// subscribeRun subscribes to a run's events after after
// (workflow.runs.subscribe) until ctx ends: the subscription, and its
// notifications, held back while eventBuffer of them wait.
func subscribeRun(ctx context.Context, s *served, runID string, after int64) (protocol.SubscribeRunResult, <-chan notification, error) {
	events := make(chan notification, eventBuffer)
	params := protocol.SubscribeRunParams{RunID: runID}
	if after > 0 {
		params.AfterSequence = &after
	}
	var res protocol.SubscribeRunResult
	err := s.api.Subscribe(ctx, protocol.MethodRunsSubscribe, params, &res, func(method string, raw json.RawMessage) {
		select {
		case events <- notification{method, raw}:
		case <-ctx.Done():
		}
	})
	if err != nil {
		return res, nil, fmt.Errorf("follow run %s: %w", runID, err)
	}
	return res, events, nil
}

// runEventOf decodes a notification of a run's subscription: its event,
// or, where the subscription lagged, lagged with the cursor to subscribe
// again after as the event's Seq.
func runEventOf(n notification, runID string) (protocol.RunEventNotification, bool, error) {
	var e protocol.RunEventNotification
	if n.method == "workflow.runs.lagged" {
		var lag protocol.LaggedNotification
		_ = json.Unmarshal(n.params, &lag)
		e.Seq = lag.Cursor
		return e, true, nil
	}
	if err := json.Unmarshal(n.params, &e); err != nil {
		return e, false, fmt.Errorf("run %s: decode an event: %w", runID, err)
	}
	return e, false, nil
}

// eventBuffer bounds the events of one followed run not yet reported; a
// full buffer holds the hub's delivery back, and the hub ends a
// subscription that stays behind (a lag), which is followed again.
const eventBuffer = 64

// notification is one notification of a subscription.
type notification struct {
	method string
	params json.RawMessage
}

// callEnded is what a tool call whose context ended does to its run: a
// cancelled request (notifications/cancelled; in the 2026 era, the
// client closing the request's stream) cancels it, upstream calls
// included; a client that went away (its session's connection lost, the
// server stopping) leaves it running, for mcpflow_get_run.
func (f *Face) callEnded(ctx context.Context, s *served, runID string) error {
	if !errors.Is(context.Cause(ctx), context.Canceled) {
		f.log.Info("mcp face: the client went away; the run goes on", "run_id", runID, "cause", context.Cause(ctx))
		return ctx.Err()
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	reason := "the MCP client cancelled the tool call"
	if err := s.api.Call(cctx, protocol.MethodRunsCancel, protocol.CancelRunParams{RunID: runID, Reason: &reason}, nil); err != nil {
		f.log.Warn("mcp face: cancel the run of a cancelled tool call", "run_id", runID, "err", err)
	}
	return ctx.Err()
}

// cancelTimeout bounds the cancel of a cancelled call's run.
const cancelTimeout = 10 * time.Second

// invalidInput reports whether err refuses the workflow input (-32602),
// and what it says, which names the path at fault.
func invalidInput(err error) (string, bool) {
	var e *jsonrpc.Error
	if errors.As(err, &e) && e.Code == jsonrpc.InvalidParams {
		return said(e), true
	}
	return "", false
}

// said is what a workflow API error says: its detail (data.message),
// else its code's message.
func said(e *jsonrpc.Error) string {
	if d := e.Detail(); d != "" {
		return d
	}
	return e.Message
}
