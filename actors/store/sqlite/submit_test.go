package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// outcomes collects what SubmitCommit reports.
func outcomes() (func(store.CommitOutcome), <-chan store.CommitOutcome) {
	c := make(chan store.CommitOutcome, 1)
	return func(o store.CommitOutcome) { c <- o }, c
}

// outcome waits for the report of a submitted commit.
func outcome(t *testing.T, c <-chan store.CommitOutcome) store.CommitOutcome {
	select {
	case o := <-c:
		return o
	case <-time.After(waitFor):
		is.New(t).Fail() // the writer reports the commit
		return store.CommitOutcome{}
	}
}

func TestASubmittedCommitIsReportedByTheWriterOnceCommitted(t *testing.T) {
	is := is.New(t)
	s := openTest(t, filepath.Join(t.TempDir(), "mcpflow.db"))
	defer s.Close()
	ctx := context.Background()
	r := store.Run{ID: "run", Status: store.RunRunning, UpdatedAt: time.Now()}

	release, held := holdWriter(t, s)
	done, reported := outcomes()
	s.SubmitCommit(ctx, store.Commit{Create: true, Run: r}, done) // returns with the writer held
	select {
	case <-reported:
		is.Fail() // reported before the writer took it
	default:
	}
	release()
	is.NoErr(<-held)
	is.Equal(outcome(t, reported), store.CommitOutcome{})

	// A progress commit with live events: both are written, the events first.
	r.TraceCount = 1
	live := []store.RunEvent{{Kind: store.RunEventStepProgress, TimestampEpochMs: time.Now().UnixMilli(), Step: &store.RunEventStep{NodeID: "a"}, Progress: &store.RunEventProgress{Progress: 1}}}
	done, reported = outcomes()
	s.SubmitCommit(ctx, store.Commit{Run: r, Entries: []workflow.TraceEntry{{NodeID: "a"}}, Live: live}, done)
	is.Equal(outcome(t, reported), store.CommitOutcome{})
	stored, err := s.GetRun(ctx, "run")
	is.NoErr(err)
	is.Equal(stored.TraceCount, 1)
	events, _, err := s.ReadRunEvents(ctx, "run", 0, 0)
	is.NoErr(err)
	is.Equal(events[len(events)-2].Kind, store.RunEventStepProgress) // the live event, before the commit's own

	// A commit the store refuses is reported with its error; its live
	// events are rolled back with it.
	done, reported = outcomes()
	s.SubmitCommit(ctx, store.Commit{Run: r, Live: live}, done) // trace_count stays at 1 with no entry: fine
	is.Equal(outcome(t, reported), store.CommitOutcome{})
	r.TraceCount = 5
	done, reported = outcomes()
	s.SubmitCommit(ctx, store.Commit{Run: r, Live: live}, done)
	o := outcome(t, reported)
	is.True(errors.Is(o.Err, store.ErrConflict)) // 1 entry stored, none appended, 5 claimed
	is.True(o.LiveErr != nil)
}

func TestACommitSubmittedAfterCloseIsRefused(t *testing.T) {
	is := is.New(t)
	s := openTest(t, filepath.Join(t.TempDir(), "mcpflow.db"))
	is.NoErr(s.Close())
	done, reported := outcomes()
	s.SubmitCommit(context.Background(), store.Commit{Create: true, Run: store.Run{ID: "run", Status: store.RunRunning}}, done)
	is.True(errors.Is(outcome(t, reported).Err, ErrClosed))
}

func TestASubmittedCommitWhoseDeadlinePassesWhileQueuedIsNotWritten(t *testing.T) {
	is := is.New(t)
	s := openTest(t, filepath.Join(t.TempDir(), "mcpflow.db"))
	defer s.Close()
	release, held := holdWriter(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	done, reported := outcomes()
	s.SubmitCommit(ctx, store.Commit{Create: true, Run: store.Run{ID: "run", Status: store.RunRunning}}, done)
	cancel()
	release()
	is.NoErr(<-held)
	is.True(errors.Is(outcome(t, reported).Err, context.Canceled))
	_, err := s.GetRun(context.Background(), "run")
	is.True(errors.Is(err, store.ErrNotFound)) // never written
}
