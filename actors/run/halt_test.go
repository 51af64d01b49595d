package run_test

import (
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// TestHaltStopsARunWithoutEndingIt: a run halted (as at shutdown) while
// its call is out stops, and stays running in the store with the
// checkpoint that lists the call, for the next start to recover.
func TestHaltStopsARunWithoutEndingIt(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	plan := w.plan(t, "sleep")
	targets, err := run.Resolve(workflow.Program{Root: plan}, nil, func(c string) bool { return c == "fake.one" })
	is.NoErr(err)
	done := reply.Expect[run.Stopped](w.replies)
	now := time.Now().UTC()
	pid := w.engine.Spawn(run.New(run.Spec{
		Record:  store.Run{ID: "run-halt", Status: store.RunRunning, Input: workflow.Object{"ms": 60_000}, CreatedAt: now, UpdatedAt: now},
		Program: workflow.Program{Root: plan}, Targets: targets,
		Supervisor: w.sup.PID(), Lines: w.sup.Lines(), Store: w.store,
		CallTimeout: 2 * time.Minute, StoreTimeout: 2 * time.Second, Done: done.To(),
	}), "run", actor.WithID("run-halt"))

	// Wait until the commit that lists the call is stored (the call goes
	// out right after it).
	poll.For(t, "the call committed", patience, func() bool {
		r, err := w.store.GetRun(wait(t), "run-halt")
		return err == nil && r.Checkpoint != nil && len(r.Checkpoint.Calls) == 1
	})
	w.engine.Send(pid, run.Halt{})
	stopped, err := done.Wait(wait(t))
	final := stopped.Run
	is.NoErr(err)                            // the halted run stops
	is.Equal(final.Status, store.RunRunning) // without ending
	stored, err := w.store.GetRun(wait(t), "run-halt")
	is.NoErr(err)
	is.Equal(stored.Status, store.RunRunning) // the store holds its last commit
	is.Equal(len(stored.Checkpoint.Calls), 1) // with the call it had out
	is.Equal(stored.CurrentStep, "call")
}
