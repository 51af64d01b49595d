package store

import (
	"context"
	"time"

	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// Observer is told what was committed to the logs that live events follow:
// a run's event log and the admin event log. This node's own commits reach
// it through Observed; in a cluster, the other nodes' reach it through the
// store's announcements (postgres.Listener, whose Waker is an Observer).
// Its methods are called after the commit, on the goroutine of whoever
// tells it (the committer, the listener): they must not block.
type Observer interface {
	// WakeRun says that run id has events up to sequence number seq; 0
	// when the committer does not know the last one (it appended some).
	WakeRun(id string, seq int64)
	// WakeAdmin says that the admin event log has events up to seq; 0
	// when the committer does not know the last one.
	WakeAdmin(seq int64)
	// WakeAll says that any log may have grown, unannounced: every log
	// followed must be read again from where its reader is.
	WakeAll()
}

// Observed returns st as its writers use it when something follows its
// logs: every commit that appends to a run's event log (CreateRun,
// RecordProgress, RecoverRunning, AppendRunEvents) and every admin event appended is told
// to o once it has committed, and timed by m (nil times nothing). A run's
// commit is also told as an admin log's, since it may append admin
// events (RunAdminEvents). A write that fails tells o nothing. Every
// other method is st's own.
func Observed(st Store, o Observer, m *metrics.Metrics) Store {
	return observed{Store: st, observer: o, metrics: m}
}

// observed is a store that tells its observer about commits.
type observed struct {
	Store
	observer Observer
	metrics  *metrics.Metrics
}

func (s observed) CreateRun(ctx context.Context, r Run, entries []workflow.TraceEntry) error {
	defer s.metrics.StoreCommit("create_run")()
	return s.runCommitted(r.ID, s.Store.CreateRun(ctx, r, entries))
}

func (s observed) RecordProgress(ctx context.Context, r Run, entries []workflow.TraceEntry) error {
	defer s.metrics.StoreCommit("record_progress")()
	return s.runCommitted(r.ID, s.Store.RecordProgress(ctx, r, entries))
}

// SubmitCommit implements Submitter: c goes through the observed
// store's writer when it has one, else through this store's methods on
// a goroutine of its own; either way, the observer is told before done.
func (s observed) SubmitCommit(ctx context.Context, c Commit, done func(CommitOutcome)) {
	sub, ok := s.Store.(Submitter)
	if !ok {
		commitApart(ctx, s, c, done)
		return
	}
	stop := s.metrics.StoreCommit(commitKind(c))
	sub.SubmitCommit(ctx, c, func(o CommitOutcome) {
		stop()
		if len(c.Live) > 0 && o.LiveErr == nil {
			s.observer.WakeRun(c.Run.ID, 0)
		}
		o.Err = s.runCommitted(c.Run.ID, o.Err)
		done(o)
	})
}

// commitKind names c's write as the store's commit metric does.
func commitKind(c Commit) string {
	if c.Create {
		return "create_run"
	}
	return "record_progress"
}

func (s observed) AppendRunEvents(ctx context.Context, runID string, events []RunEvent) error {
	defer s.metrics.StoreCommit("append_run_events")()
	err := s.Store.AppendRunEvents(ctx, runID, events)
	if err == nil {
		s.observer.WakeRun(runID, 0)
	}
	return err
}

func (s observed) RecoverRunning(ctx context.Context, now time.Time) ([]Run, error) {
	runs, err := s.Store.RecoverRunning(ctx, now)
	for _, r := range runs {
		_ = s.runCommitted(r.ID, nil)
	}
	return runs, err
}

// runCommitted tells the observer that run id's events and the admin
// events grew, unless the write failed, and returns the write's error.
func (s observed) runCommitted(id string, err error) error {
	if err == nil {
		s.observer.WakeRun(id, 0)
		s.observer.WakeAdmin(0)
	}
	return err
}

func (s observed) AppendEvent(ctx context.Context, e Event) (int64, error) {
	defer s.metrics.StoreCommit("append_event")()
	seq, err := s.Store.AppendEvent(ctx, e)
	if err == nil {
		s.observer.WakeAdmin(seq)
	}
	return seq, err
}
