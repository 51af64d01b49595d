package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// Multi round-trip requests (MCP 2026-07-28). A server of the stateless
// era answers a call input_required: its input requests and an opaque
// requestState (session.InputRequired). The call is over: the run keeps
// the round in the call of its checkpoint (workflow.Call.Asked) and is
// interrupted with its first unanswered request, of kind elicitation or
// sampling as when a legacy server sends the request during the call.
// Once nothing else runs, the run actor stops, as at a workflow
// interrupt: the run is interrupted in the store, and its resume, on any
// node, after any restart, starts an actor that answers the request
// (AnswerInput) and, once every request of the round is answered, makes
// the call again with the answers and the requestState.

// maxInputRounds bounds the input_required answers to one call, as
// go-sdk's own client does.
const maxInputRounds = 10

// Why a call that asked for input fails: too many rounds, or a sampling
// request its resume declined (the stateless era has no error answer to
// one input request). Neither is retried under the step's retry.
var (
	ErrInputRounds      = errors.New("input_required")
	ErrSamplingDeclined = errors.New("sampling declined")
)

// inputPrefix starts the id of the interrupt of an input request:
// "input:<call id>:<request id>".
const inputPrefix = "input:"

// IsInputInterrupt reports whether in is the interrupt of an input
// request a stateless-era server answered a call with.
func IsInputInterrupt(in *workflow.Interrupt) bool {
	return in != nil && IsUpstreamKind(in.Kind) && strings.HasPrefix(in.ID, inputPrefix)
}

// Parked reports whether r waits on input requests alone: interrupted
// with one, and every call its checkpoint lists waits on an answer. No
// actor holds such a run: a resume starts one.
func Parked(r store.Run) bool {
	if r.Status != store.RunInterrupted || !IsInputInterrupt(r.Interrupt) || r.Checkpoint == nil {
		return false
	}
	for _, c := range r.Checkpoint.Calls {
		if !c.AwaitsInput() {
			return false
		}
	}
	return true
}

// onInputRequired takes a call's input_required answer: the round goes
// into the call (in the execution's snapshot, committed next), the call
// is no longer out, and the run is interrupted with the round's first
// request; a round the session answered whole (roots only, or none: a
// server shedding load) makes the call again at once. A call past
// maxInputRounds fails instead.
func (a *Actor) onInputRequired(id string, f *inflight, in *session.InputRequired) error {
	round := &workflow.InputRound{RequestState: in.RequestState, Round: 1, Requests: []workflow.InputRequest{}}
	if prev := f.call.Asked; prev != nil {
		round.Round = prev.Round + 1
		round.Exchanges = inputExchanges(f.call, f.conn)
	}
	if round.Round > maxInputRounds {
		return fmt.Errorf("%w: the server asked for input %d times in one call; mcpflow answers at most %d rounds", ErrInputRounds, round.Round, maxInputRounds)
	}
	for _, r := range in.Requests {
		var params, answer workflow.Object
		if err := json.Unmarshal(r.Params, &params); err != nil || params == nil {
			return fmt.Errorf("input request %q: the params are not a JSON object", r.ID)
		}
		req := workflow.InputRequest{ID: r.ID, Kind: r.Kind, Params: params}
		if len(r.Answer) > 0 {
			if err := json.Unmarshal(r.Answer, &answer); err != nil {
				return fmt.Errorf("input request %q: the session's answer is not a JSON object", r.ID)
			}
			req.Outcome, req.Answer = "answered", answer
		}
		round.Requests = append(round.Requests, req)
	}
	f.call.Asked = round
	if err := a.exec.SetInput(id, round); err != nil {
		return err
	}
	delete(a.calls, id)
	a.endLive(id)
	if !f.call.AwaitsInput() {
		a.ready = append(a.ready, f.call)
	}
	a.dirty = true
	return nil
}

// parked reports whether the run, having run slice p, waits on input
// requests alone: nothing is out, ready or due, and each outstanding
// call waits on an answer. Its actor then stops with the commit.
func (a *Actor) parked(p workflow.Progress) bool {
	if a.exec.Status() != workflow.StatusRunning || p.More || len(a.ready) > 0 || len(a.calls) > 0 || len(a.asks) > 0 || len(a.results) > 0 {
		return false
	}
	out := a.exec.Outstanding()
	return len(out) > 0 && !slices.ContainsFunc(out, func(c workflow.Call) bool { return !c.AwaitsInput() })
}

// inputStatus sets r, as the execution left it, interrupted with the
// first unanswered input request, unless a live upstream request
// interrupts it already.
func (a *Actor) inputStatus(r *store.Run) {
	if len(a.asks) > 0 || r.Status != store.RunRunning {
		return
	}
	for _, c := range a.exec.Outstanding() {
		if c.AwaitsInput() {
			r.Status, r.Interrupt, r.ResumeReadiness = store.RunInterrupted, inputInterrupt(c, a.spec.Targets[c.Capability].Connection), "ready"
			return
		}
	}
}

// inputInterrupt is the interrupt of call c's first unanswered input
// request, made on connection conn: as that of the same request sent
// during a call (upstreamInterrupt), its id naming the call and the
// request, its payload the round.
func inputInterrupt(c workflow.Call, conn string) *workflow.Interrupt {
	for _, r := range c.Asked.Requests {
		if r.Answer != nil {
			continue
		}
		params, _ := json.Marshal(r.Params) // decoded from JSON
		in, err := upstreamInterrupt(session.UpstreamRequest{Connection: conn, RequestID: r.ID, Kind: r.Kind, Params: params}, c)
		if err != nil { // a kind the session does not hand over
			return nil
		}
		in.ID = inputPrefix + c.ID + ":" + r.ID
		in.Payload["round"] = c.Asked.Round
		return in
	}
	return nil
}

// AnswerInput answers the input request of interrupt in, in exec's
// outstanding call, with outcome and payload: checked as any upstream
// interrupt's answer (the outcome one of in's, an accepted payload
// against its resume schema, with validate when not nil), then recorded
// in the call's round. A refusal is an error wrapping
// workflow.ErrResume, and changes nothing.
func AnswerInput(exec *workflow.Execution, in *workflow.Interrupt, outcome string, payload workflow.Object, validate func(workflow.Object, any) error) error {
	callID, reqID, _ := strings.Cut(strings.TrimPrefix(in.ID, inputPrefix), ":")
	i := slices.IndexFunc(exec.Outstanding(), func(c workflow.Call) bool { return c.ID == callID })
	if i < 0 || !IsInputInterrupt(in) {
		return fmt.Errorf("%w: the run waits on no input request %s", workflow.ErrResume, in.ID)
	}
	c := exec.Outstanding()[i]
	j := slices.IndexFunc(c.Asked.Requests, func(r workflow.InputRequest) bool { return r.ID == reqID && r.Answer == nil })
	if j < 0 {
		return fmt.Errorf("%w: input request %q of step %q is answered already", workflow.ErrResume, reqID, c.NodeID)
	}
	if outcome == "" {
		outcome = in.Outcomes[0]
	}
	if !slices.Contains(in.Outcomes, outcome) {
		return fmt.Errorf("%w: outcome %q is not one of %v", workflow.ErrResume, outcome, in.Outcomes)
	}
	if payload == nil {
		payload = workflow.Object{}
	}
	if outcome == OutcomeAccept && validate != nil {
		if err := validate(in.ResumeSchema, map[string]any(payload)); err != nil {
			return fmt.Errorf("%w: the %s answer does not match the requested schema: %w", workflow.ErrResume, in.Kind, err)
		}
	}
	answer := workflow.Object{} // a declined sampling request: the call fails (send)
	if result, _ := upstreamAnswer(in.Kind, outcome, payload); result != nil {
		if err := json.Unmarshal(result, &answer); err != nil {
			return fmt.Errorf("%w: encode the answer: %w", workflow.ErrResume, err)
		}
	}
	round := *c.Asked
	round.Requests = slices.Clone(round.Requests)
	round.Requests[j].Outcome, round.Requests[j].Answer = outcome, answer
	return exec.SetInput(callID, &round)
}

// answerInputLive answers, in the live actor, the input request the run
// is interrupted with while other calls of its are out.
func (a *Actor) answerInputLive(m AnswerInterrupt) error {
	in := a.record.Interrupt
	if m.InterruptID != "" && m.InterruptID != in.ID {
		return fmt.Errorf("%w: the run waits in interrupt %s, not %s", workflow.ErrResume, in.ID, m.InterruptID)
	}
	if err := AnswerInput(a.exec, in, m.Outcome, m.Payload, a.spec.Options.Validate); err != nil {
		return err
	}
	for _, c := range a.exec.Outstanding() {
		if c.Asked != nil && !c.AwaitsInput() && a.calls[c.ID] == nil && !slices.ContainsFunc(a.ready, func(r workflow.Call) bool { return r.ID == c.ID }) {
			a.ready = append(a.ready, c)
		}
	}
	if !m.Reply.IsZero() {
		a.resumers = append(a.resumers, m.Reply)
	}
	if !m.Done.IsZero() {
		a.waiters = append(a.waiters, m.Done)
	}
	a.repaint()
	return nil
}

// inputRetry is the retry of call c, whose round is answered whole: the
// answers by request id, and the requestState; nil for a call that
// asked for nothing.
func inputRetry(c workflow.Call) (*session.InputRetry, error) {
	if c.Asked == nil {
		return nil, nil
	}
	retry := &session.InputRetry{RequestState: c.Asked.RequestState, Responses: map[string]json.RawMessage{}}
	for _, r := range c.Asked.Requests {
		if r.Kind == session.UpstreamSampling && r.Outcome == OutcomeDecline {
			return nil, fmt.Errorf("%w: the server's sampling request %q was declined by whoever resumed the run, and a stateless-era server cannot be told so: the call is not made again", ErrSamplingDeclined, r.ID)
		}
		data, err := json.Marshal(r.Answer)
		if err != nil {
			return nil, fmt.Errorf("encode the answer to input request %q: %w", r.ID, err)
		}
		retry.Responses[r.ID] = data
	}
	return retry, nil
}

// inputExchanges are the trace's record of call c's input requests made
// on connection conn, every round's, with their answers.
func inputExchanges(c workflow.Call, conn string) []workflow.Object {
	if c.Asked == nil {
		return nil
	}
	out := slices.Clone(c.Asked.Exchanges)
	for _, r := range c.Asked.Requests {
		x := workflow.Object{"kind": r.Kind, "request_id": r.ID, "connection": conn, "request": r.Params, "round": c.Asked.Round}
		if r.Outcome != "" {
			x["outcome"] = r.Outcome
		}
		if r.Answer != nil {
			x["answer"] = r.Answer
		}
		out = append(out, x)
	}
	return out
}

// refuseAnswer answers to who why an AnswerInterrupt was refused; the
// run stays as it is.
func (a *Actor) refuseAnswer(to reply.Address, err error) {
	r := a.record
	r.Checkpoint, r.State = nil, nil
	reply.Send(a.engine, to, Resumed{CorrelationID: to.Correlation, Run: r, Error: reply.Fail(err)})
}
