package run

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// A commit the store refuses after the run was acknowledged (its disk is
// full, say) is retried: the first retry after commitRetryBase, each next
// one twice as late, up to commitRetryMax, for as long as the actor lives.
// Meanwhile the run holds its state in memory and goes no further: no call
// goes out, the results of those out wait, and the run is, to the store and
// so to every reader, what it last committed (running). Each retry writes
// the run as it stands then, so a cancel or the deadline taken meanwhile is
// in it. A Halt ends the actor between retries (at once, or as the retry
// under way fails), leaving the run as last committed for the next start
// to recover; no write of it is then under way.
const (
	commitRetryBase = 100 * time.Millisecond
	commitRetryMax  = 5 * time.Second
)

// commitDue retries a failed commit.
type commitDue struct{}

// commitFailed holds the state a commit failed to write and schedules its
// retry; cancels waiting for the commit are answered that it is not
// written.
func (a *Actor) commitFailed(m persisted) {
	// What the commit took goes back: the retry writes it with whatever
	// came since.
	a.unsaved = append(m.entries, a.unsaved...)
	a.replaced = append(m.rec.Replaced, a.replaced...)
	a.record.TraceCount -= len(m.entries)
	a.unwritten = m.err
	a.commitFailures++
	a.writing = true // until the retry lands: nothing goes out meanwhile
	if a.halting {
		a.stop()
		return
	}
	backoff := min(commitRetryBase<<min(a.commitFailures-1, 16), commitRetryMax)
	if a.commitFailures == 1 {
		slog.Error("run not committed; it stays as last committed, and the commit is retried until the store takes it",
			"run", a.record.ID, "status", a.committed.Status, "err", m.err)
	}
	a.spec.Metrics.RunCommitFailed()
	a.retryAfter(backoff)
	a.retryPending = true
	a.answerUnwritten()
}

// retryAfter schedules the retry of the failed commit after d, on the
// one retry timer, so that a disk full for hours keeps no timer per retry.
func (a *Actor) retryAfter(d time.Duration) {
	if a.retryTimer != nil {
		a.retryTimer.Stop()
	}
	engine, self := a.engine, a.self
	a.retryTimer = time.AfterFunc(d, func() { engine.Send(self, commitDue{}) })
}

// retryCommit writes the run as it stands now, in place of the commit
// that failed.
func (a *Actor) retryCommit() {
	if a.unwritten == nil || a.halting {
		return
	}
	final := a.exec == nil || a.exec.Status() != workflow.StatusRunning
	a.writing, a.retryPending = false, false
	a.commit(final, false)
}

// committedAgain notes that a commit landed after failed ones.
func (a *Actor) committedAgain() {
	slog.Info("run committed again", "run", a.record.ID, "status", a.record.Status, "failed_commits", a.commitFailures)
	a.unwritten, a.commitFailures = nil, 0
}

// answerUnwritten answers the cancels waiting for a commit that failed:
// each gets the run as last committed, and why its cancel is not written
// yet.
func (a *Actor) answerUnwritten() {
	if a.unwritten == nil {
		return
	}
	why := reply.Fail(fmt.Errorf("run %s is %s but not written yet; the store has it %s until a retry of its commit lands: %w",
		a.record.ID, statusOf(a.exec), a.committed.Status, a.unwritten))
	for _, to := range a.cancelled {
		reply.Send(a.engine, to, Stopped{CorrelationID: to.Correlation, Run: a.committed, Unwritten: why})
	}
	a.cancelled = nil
}
