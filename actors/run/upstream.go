package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// maxAsks bounds the upstream requests a run holds at once: the one it
// is interrupted with and those waiting behind it (calls on several
// connections). One more is refused, and its server told why.
const maxAsks = 8

// Outcomes of an upstream interrupt's resume.
const (
	OutcomeAccept  = "accept"
	OutcomeDecline = "decline"
	OutcomeCancel  = "cancel"
)

// ErrElicitationLost is why a call fails that waited on its server's
// request (elicitation, sampling) when mcpflow's process stopped, and that
// is not safe to repeat (Spec.Lost): the request died with its session.
// Its text, "elicitation_lost", starts the error; the step may route the
// outcome workflow.OutcomeElicitationLost instead.
var ErrElicitationLost = errors.New(workflow.OutcomeElicitationLost)

// lostAsk answers attempt f with ErrElicitationLost, instead of sending
// it, when its call is one Spec.Lost names; it reports whether it did.
func (a *Actor) lostAsk(f *inflight) bool {
	why, ok := a.spec.Lost[f.call.ID]
	if !ok {
		return false
	}
	delete(a.spec.Lost, f.call.ID) // a later attempt (none: not retryable) would be sent
	a.engine.Send(a.self, answered{corr: f.corr, err: fmt.Errorf("%w: %s", ErrElicitationLost, why)})
	return true
}

// ErrNoUpstreamInterrupt is why an AnswerInterrupt is refused by a run
// that waits on no upstream request (any more).
var ErrNoUpstreamInterrupt = errors.New("the run waits on no upstream request")

// IsUpstreamKind reports whether an interrupt kind is that of a request
// an upstream server sent during a call (elicitation, sampling): the run
// waits in it with its call out, live, rather than stopped.
func IsUpstreamKind(kind string) bool {
	return kind == session.UpstreamElicitation || kind == session.UpstreamSampling
}

// AnswerInterrupt resumes a run interrupted by an upstream request
// (elicitation, sampling) while its call waits: its live actor checks the
// outcome and payload against the interrupt, answers the server, and goes
// on. Reply is answered (Resumed) once the run's record says it runs
// again, or why the answer was refused (the run then stays interrupted);
// Done is answered (Stopped) when the run next stops or pauses.
type AnswerInterrupt struct {
	InterruptID string
	Outcome     string
	Payload     workflow.Object
	Reply       reply.Address
	Done        reply.Address
}

// AnswerByID asks a node's run desk to hand Answer to run RunID, if that
// node runs it; a run it does not run is ignored.
type AnswerByID struct {
	RunID  string
	Answer AnswerInterrupt
}

// Resumed answers AnswerInterrupt: the run's record once the answer is
// committed, or Error (errors.Is workflow.ErrResume) why it was refused.
type Resumed struct {
	CorrelationID uint64
	Run           store.Run
	Error         *reply.Failure
}

// Correlation implements reply.Answer.
func (m Resumed) Correlation() uint64 { return m.CorrelationID }

// upstreamAsk is a request an upstream server sent during one of the
// run's calls, waiting for its answer.
type upstreamAsk struct {
	req       session.UpstreamRequest
	call      string // the call id it came during
	interrupt *workflow.Interrupt
	exchange  workflow.Object // the trace's record of it, answered or not
}

// onUpstreamRequest takes a request the server sent during one of the
// run's calls: the run is interrupted with it (or it waits behind the one
// the run is interrupted with). One the run cannot take is refused.
func (a *Actor) onUpstreamRequest(m session.UpstreamRequest) {
	id, ok := a.byCorr[m.CorrelationID]
	f := a.calls[id]
	switch {
	case !ok || f == nil || a.exec == nil || a.stopping || a.halting:
		a.answerUpstream(m, nil, "the run that made the call no longer waits for it")
		return
	case len(a.asks) >= maxAsks:
		a.answerUpstream(m, nil, fmt.Sprintf("the run already waits on %d upstream requests", len(a.asks)))
		return
	}
	in, err := upstreamInterrupt(m, f.call)
	if err != nil {
		a.answerUpstream(m, nil, err.Error())
		return
	}
	var params workflow.Object
	_ = json.Unmarshal(m.Params, &params) // checked by upstreamInterrupt
	ask := &upstreamAsk{req: m, call: id, interrupt: in,
		exchange: workflow.Object{"kind": m.Kind, "request_id": m.RequestID, "connection": m.Connection, "request": params}}
	a.asks = append(a.asks, ask)
	a.upstream[id] = append(a.upstream[id], ask.exchange)
	if len(a.asks) == 1 {
		a.repaint()
	}
}

// upstreamInterrupt is the interrupt of request m, made during call c.
func upstreamInterrupt(m session.UpstreamRequest, c workflow.Call) (*workflow.Interrupt, error) {
	var params workflow.Object
	if err := json.Unmarshal(m.Params, &params); err != nil || params == nil {
		return nil, fmt.Errorf("the %s request's params are not a JSON object", m.Kind)
	}
	in := &workflow.Interrupt{
		ID: "upstream:" + m.Connection + ":" + m.RequestID, FrameID: c.FrameID, NodeID: c.NodeID, Kind: m.Kind, Resumable: true,
		RequestSchema: workflow.DefaultInterruptSchema(), Typed: true,
	}
	switch m.Kind {
	case session.UpstreamElicitation:
		mode, _ := params["mode"].(string)
		if mode == "" {
			mode = "form"
		}
		in.Payload = workflow.Object{"message": params["message"], "mode": mode, "connection": m.Connection, "request_id": m.RequestID}
		for _, k := range []string{"url", "elicitationId"} {
			if v, ok := params[k]; ok {
				in.Payload[map[string]string{"url": "url", "elicitationId": "elicitation_id"}[k]] = v
			}
		}
		in.Outcomes = []string{OutcomeAccept, OutcomeDecline, OutcomeCancel}
		in.ResumeSchema = workflow.DefaultInterruptSchema()
		if s, ok := params["requestedSchema"].(map[string]any); ok && mode == "form" {
			in.ResumeSchema = s
		}
	case session.UpstreamSampling:
		in.Payload = workflow.Object{"connection": m.Connection, "request_id": m.RequestID}
		for k, v := range params {
			if k != "_meta" {
				in.Payload[k] = v
			}
		}
		if m.Policy == config.PolicyClient {
			in.Payload["policy"] = m.Policy // for the MCP client that started the run
		}
		in.Outcomes = []string{OutcomeAccept, OutcomeDecline}
		in.ResumeSchema = samplingResultSchema()
	default:
		return nil, fmt.Errorf("mcpflow does not answer upstream requests of kind %q", m.Kind)
	}
	return in, nil
}

// samplingResultSchema is what resumes a sampling interrupt: the
// message the model answered (MCP's CreateMessageResult).
func samplingResultSchema() workflow.Object {
	return workflow.Object{
		"type":     "object",
		"required": []any{"role", "content", "model"},
		"properties": map[string]any{
			"role":       map[string]any{"type": "string", "enum": []any{"assistant", "user"}},
			"content":    map[string]any{"type": "object", "required": []any{"type"}, "properties": map[string]any{"type": map[string]any{"type": "string"}}},
			"model":      map[string]any{"type": "string"},
			"stopReason": map[string]any{"type": "string"},
		},
	}
}

// onAnswerInterrupt answers the upstream request the run is interrupted
// with: the outcome and payload are checked, the answer goes to the
// server, and the run, running again (or interrupted with the next
// request), is committed; then Reply is answered.
func (a *Actor) onAnswerInterrupt(m AnswerInterrupt) {
	refuse := func(err error) { a.refuseAnswer(m.Reply, err) }
	if len(a.asks) == 0 && IsInputInterrupt(a.record.Interrupt) && !a.stopping && !a.halting {
		if err := a.answerInputLive(m); err != nil {
			refuse(err)
		}
		return
	}
	if len(a.asks) == 0 || a.stopping || a.halting {
		refuse(fmt.Errorf("%w: %w", workflow.ErrResume, ErrNoUpstreamInterrupt))
		return
	}
	ask := a.asks[0]
	in := ask.interrupt
	if m.InterruptID != "" && m.InterruptID != in.ID {
		refuse(fmt.Errorf("%w: the run waits in interrupt %s, not %s", workflow.ErrResume, in.ID, m.InterruptID))
		return
	}
	outcome := m.Outcome
	if outcome == "" {
		outcome = in.Outcomes[0]
	}
	if !slices.Contains(in.Outcomes, outcome) {
		refuse(fmt.Errorf("%w: outcome %q is not one of %v", workflow.ErrResume, outcome, in.Outcomes))
		return
	}
	payload := m.Payload
	if payload == nil {
		payload = workflow.Object{}
	}
	if outcome == OutcomeAccept && a.spec.Options.Validate != nil {
		if err := a.spec.Options.Validate(in.ResumeSchema, map[string]any(payload)); err != nil {
			refuse(fmt.Errorf("%w: the %s answer does not match the requested schema: %w", workflow.ErrResume, in.Kind, err))
			return
		}
	}
	result, text := upstreamAnswer(in.Kind, outcome, payload)
	ask.exchange["outcome"] = outcome
	if result != nil {
		var shown workflow.Object
		_ = json.Unmarshal(result, &shown)
		ask.exchange["answer"] = shown
	} else {
		ask.exchange["error"] = text
	}
	a.answerUpstream(ask.req, result, text)
	a.asks = a.asks[1:]
	if !m.Reply.IsZero() {
		a.resumers = append(a.resumers, m.Reply)
	}
	if !m.Done.IsZero() {
		a.waiters = append(a.waiters, m.Done)
	}
	a.repaint()
}

// upstreamAnswer is the answer to a request of kind: a result, or the
// text of an error.
func upstreamAnswer(kind, outcome string, payload workflow.Object) (json.RawMessage, string) {
	var v any
	switch {
	case kind == session.UpstreamElicitation && outcome == OutcomeAccept:
		v = map[string]any{"action": OutcomeAccept, "content": map[string]any(payload)}
	case kind == session.UpstreamElicitation:
		v = map[string]any{"action": outcome}
	case outcome == OutcomeAccept:
		v = map[string]any(payload)
	default:
		return nil, "the sampling request was declined by whoever resumed the run"
	}
	data, err := json.Marshal(v)
	if err != nil { // a payload that came as JSON encodes again
		return nil, fmt.Sprintf("encode the answer: %v", err)
	}
	return data, ""
}

// answerUpstream sends the answer to request m back to its session.
func (a *Actor) answerUpstream(m session.UpstreamRequest, result json.RawMessage, errText string) {
	a.engine.Send(a.spec.Supervisor, session.AnswerUpstream{Connection: m.Connection, Scope: m.Scope, RequestID: m.RequestID, Result: result, Error: errText})
}

// onUpstreamWithdrawn forgets a request the server no longer waits on.
func (a *Actor) onUpstreamWithdrawn(m session.UpstreamWithdrawn) {
	i := slices.IndexFunc(a.asks, func(q *upstreamAsk) bool {
		return q.req.RequestID == m.RequestID && q.req.CorrelationID == m.CorrelationID
	})
	if i < 0 {
		return
	}
	if _, answered := a.asks[i].exchange["outcome"]; !answered {
		a.asks[i].exchange["withdrawn"] = m.Reason
	}
	a.asks = slices.Delete(a.asks, i, i+1)
	if i == 0 {
		a.repaint()
	}
}

// dropAsks forgets the requests of call id, which ended: its answer
// came, so the server waits on none of them any more.
func (a *Actor) dropAsks(id string) []workflow.Object {
	first := len(a.asks) > 0 && a.asks[0].call == id
	a.asks = slices.DeleteFunc(a.asks, func(q *upstreamAsk) bool { return q.call == id })
	if first {
		a.dirty = true
	}
	exchanges := a.upstream[id]
	delete(a.upstream, id)
	return exchanges
}

// repaint commits the run's record once its upstream interrupt changed:
// at once, or after the commit in progress.
func (a *Actor) repaint() {
	a.dirty = true
	if !a.writing {
		a.advance()
	}
}

// upstreamStatus sets r, as the execution left it, to what the upstream
// requests say: interrupted with the first, while the execution runs.
func (a *Actor) upstreamStatus(r *store.Run) {
	if len(a.asks) == 0 || r.Status != store.RunRunning {
		return
	}
	r.Status, r.Interrupt, r.ResumeReadiness = store.RunInterrupted, a.asks[0].interrupt, "ready"
}

// answerWaiters tells those waiting for the run to pause that it has, or
// those waiting for an answer to be taken that it was: once per commit
// that leaves the run live.
func (a *Actor) answerWaiters(rec store.Run) {
	rec.Checkpoint, rec.State = nil, nil
	for _, to := range a.resumers {
		reply.Send(a.engine, to, Resumed{CorrelationID: to.Correlation, Run: rec})
	}
	a.resumers = nil
	if rec.Status != store.RunInterrupted {
		return
	}
	for _, to := range a.waiters {
		reply.Send(a.engine, to, Stopped{CorrelationID: to.Correlation, Run: rec})
	}
	a.waiters = nil
}
