package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// stepUndone returns a write that commits run r's next step as
// RecordProgress does, which caches the run's new head, and then fails:
// its changes, and the head it cached, are undone.
func stepUndone(s *Store, r store.Run, errUndo error) func() error {
	return func() error {
		return s.update(context.Background(), func(ctx context.Context, tx writeTx) error {
			c, err := s.runHead(ctx, tx, r.ID)
			if err != nil {
				return err
			}
			prev := c.head.Run()
			r.TraceCount++
			row, err := s.newRunRow(r)
			if err != nil {
				return err
			}
			entries := []workflow.TraceEntry{stepEntry("count", workflow.End)}
			encoded, err := encodeEntries(r.ID, entries, row.values)
			if err != nil {
				return err
			}
			if err := s.commitRun(ctx, tx, &prev, row, entries, encoded, c.lastSeq, c.journal); err != nil {
				return err
			}
			if _, ok := s.writer.heads.get(r.ID); !ok {
				return errors.New("the commit cached no head")
			}
			return errUndo
		})
	}
}

// openWithRun opens a test store, closed when t ends, holding a new
// running run, which it returns.
func openWithRun(t *testing.T) (*Store, store.Run) {
	s := openTest(t, filepath.Join(t.TempDir(), "mcpflow.db"))
	t.Cleanup(func() { is.New(t).NoErr(s.Close()) })
	r := warmRun(t)
	is.New(t).NoErr(s.CreateRun(t.Context(), r, nil))
	return s, r
}

// TestARolledBackCommitLeavesNoCachedHead undoes a run's step commit, as
// the first write of a batch (its transaction rolled back) and after it
// (its savepoint rolled back): the run's next commit compares the stored
// head, not the one the undone commit cached, and the run's trace and
// events are those of the commits that stood.
func TestARolledBackCommitLeavesNoCachedHead(t *testing.T) {
	for _, first := range []bool{true, false} {
		name := map[bool]string{true: "first write", false: "in a savepoint"}[first]
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			ctx := t.Context()
			s, r := openWithRun(t)
			errUndo := errors.New("undo")
			if first {
				is.True(errors.Is(stepUndone(s, r, errUndo)(), errUndo))
			} else {
				release, held := holdWriter(t, s)
				undone := queue(t, s, stepUndone(s, r, errUndo))
				release()
				is.NoErr(<-held)
				is.True(errors.Is(<-undone, errUndo))
			}
			_, cached := s.writer.heads.get(r.ID)
			is.True(!cached) // the rollback dropped what the undone commit cached

			r.TraceCount++
			is.NoErr(s.RecordProgress(ctx, r, []workflow.TraceEntry{stepEntry("count", workflow.End)})) // trace_count 1 follows the stored 0
			events, last, err := s.ReadRunEvents(ctx, r.ID, 0, 0)
			is.NoErr(err)
			is.Equal(last, int64(2)) // the undone commit's event is gone, and its number reused
			is.Equal([]string{events[0].Kind, events[1].Kind}, []string{store.RunEventStatusChanged, store.RunEventStepFinished})
			// A conflict is still seen through the cached head: trace_count
			// 2 with no entry after 1.
			r.TraceCount++
			err = s.RecordProgress(ctx, r, nil)
			is.True(errors.Is(err, store.ErrConflict))
		})
	}
}
