package sqlite

import (
	"cmp"
	"context"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/store"
)

// SubmitCommit implements store.Submitter: c is queued to the writer as
// one write (its live events first, in a savepoint of their own), and done
// is called by the writer once it has committed (or failed). Their records are encoded
// here, on the caller's goroutine, as CreateRun and RecordProgress
// encode them on theirs.
func (s *Store) SubmitCommit(ctx context.Context, c store.Commit, done func(store.CommitOutcome)) {
	var o store.CommitOutcome
	if s.writer == nil {
		o.Err, o.LiveErr = errReadOnly, errReadOnly
		done(o)
		return
	}
	what, fn, err := s.commitWrite(c)
	if err != nil {
		o.Err = fmt.Errorf("%s: %w", what, err)
		done(o)
		return
	}
	if len(c.Live) > 0 {
		fn = s.withLive(c.Run.ID, c.Live, fn, &o.LiveErr)
	}
	s.submit(ctx, fn, func(err error) {
		if err != nil {
			o.Err = fmt.Errorf("%s: %w", what, err)
			o.LiveErr = cmp.Or(o.LiveErr, o.Err) // rolled back with it
		}
		done(o)
	})
}

// withLive is fn after the live events of run runID are appended in a
// savepoint of its own: their failure is told to liveErr, and fn goes on.
func (s *Store) withLive(runID string, live []store.RunEvent, fn writeFn, liveErr *error) writeFn {
	return func(ctx context.Context, tx writeTx) error {
		own, fatal := inSavepoint(ctx, tx, s.liveEvents(runID, live))
		if fatal != nil {
			return fatal
		}
		if own != nil {
			s.writer.heads.drop() // the savepoint undid what the cache may hold
			*liveErr = fmt.Errorf("append events to run %q: %w", runID, own)
		}
		return fn(ctx, tx)
	}
}

// commitWrite is the run's write of c, and what it is called in its error.
func (s *Store) commitWrite(c store.Commit) (string, writeFn, error) {
	if c.Create {
		what := fmt.Sprintf("create run %q", c.Run.ID)
		fn, err := s.creation(c.Run, c.Entries)
		return what, fn, err
	}
	what := fmt.Sprintf("record progress of run %q", c.Run.ID)
	fn, err := s.progress(c.Run, c.Entries)
	return what, fn, err
}

// submit queues fn to the writer without waiting (writer.submit); then
// gets its outcome as update would return it. The writer reports it:
// a write that succeeds on a disk with room is told then at once, on the
// writer's goroutine; any other is told from a goroutine of its own,
// since telling s.space of a change of the disk's state may append an
// admin event (a write, which the writer can not wait for).
func (s *Store) submit(ctx context.Context, fn writeFn, then func(error)) {
	s.writer.submit(ctx, fn, func(err error) {
		if err == nil && !s.full.Load() {
			then(nil)
			return
		}
		go func() { then(s.observe(err)) }()
	})
}
