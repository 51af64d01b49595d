package store

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// A Commit is one commit of a run, handed to the store whole: the live
// events held since the last one (appended first, in a write of their
// own whose failure does not fail the commit), then the run's record and
// its new trace entries, the run created when Create is set
// (Runs.CreateRun, else Runs.RecordProgress).
type Commit struct {
	Create  bool
	Run     Run
	Entries []workflow.TraceEntry
	Live    []RunEvent
}

// CommitOutcome is how a Commit ended: Err is the run's write's error,
// LiveErr its live events'.
type CommitOutcome struct {
	Err, LiveErr error
}

// A Submitter takes a run's commits without a goroutine of the caller's
// waiting for each: the store's own writer reports the outcome. A run
// actor so commits with no goroutine of its own per commit, and its inbox
// stays free (a cancel is taken while the commit is written).
type Submitter interface {
	// SubmitCommit queues c and returns at once; done is called exactly
	// once, with c's outcome, from a goroutine of the store's (or, for a
	// store that writes in place, before SubmitCommit returns). done must
	// not block. A commit not taken by the store before ctx ends is not
	// written, and done gets ctx's error.
	SubmitCommit(ctx context.Context, c Commit, done func(CommitOutcome))
}

// Submit hands c to st: through its own writer when it is a Submitter,
// else by calling its methods on a goroutine that lives for the commit.
func Submit(ctx context.Context, st Runs, c Commit, done func(CommitOutcome)) {
	if s, ok := st.(Submitter); ok {
		s.SubmitCommit(ctx, c, done)
		return
	}
	go func() { done(CommitInPlace(ctx, st, c)) }()
}

// CommitInPlace writes c through st's methods, waiting for each, and
// returns its outcome: how a store that writes in place (or a wrapper
// that is no Submitter) commits.
func CommitInPlace(ctx context.Context, st Runs, c Commit) CommitOutcome {
	var o CommitOutcome
	if len(c.Live) > 0 {
		o.LiveErr = st.AppendRunEvents(ctx, c.Run.ID, c.Live)
	}
	if c.Create {
		o.Err = st.CreateRun(ctx, c.Run, c.Entries)
	} else {
		o.Err = st.RecordProgress(ctx, c.Run, c.Entries)
	}
	return o
}

// SubmitCommit implements Submitter: a memory store writes in place, so
// done is called before it returns.
func (m *Memory) SubmitCommit(ctx context.Context, c Commit, done func(CommitOutcome)) {
	done(CommitInPlace(ctx, m, c))
}
