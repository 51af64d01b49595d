// Package guard owns the recover middleware every mcpflow actor runs
// behind. hollywood v1.0.5 crashes the whole process once an actor exceeds
// its restart budget; with this middleware a panic never reaches hollywood's
// restart path. The actor keeps its state, and the panic becomes a report
// that our own supervision acts on.
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

// Recover returns a middleware that turns a panic in Receive into a call of
// report (which must not block), after logging it.
func Recover(report func(Panic)) actor.MiddlewareFunc {
	return func(next actor.ReceiveFunc) actor.ReceiveFunc {
		return func(c *actor.Context) {
			defer func() {
				if v := recover(); v != nil {
					p := Panic{PID: c.PID(), Message: c.Message(), Value: v, Stack: debug.Stack()}
					slog.Error("actor panicked", "pid", p.PID.String(), "message", fmt.Sprintf("%T", p.Message), "panic", fmt.Sprint(v), "stack", string(p.Stack))
					if report != nil {
						report(p)
					}
				}
			}()
			next(c)
		}
	}
}
