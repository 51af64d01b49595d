package runs_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// A pass-through call is a one-step run of kind passthrough on the
// connection's shared session: the counter the deployment "count" also
// uses counts on from the pass-through's calls; its output is the tool's
// result, whole; a tool error fails the run with the tool's words; and
// arguments the tool's schema refuses start nothing.
func TestAPassthroughCallIsAOneStepRunOnTheSharedSession(t *testing.T) {
	is := is.New(t)
	n := newNode(t)
	ctx := bounded(t)
	call := func(tool string, input workflow.Object) store.Run {
		r, err := n.manager.Passthrough(ctx, runs.PassthroughRequest{Connection: "fake.one", Tool: tool, Input: input, StartedBy: "agent", Wait: patience})
		is.NoErr(err) // the pass-through runs
		return r
	}
	for want := 1.0; want <= 2; want++ {
		r := call("counter", nil)
		is.Equal(r.Status, store.RunCompleted)
		is.Equal(r.Output, workflow.Object{"count": want}) // the tool's structured result, whole
		is.Equal(r.Kind, store.RunPassthrough)
		is.Equal(r.StartedBy, "agent")
		is.Equal(r.DeploymentID, "")
		is.Equal(r.ArtifactID, runs.PassthroughArtifact("fake.one.counter"))
		stored, err := n.store.GetRun(ctx, r.ID)
		is.NoErr(err)                               // recorded
		is.Equal(stored.Kind, store.RunPassthrough) // as a pass-through
	}
	res, err := n.manager.Start(ctx, runs.StartRequest{DeploymentID: "count", Wait: patience})
	is.NoErr(err)
	is.Equal(res.Run.Output["count"], 3.0) // the workflow's run counts on: one session
	is.Equal(res.Run.Kind, "")             // a workflow's run has no kind

	echoed := call("echo", workflow.Object{"message": "hi"})
	is.Equal(echoed.Output, workflow.Object{"message": "hi"})

	failed := call("fail", workflow.Object{"message": "boom"})
	is.Equal(failed.Status, store.RunFailed)
	is.True(failed.Error != nil && strings.Contains(*failed.Error, "boom")) // the tool's words

	_, err = n.manager.Passthrough(ctx, runs.PassthroughRequest{Connection: "fake.one", Tool: "echo", Input: workflow.Object{"message": 7}})
	var refused *runs.Error
	is.True(errors.As(err, &refused)) // arguments the schema refuses
	is.Equal(refused.Kind, runs.InvalidParams)
	_, err = n.manager.Passthrough(ctx, runs.PassthroughRequest{Connection: "fake.one", Tool: "nope"})
	is.True(errors.As(err, &refused)) // a tool the catalog lacks
	is.Equal(refused.Message, `connection "fake.one" has no tool "nope" in its catalog`)
}

// A pass-through run cut off by a stop goes on at the next start from
// its tool's contract (its artifact is stored nowhere): made again when
// the tool is safe to repeat (idle: idempotentHint), failed otherwise
// (sleep), its outcome being unknown.
func TestAPassthroughCutOffByAStopIsMadeAgainOnlyIfSafe(t *testing.T) {
	is := is.New(t)
	before := newNode(t)
	ctx := bounded(t)
	inFlight := func(tool string) store.Run {
		r, err := before.manager.Passthrough(ctx, runs.PassthroughRequest{Connection: "fake.one", Tool: tool, Input: workflow.Object{"ms": 1000}}) // wide enough to see the call in flight, within the 2 s call timeout
		is.NoErr(err)                                                                                                                              // the pass-through starts
		return poll.Value(t, tool+"'s call committed in flight", patience, func() (store.Run, bool) {
			stored, err := before.store.GetRun(ctx, r.ID)
			return stored, err == nil && stored.Checkpoint != nil && len(stored.Checkpoint.Calls) == 1
		})
	}
	idle, sleep := inFlight("idle"), inFlight("sleep")

	after := newNode(t) // a new start, over the records the stop left
	for _, r := range []store.Run{idle, sleep} {
		is.NoErr(after.store.CreateRun(ctx, r, nil))
	}
	got, err := after.manager.Recover(ctx)
	is.NoErr(err)
	is.Equal(got, runs.Recovered{Resumed: 1, Failed: 1})
	resumed := poll.Value(t, "the idle call made again", patience, func() (store.Run, bool) {
		r, err := after.store.GetRun(ctx, idle.ID)
		return r, err == nil && r.Status != store.RunRunning
	})
	if resumed.Status != store.RunCompleted {
		t.Logf("resumed: %s %v", resumed.Status, *resumed.Error)
	}
	is.Equal(resumed.Status, store.RunCompleted)
	is.Equal(resumed.Output, workflow.Object{"slept_ms": 1000.0})
	failed, err := after.store.GetRun(ctx, sleep.ID)
	is.NoErr(err)
	is.Equal(failed.Status, store.RunFailed) // not safe to repeat
	is.Equal(failed.Kind, store.RunPassthrough)
}
