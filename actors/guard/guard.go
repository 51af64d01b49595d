// Package guard owns the recover guard every mcpflow actor runs behind.
// hollywood v1.0.5 crashes the whole process once an actor exceeds its
// restart budget; behind the guard a panic never reaches hollywood's
// restart path. The actor keeps its state, and the panic becomes a
// report that our own supervision acts on.
package guard

import (
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/anthdm/hollywood/actor"
)

// Panic reports a recovered panic in an actor.
type Panic struct {
	PID     *actor.PID
	Message any
	Value   any
	Stack   []byte
}

// Error describes the panic.
func (p Panic) Error() string {
	return fmt.Sprintf("actor %s panicked on %T: %v", p.PID, p.Message, p.Value)
}

// Producer returns p with every actor it makes behind the guard: a panic
// in the actor's Receive is logged and becomes a call of report (which
// must not block; nil only logs it). The guard wraps the receiver rather
// than being hollywood middleware, which v1.0.5 composes anew for every
// message it delivers: two allocations a message.
func Producer(p actor.Producer, report func(Panic)) actor.Producer {
	return func() actor.Receiver { return &guarded{inner: p(), report: report} }
}

// guarded is an actor behind the guard.
type guarded struct {
	inner  actor.Receiver
	report func(Panic)
}

// Receive hands c to the actor, and recovers the panic it raises.
func (g *guarded) Receive(c *actor.Context) {
	defer func() {
		if v := recover(); v != nil {
			g.panicked(c, v)
		}
	}()
	g.inner.Receive(c)
}

// panicked logs the panic v that the actor raised on c's message, and
// reports it.
func (g *guarded) panicked(c *actor.Context, v any) {
	p := Panic{PID: c.PID(), Message: c.Message(), Value: v, Stack: debug.Stack()}
	slog.Error("actor panicked", "pid", p.PID.String(), "message", fmt.Sprintf("%T", p.Message), "panic", fmt.Sprint(v), "stack", string(p.Stack))
	if g.report != nil {
		g.report(p)
	}
}
