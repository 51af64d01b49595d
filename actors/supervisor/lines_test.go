package supervisor_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/guard"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// TestCallsOverALineAreAnsweredWhileItsSessionActorIsReplaced sends
// calls over the connection's line without pause while the supervisor
// replaces its session actor six times, by a changed definition and
// after a reported panic: every call is answered, by an upstream or with
// the reason it was not (its session was shutting down), and none is
// lost to an actor stopped under it.
func TestCallsOverALineAreAnsweredWhileItsSessionActorIsReplaced(t *testing.T) {
	is := is.New(t)
	s, _, _ := observed(t, testOptions())
	s.mustCall(t, "fake.one", "counter", nil)

	var answered, refused atomic.Int64
	var lost atomic.Value
	stop := make(chan struct{})
	var callers sync.WaitGroup
	for range 4 {
		callers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				r, err := s.send("fake.one", "counter", nil).Wait(ctx(t))
				switch {
				case err != nil:
					lost.Store(err)
					return
				case errors.Is(r.Error.Err(), session.ErrUnavailable):
					refused.Add(1)
				case r.Error.Err() != nil:
					lost.Store(r.Error.Err())
					return
				default:
					answered.Add(1)
				}
			}
		})
	}
	// The session actor of the k-th incarnation of fake.one.
	incarnation := func(k int) *actor.PID {
		id := "fake.one"
		if k > 1 {
			id = fmt.Sprintf("fake.one#%d", k)
		}
		return s.engine.Registry.GetPID("supervisor/mcp/session", id)
	}
	for k := 1; k <= 6; k++ {
		if k%2 == 1 {
			// A panic reported as the guard reports it (the panic itself
			// would lose the call that caused it: the guard drops it).
			s.engine.Send(s.handle.PID(), guard.Panic{PID: incarnation(k), Message: "test", Value: "injected"})
		} else {
			// A changed definition, which also forgets the panic.
			s.reconcile(t, changed(conns(), "fake.one", func(c *config.Connection) {
				c.Transport.Env = map[string]string{"ROUND": fmt.Sprint(k)}
			}))
		}
		poll.For(t, "the next session actor spawned", patience, func() bool { return incarnation(k+1) != nil })
		is.Equal(s.mustCall(t, "fake.one", "counter", nil)["count"] != nil, true) // the successor serves calls over the line
	}
	close(stop)
	callers.Wait()
	if err, ok := lost.Load().(error); ok {
		t.Logf("a call over the line: %v", err)
	}
	is.Equal(lost.Load(), nil) // every call was answered, by an upstream or with its reason
	t.Logf("%d calls answered, %d refused as their session shut down", answered.Load(), refused.Load())
	is.True(answered.Load()+refused.Load() > 0) // the callers raced the replacements
}
