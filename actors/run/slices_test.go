package run_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/fakes"
)

// spinPlan is a workflow whose only step is a when routing to itself: it
// never waits on a call, and only its step budget ends it.
func spinPlan(t *testing.T) workflow.Plan {
	t.Helper()
	is := is.New(t)
	is.Helper()
	draft, diags := workflow.ParseDraft(workflow.Object{"name": "spin", "start": "spin", "steps": workflow.Object{
		"spin": workflow.Object{"when": workflow.Object{
			"if":   workflow.Object{"op": "eq", "left": workflow.Object{"value": 1}, "right": workflow.Object{"value": 1}},
			"then": "spin"}}}})
	is.Equal(diags, nil) // the spin draft parses
	plan, err := workflow.Compile(draft)
	is.NoErr(err) // compile the spin draft
	return plan
}

// spinning is a spin run spawned on runs: its actor and the answers it
// gives.
type spinning struct {
	pid     *actor.PID
	started *reply.Expected[run.Started]
	done    *reply.Expected[run.Stopped]
}

// spin spawns a run of spinPlan with a budget of maxSteps and the given
// record (a new run when its checkpoint is nil) and deadline (none when
// zero), committing to runs.
func (w *world) spin(t *testing.T, rec store.Run, maxSteps int, deadline time.Time, runs store.Runs) spinning {
	t.Helper()
	s := spinning{started: reply.Expect[run.Started](w.replies), done: reply.Expect[run.Stopped](w.replies)}
	s.pid = w.engine.Spawn(run.New(run.Spec{
		Record: rec, Program: workflow.Program{Root: spinPlan(t)}, Options: workflow.Options{MaxSteps: maxSteps},
		Deadline: deadline, Supervisor: w.sup.PID(), Lines: w.sup.Lines(), Store: runs,
		CallTimeout: 2 * time.Second, StoreTimeout: 2 * time.Second,
		Started: s.started.To(), Done: s.done.To(),
	}), "run", actor.WithID(incarnation(rec.ID)))
	return s
}

// newSpinRecord is the record of a new spin run.
func newSpinRecord(id string) store.Run {
	now := time.Now().UTC()
	return store.Run{ID: id, Status: store.RunRunning, ResumeReadiness: "not_applicable", CreatedAt: now, UpdatedAt: now}
}

// acknowledged waits for s's start acknowledgement and checks that it
// came before any step ran.
func (s spinning) acknowledged(t *testing.T) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	ack, err := s.started.Wait(wait(t))
	is.NoErr(err)                              // the start is acknowledged
	is.NoErr(ack.Error.Err())                  // as committed
	is.Equal(ack.Run.Status, store.RunRunning) // running
	is.Equal(ack.Run.TraceCount, 0)            // before any step ran
}

// heldSpin spawns, in a new world, a new spin run id of maxSteps and
// deadline (none when zero), whose progress commits held holds until the
// test opens it, and checks that it is acknowledged before any step.
func heldSpin(t *testing.T, id string, maxSteps int, deadline time.Time) (*world, spinning, *fakes.HeldRuns) {
	t.Helper()
	w := newWorld(t)
	held := fakes.NewHeldRuns(w.store)
	s := w.spin(t, newSpinRecord(id), maxSteps, deadline, held)
	s.acknowledged(t)
	return w, s, held
}

// firstSlice waits for the first commit of a run's steps, which held
// holds, and checks that it holds one slice of them.
func firstSlice(t *testing.T, held *fakes.HeldRuns) store.Run {
	t.Helper()
	is := is.New(t)
	is.Helper()
	first, err := held.Held(wait(t))
	is.NoErr(err)                                                        // the first slice commits
	is.True(first.TraceCount >= 1 && first.TraceCount <= run.SliceSteps) // one slice of steps
	return first
}

// stopped waits for s's final record.
func (s spinning) stopped(t *testing.T) store.Run {
	t.Helper()
	is := is.New(t)
	is.Helper()
	stopped, err := s.done.Wait(wait(t))
	is.NoErr(err) // the run stops
	return stopped.Run
}

func TestANewRunIsCreatedAndAcknowledgedBeforeAnyOfItsStepsRuns(t *testing.T) {
	is := is.New(t)
	w, s, held := heldSpin(t, "run-early", 5000, time.Time{})
	created, err := w.store.GetRun(wait(t), "run-early")
	is.NoErr(err)                              // the run is stored once acknowledged
	is.Equal(created.Status, store.RunRunning) // running
	is.Equal(created.TraceCount, 0)            // with no step yet
	is.Equal(created.Checkpoint.Steps, 0)
	held.Open()
	final := s.stopped(t)
	is.Equal(final.Status, store.RunFailed) // its budget ends it
	is.Equal(final.TraceCount, 5000)
}

func TestACancelIsTakenBetweenTwoSlicesOfPureSteps(t *testing.T) {
	is := is.New(t)
	w, s, held := heldSpin(t, "run-cancel", 100_000, time.Time{})
	first := firstSlice(t, held)
	cancelled := reply.Expect[run.Stopped](w.replies)
	w.engine.Send(s.pid, run.Cancel{Reason: "enough", Reply: cancelled.To()})
	held.Open()
	final, err := cancelled.Wait(wait(t))
	is.NoErr(err) // the cancel is answered
	is.Equal(final.Run.Status, store.RunCancelled)
	is.Equal(final.Run.TraceCount, first.TraceCount) // no slice ran after the cancel
	stored, err := w.store.GetRun(wait(t), "run-cancel")
	is.NoErr(err)
	is.Equal(stored.Status, store.RunCancelled) // committed
	is.Equal(*stored.Error, "cancelled: enough")
}

func TestTheRunDeadlineIsTakenBetweenTwoSlicesOfPureSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		deadline := time.Now().Add(time.Second)
		_, s, held := heldSpin(t, "run-late", 100_000, deadline)
		first := firstSlice(t, held)
		// The bubble's clock moves to the deadline while the commit is
		// held; synctest.Wait returns once the run has taken it.
		time.Sleep(time.Until(deadline))
		synctest.Wait()
		held.Open()
		final := s.stopped(t)
		is.Equal(final.Status, store.RunFailed)
		is.True(*final.Error == "run deadline "+deadline.UTC().Format(time.RFC3339)+" passed") // the deadline ended it
		is.Equal(final.TraceCount, first.TraceCount)                                           // no slice ran after it
	})
}

func TestAHaltIsTakenBetweenTwoSlicesAndTheRecoveredRunGoesOn(t *testing.T) {
	is := is.New(t)
	w, s, held := heldSpin(t, "run-halt", 2500, time.Time{})
	first := firstSlice(t, held)
	w.engine.Send(s.pid, run.Halt{})
	held.Open()
	halted := s.stopped(t)
	is.Equal(halted.Status, store.RunRunning) // halted, not ended
	is.Equal(halted.TraceCount, first.TraceCount)
	stored, err := w.store.GetRun(wait(t), "run-halt")
	is.NoErr(err)
	is.Equal(stored.TraceCount, first.TraceCount)       // the store holds the slice before the halt
	is.Equal(stored.Checkpoint.Ready, []string{"root"}) // with its frame still ready

	// The next start recovers it from there: it goes on to its budget.
	again := w.spin(t, stored, 2500, time.Time{}, w.store)
	final := again.stopped(t)
	is.Equal(final.Status, store.RunFailed)
	is.Equal(final.TraceCount, 2500)
	trace, err := w.store.ReadTrace(wait(t), "run-halt", 0, 0)
	is.NoErr(err)
	is.Equal(len(trace), 2500) // every step once
}

func TestNoCommitOfALoopOfPureStepsHoldsMoreThanOneSlice(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	const budget = 5 * run.SliceSteps
	s := w.spin(t, newSpinRecord("run-long"), budget, time.Time{}, w.writes)
	s.acknowledged(t)
	final := s.stopped(t)
	is.Equal(final.TraceCount, budget)
	commits := w.writes.written()
	is.True(len(commits) >= budget/run.SliceSteps) // a commit per slice
	for i, r := range commits {
		if i > 0 {
			is.True(r.TraceCount-commits[i-1].TraceCount <= run.SliceSteps) // each with one slice at most
		}
	}
}
