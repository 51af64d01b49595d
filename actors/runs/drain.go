package runs

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mcpflow/mcpflow/actors/run"
)

// haltResend is how often Drain tells the runs still live to halt, so
// that one spawned as the drain ended is halted too (Halt is idempotent).
const haltResend = 250 * time.Millisecond

// lifecycle admits run actors until the manager stops, counts the live
// ones, and tells waiting handlers that it stops. Its zero value is ready.
type lifecycle struct {
	mu      sync.Mutex
	closing bool
	ctx     context.Context // done once the service stops accepting runs
	cancel  context.CancelFunc
	runs    sync.WaitGroup // run actors that have not stopped
}

// stopping is done once StopAccepting was called.
func (l *lifecycle) stopping() context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	return l.ctx
}

func (l *lifecycle) init() {
	if l.ctx == nil {
		l.ctx, l.cancel = context.WithCancel(context.Background())
	}
}

// admit counts one more run actor, unless the service is stopping; the
// actor's Done callback releases it.
func (l *lifecycle) admit() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing {
		return false
	}
	l.runs.Add(1)
	return true
}

func (l *lifecycle) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	l.closing = true
	l.cancel()
}

// StopAccepting begins the manager's shutdown: from now on nothing starts
// a run (Start, Resume and Run fail with ErrShuttingDown), and every request still waiting for its run to
// finish answers at once with the run's current state, as when its run
// wait passes. Runs already live go on. It is idempotent.
func (m *Manager) StopAccepting() { m.life.close() }

// RunsStopped says how Drain left the runs that were live.
type RunsStopped struct {
	// Finished ended (or paused) by themselves during the drain.
	Finished int
	// Halted were still running at the drain's end: they stopped at a
	// commit boundary and stay running in the store, for the next start
	// to recover.
	Halted int
}

// Drain stops every run actor, after StopAccepting (which it calls):
// the runs go on until drainUntil, so a step in flight may finish and be
// committed; then each one still running is halted at its next commit
// boundary (run.Halt): nothing is lost, the store holds each run as its
// last commit left it. It returns once every run actor has stopped, or
// with an error when ctx ends first.
func (m *Manager) Drain(ctx context.Context, drainUntil time.Time) (RunsStopped, error) {
	m.StopAccepting()
	gone := make(chan struct{})
	go func() {
		m.life.runs.Wait()
		close(gone)
	}()
	live := m.liveRuns()
	drain := time.NewTimer(time.Until(drainUntil))
	defer drain.Stop()
	select {
	case <-gone:
		return RunsStopped{Finished: live}, nil
	case <-ctx.Done():
		if stoppedBy(gone) {
			return RunsStopped{Finished: live}, nil
		}
		return RunsStopped{}, fmt.Errorf("stop runs: %d still live: %w", m.liveRuns(), ctx.Err())
	case <-drain.C:
	}
	halted := m.liveRuns()
	resend := time.NewTicker(haltResend)
	defer resend.Stop()
	for {
		m.live.Range(func(_, v any) bool {
			if pid := v.(*liveRun).pid.Load(); pid != nil {
				m.cfg.Engine.Send(pid, run.Halt{})
			}
			return true
		})
		select {
		case <-gone:
			return RunsStopped{Finished: live - halted, Halted: halted}, nil
		case <-ctx.Done():
			if stoppedBy(gone) {
				return RunsStopped{Finished: live - halted, Halted: halted}, nil
			}
			return RunsStopped{Finished: live - halted}, fmt.Errorf("stop runs: %d still live: %w", m.liveRuns(), ctx.Err())
		case <-resend.C:
		}
	}
}

// stoppedBy reports whether done is closed, without waiting.
func stoppedBy(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// liveRuns counts the runs whose actor is running.
func (m *Manager) liveRuns() int {
	n := 0
	m.live.Range(func(_, _ any) bool {
		n++
		return true
	})
	return n
}
