package reply

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcpflow/mcpflow/actors/guard"
)

// Router is the address of goroutines that wait for answers: one actor
// that hands each answer it receives to the goroutine expecting its
// correlation id (an answer sent from the router's own engine is handed
// over by Send itself, without the actor). A goroutine expects an answer (Expect), puts the
// Expected's address in its request, and waits for it within a deadline;
// once it stops waiting, an answer that arrives late is dropped. It never
// blocks: each expected answer has a slot of its own.
type Router struct {
	engine *actor.Engine
	pid    *actor.PID
	next   atomic.Uint64

	mu sync.Mutex
	// waiting holds a slot (room for one answer) per expected answer, by
	// correlation id, until its answer arrives or its waiter gives up.
	waiting map[uint64]chan Answer
}

// routerKind is the actor kind of routers.
const routerKind = "replies"

// NewRouter spawns a router on e with id name (unique among the engine's
// routers). Stop ends it.
func NewRouter(e *actor.Engine, name string) *Router {
	r := &Router{engine: e, waiting: map[uint64]chan Answer{}}
	r.pid = e.Spawn(guard.Producer(func() actor.Receiver { return routerActor{r} }, nil), routerKind,
		actor.WithID(name))
	r.register()
	return r
}

// Stop stops the router; it returns when it is gone or ctx ends. Those
// still waiting wait until their deadline.
func (r *Router) Stop(ctx context.Context) error {
	r.unregister()
	select {
	case <-r.engine.Poison(r.pid).Done():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop reply router: %w", ctx.Err())
	}
}

// Waiting counts the answers expected now.
func (r *Router) Waiting() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.waiting)
}

// deliver hands a to the goroutine expecting it, if one still does.
func (r *Router) deliver(a Answer) {
	r.mu.Lock()
	slot, ok := r.waiting[a.Correlation()]
	delete(r.waiting, a.Correlation())
	r.mu.Unlock()
	if ok {
		slot <- a // the slot's only answer: never blocks
	}
}

// forget drops the slot of correlation.
func (r *Router) forget(correlation uint64) {
	r.mu.Lock()
	delete(r.waiting, correlation)
	r.mu.Unlock()
}

// routerActor receives the answers.
type routerActor struct{ r *Router }

// Receive hands each answer on; anything else is ignored.
func (a routerActor) Receive(c *actor.Context) {
	if m, ok := c.Message().(Answer); ok {
		a.r.deliver(m)
	}
}

// Expected is one answer of type T that a goroutine expects through a
// Router. Wait or Close ends it.
type Expected[T Answer] struct {
	router *Router
	id     uint64
	slot   chan Answer
}

// Expect makes r expect one answer of type T.
func Expect[T Answer](r *Router) *Expected[T] {
	id := r.next.Add(1)
	slot := make(chan Answer, 1)
	r.mu.Lock()
	r.waiting[id] = slot
	r.mu.Unlock()
	return &Expected[T]{router: r, id: id, slot: slot}
}

// To is the address the request carries.
func (w *Expected[T]) To() Address { return At(w.router.pid, w.id) }

// Wait returns the answer, or ctx's cause when ctx ends first; either way
// the router stops expecting it (a later answer is dropped).
func (w *Expected[T]) Wait(ctx context.Context) (T, error) {
	defer w.Close()
	var zero T
	select {
	case a := <-w.slot:
		v, ok := a.(T)
		if !ok {
			return zero, fmt.Errorf("waiting for %T: answered with %T", zero, a)
		}
		return v, nil
	case <-ctx.Done():
		return zero, fmt.Errorf("waiting for reply: %w", context.Cause(ctx))
	}
}

// Arrived reports, without waiting, whether the answer has arrived (and
// not yet been taken by Wait).
func (w *Expected[T]) Arrived() bool { return len(w.slot) > 0 }

// Close gives the answer up without waiting: a later one is dropped. It
// may be called more than once, and after Wait.
func (w *Expected[T]) Close() { w.router.forget(w.id) }
