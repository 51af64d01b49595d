package run_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/schema"
	"github.com/mcpflow/mcpflow/fakes"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// asking is the fake server with the ask tool (fakes.WithAsk).
func asking() *mcp.Server { return fakes.WithAsk(fakes.NewServer()) }

// checked are execution options that check answers against schemas.
var checked = workflow.Options{Validate: schema.Default.Validate}

// stored reads run id from w's store.
func (w *world) stored(t *testing.T, id string) store.Run {
	t.Helper()
	is := is.New(t)
	is.Helper()
	r, err := w.store.GetRun(wait(t), id)
	is.NoErr(err) // the run is stored
	return r
}

// parkedOn checks that r is parked on the ask tool's elicitation of
// round round, and returns its interrupt.
func parkedOn(t *testing.T, r store.Run, round int) *workflow.Interrupt {
	t.Helper()
	is := is.New(t)
	is.Helper()
	is.Equal(r.Status, store.RunInterrupted) // interrupted in the store
	is.True(run.Parked(r))                   // with no call out: nothing waits upstream
	in := r.Interrupt
	is.True(in != nil)
	is.Equal(in.Kind, "elicitation")
	is.True(run.IsInputInterrupt(in))
	is.Equal(in.Outcomes, []string{"accept", "decline", "cancel"})
	is.Equal(in.Payload["message"], "Who are you?")
	is.Equal(fmt.Sprint(in.Payload["round"]), strconv.Itoa(round)) // a number, float64 once stored
	is.Equal(in.ResumeSchema["required"], []any{"name"})           // the requested schema
	calls := r.Checkpoint.Calls
	is.Equal(len(calls), 1)
	for _, c := range calls {
		is.True(c.Asked != nil)
		is.Equal(c.Asked.RequestState, "round-"+strconv.Itoa(round)) // kept in the checkpoint
		is.Equal(c.Asked.Round, round)
		is.Equal(c.Input, workflow.Object{"question": "Who are you?", "rounds": float64(2)}) // and the call's arguments
	}
	return in
}

// TestInputRequiredParksTheRunAndItsResumeRetriesTheCall: a 2026-07-28
// server asks for input twice in one call. Each time the run is
// interrupted in the store with the request and stops (its actor ends:
// nothing waits upstream); a resume, by a new actor built from the
// stored record alone, checks the answer against the requested schema
// and makes the call again with it; the second answer completes the run
// with the server's result, and the step's trace entry records both
// rounds.
func TestInputRequiredParksTheRunAndItsResumeRetriesTheCall(t *testing.T) {
	is := is.New(t)
	w := newWorldSpeaking(t, asking, "2026-07-28")
	plan := w.plan(t, "ask")
	input := workflow.Object{"question": "Who are you?", "rounds": float64(2)}

	ack, final := w.startWith(t, "run-ask", plan, input, checked)
	is.NoErr(ack.Error.Err())
	parkedOn(t, final, 1)
	parkedOn(t, w.stored(t, "run-ask"), 1) // what a restart finds

	// A payload that breaks the schema is refused; the run stays.
	ack, _ = w.spawnRun(t, w.stored(t, "run-ask"), plan, checked, &run.Resume{Outcome: "accept", Payload: workflow.Object{"age": 3}})
	is.True(errors.Is(ack.Error.Err(), workflow.ErrResume)) // refused
	parkedOn(t, w.stored(t, "run-ask"), 1)

	ack, final = w.spawnRun(t, w.stored(t, "run-ask"), plan, checked, &run.Resume{Outcome: "accept", Payload: workflow.Object{"name": "Ada"}})
	is.NoErr(ack.Error.Err())
	parkedOn(t, final, 2) // the server asked again

	ack, final = w.spawnRun(t, w.stored(t, "run-ask"), plan, checked, &run.Resume{Outcome: "accept", Payload: workflow.Object{"name": "Grace"}})
	is.NoErr(ack.Error.Err())
	is.Equal(final.Status, store.RunCompleted)
	is.Equal(final.Output, workflow.Object{"action": "accept", "answer": map[string]any{"name": "Grace"}, "state": "round-2"})

	calls := w.rec.ToolCalls()
	is.Equal(len(calls), 3) // one call, made again after each answer
	trace, err := w.store.ReadTrace(wait(t), "run-ask", 0, 0)
	is.NoErr(err)
	is.Equal(len(trace), 1)
	asked := trace[0].Upstream
	is.Equal(len(asked), 2) // both rounds' requests
	is.Equal(asked[0]["round"], float64(1))
	is.Equal(asked[0]["outcome"], "accept")
	is.Equal(asked[0]["answer"], map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}})
	is.Equal(asked[1]["round"], float64(2))
	is.Equal(asked[1]["connection"], "fake.one")
}

// TestInputRequiredDeclined: a decline reaches the server, whose result
// completes the run.
func TestInputRequiredDeclined(t *testing.T) {
	is := is.New(t)
	w := newWorldSpeaking(t, asking, "2026-07-28")
	plan := w.plan(t, "ask")
	_, final := w.startWith(t, "run-decline", plan, workflow.Object{"question": "Who are you?", "rounds": float64(2)}, checked)
	parkedOn(t, final, 1)

	_, final = w.spawnRun(t, w.stored(t, "run-decline"), plan, checked, &run.Resume{Outcome: "decline"})
	is.Equal(final.Status, store.RunCompleted)
	is.Equal(final.Output, workflow.Object{"action": "decline", "answer": map[string]any{}, "state": "round-1"})
}

// spawnLive starts a run of plan that does not stop (it waits live on
// an upstream request) and returns its record once the store has it
// interrupted.
func (w *world) spawnLive(t *testing.T, id string, plan workflow.Plan, input workflow.Object) store.Run {
	t.Helper()
	is := is.New(t)
	is.Helper()
	l := w.launch(t, id, plan, input, checked, time.Time{})
	is.NoErr(l.ack.Error.Err())
	return poll.Value(t, "the run interrupted in the store", patience, func() (store.Run, bool) {
		r, err := w.store.GetRun(wait(t), id)
		return r, err == nil && r.Status == store.RunInterrupted
	})
}

// TestLegacyElicitationWaitsLive: the same tool on a 2025-11-25 session
// sends elicitation/create during the call (go-sdk's server does it for
// a legacy client): the run is interrupted while its call waits, its
// actor live, as round 1 built it, not parked.
func TestLegacyElicitationWaitsLive(t *testing.T) {
	is := is.New(t)
	w := newWorldServing(t, asking)
	plan := w.plan(t, "ask")
	rec := w.spawnLive(t, "run-legacy", plan, workflow.Object{"question": "Who are you?"})
	is.Equal(rec.Status, store.RunInterrupted)
	is.Equal(rec.Interrupt.Kind, "elicitation")
	is.True(strings.HasPrefix(rec.Interrupt.ID, "upstream:")) // a live request
	is.True(!run.IsInputInterrupt(rec.Interrupt))
	is.True(!run.Parked(rec)) // its call is out
}
