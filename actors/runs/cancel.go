package runs

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
)

// cancelWait is how long a cancel waits for a live run to commit its end.
const cancelWait = 10 * time.Second

// Cancel ends run id as cancelled, for reason ("" for none), and returns
// its final record: a running one through its actor, which cancels its
// calls upstream, on this node or on another; an interrupted one in the
// store.
//
// A live run whose commit is being retried (its store's disk is full)
// takes the cancel but cannot write it yet: Cancel then fails with a
// StoreError wrapping store.ErrFull, and the run stays running, as last
// committed, until its retry writes it cancelled.
func (m *Manager) Cancel(ctx context.Context, id, reason string) (store.Run, error) {
	final, stopped, err := m.cancelLive(ctx, id, reason)
	if err != nil {
		return store.Run{}, err
	}
	if stopped {
		if err := final.Unwritten.Err(); err != nil {
			return store.Run{}, storeErr(err, fmt.Sprintf("workflow run %q", id))
		}
		return final.Run, nil
	}
	r, err := m.cfg.Store.GetRun(ctx, id)
	if err != nil {
		return store.Run{}, storeErr(err, fmt.Sprintf("workflow run %q", id))
	}
	switch r.Status {
	case store.RunInterrupted:
	case store.RunRunning:
		// Live nowhere that answered within cancelWait: a node that died
		// before another claimed its runs, or one too slow to answer.
		return store.Run{}, invalid("workflow run %q is running, but no live run answered its cancel within %s; retry, or it is recovered at the next start of its node",
			id, cancelWait)
	default:
		return store.Run{}, invalid("workflow run %q is %s; only a running or interrupted run can be cancelled", id, r.Status)
	}
	why := "cancelled"
	if reason != "" {
		why += ": " + reason
	}
	r.Status, r.Error, r.ResumeReadiness, r.Interrupt = store.RunCancelled, &why, "not_applicable", nil
	r.UpdatedAt = m.now().UTC()
	if err := m.cfg.Store.RecordProgress(ctx, r, nil); err != nil {
		return store.Run{}, storeErr(err, fmt.Sprintf("workflow run %q", id))
	}
	// An interrupted run kept its own sessions for its resume.
	m.releaseScope(supervisor.RunScope(r.ID))
	return r, nil
}

// cancelLive cancels run id through its actor: the one live on this node,
// else, when the store has the run running, the one some other node runs
// (each peer's desk is asked; the one that runs it forwards the cancel).
// stopped reports whether the run answered within cancelWait: with its
// final record, or, its commit being retried, with its record as last
// committed and why it is not written (Stopped.Unwritten); it does not when it was live nowhere, or stopped as the
// request arrived: its record then says how it ended.
func (m *Manager) cancelLive(ctx context.Context, id, reason string) (final run.Stopped, stopped bool, err error) {
	if pid := m.liveRun(id); pid != nil {
		return m.awaitCancel(ctx, id, func(to reply.Address) {
			m.cfg.Engine.Send(pid, run.Cancel{Reason: reason, Reply: to})
		})
	}
	if m.cfg.Nodes == nil {
		return run.Stopped{}, false, nil
	}
	peers := m.cfg.Nodes.Peers()
	if len(peers) == 0 {
		return run.Stopped{}, false, nil
	}
	r, err := m.cfg.Store.GetRun(ctx, id)
	if err != nil || (r.Status != store.RunRunning && !waitsUpstream(r)) {
		return run.Stopped{}, false, nil // the store path answers for it
	}
	return m.awaitCancel(ctx, id, func(to reply.Address) {
		for _, desk := range peers {
			m.cfg.Engine.Send(desk, run.CancelByID{RunID: id, Reason: reason, Reply: to})
		}
	})
}

// awaitCancel sends a cancel of run id, addressed for its answer to the
// manager's router, and waits up to cancelWait for the run's answer. An
// error means ctx ended.
func (m *Manager) awaitCancel(ctx context.Context, id string, send func(reply.Address)) (run.Stopped, bool, error) {
	done := reply.Expect[run.Stopped](m.cfg.Replies)
	defer done.Close()
	send(done.To())
	wctx, cancel := context.WithTimeout(ctx, cancelWait)
	defer cancel()
	final, err := done.Wait(wctx)
	switch {
	case err == nil:
		return final, true, nil
	case ctx.Err() != nil:
		return run.Stopped{}, false, fmt.Errorf("cancel run %s: %w", id, err)
	default:
		return run.Stopped{}, false, nil
	}
}
