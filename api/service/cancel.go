package service

import (
	"context"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// cancelRun ends a run as cancelled: a running one through its actor,
// which cancels its calls upstream, on this node or on another; an
// interrupted one in the store.
func (s *Service) cancelRun(ctx context.Context, p protocol.CancelRunParams) (protocol.RunResult, error) {
	final, stopped, err := s.cancelLive(ctx, p.RunID, deref(p.Reason))
	if err != nil {
		return protocol.RunResult{}, err
	}
	if stopped {
		return s.runResult(ctx, final, nil)
	}
	r, err := s.Store.GetRun(ctx, p.RunID)
	if err != nil {
		return protocol.RunResult{}, storeErr(err, fmt.Sprintf("workflow run %q", p.RunID))
	}
	if r.Status != store.RunInterrupted {
		return protocol.RunResult{}, invalid("workflow run %q is %s; only a running or interrupted run can be cancelled", p.RunID, r.Status)
	}
	reason := "cancelled"
	if p.Reason != nil && *p.Reason != "" {
		reason += ": " + *p.Reason
	}
	r.Status, r.Error, r.ResumeReadiness, r.Interrupt = store.RunCancelled, &reason, "not_applicable", nil
	r.UpdatedAt = s.now().UTC()
	if err := s.Store.RecordProgress(ctx, r, nil); err != nil {
		return protocol.RunResult{}, storeErr(err, fmt.Sprintf("workflow run %q", p.RunID))
	}
	// An interrupted run kept its own sessions for its resume.
	s.releaseScope(supervisor.RunScope(r.ID))
	return s.runResult(ctx, r, nil)
}

// cancelLive cancels run id through its actor: the one live on this node,
// else, when the store has the run running, the one some other node runs
// (each peer's desk is asked; the one that runs it forwards the cancel).
// stopped reports whether the run answered with its final record within
// cancelWait; it does not when it was live nowhere, or stopped as the
// request arrived: its record then says how it ended.
func (s *Service) cancelLive(ctx context.Context, id, reason string) (final store.Run, stopped bool, err error) {
	if pid := s.liveRun(id); pid != nil {
		return s.awaitCancel(ctx, id, func(to reply.Address) {
			s.Engine.Send(pid, run.Cancel{Reason: reason, Reply: to})
		})
	}
	if s.Nodes == nil {
		return store.Run{}, false, nil
	}
	peers := s.Nodes.Peers()
	if len(peers) == 0 {
		return store.Run{}, false, nil
	}
	r, err := s.Store.GetRun(ctx, id)
	if err != nil || r.Status != store.RunRunning {
		return store.Run{}, false, nil // the store path answers for it
	}
	return s.awaitCancel(ctx, id, func(to reply.Address) {
		for _, desk := range peers {
			s.Engine.Send(desk, run.CancelByID{RunID: id, Reason: reason, Reply: to})
		}
	})
}

// awaitCancel sends a cancel of run id, addressed for its answer to the
// service's router, and waits up to cancelWait for the run's final
// record. An error means ctx ended.
func (s *Service) awaitCancel(ctx context.Context, id string, send func(reply.Address)) (store.Run, bool, error) {
	done := reply.Expect[run.Stopped](s.Replies)
	defer done.Close()
	send(done.To())
	wctx, cancel := context.WithTimeout(ctx, cancelWait)
	defer cancel()
	final, err := done.Wait(wctx)
	switch {
	case err == nil:
		return final.Run, true, nil
	case ctx.Err() != nil:
		return store.Run{}, false, fmt.Errorf("cancel run %s: %w", id, err)
	default:
		return store.Run{}, false, nil
	}
}
