package reply

import (
	"context"
	"fmt"

	"github.com/anthdm/hollywood/actor"
)

// To delivers one reply of type T. It never blocks.
//
// Deprecated: a closure cannot cross a process boundary; address answers
// with an Address.
type To[T any] func(T)

// Actor addresses replies to an actor's inbox.
//
// Deprecated: use At.
func Actor[T any](e *actor.Engine, pid *actor.PID) To[T] {
	return func(v T) { e.Send(pid, v) }
}

// Waiter is a one-shot reply address for a goroutine that waits.
//
// Deprecated: use Expect.
type Waiter[T any] struct {
	ch chan T
}

// NewWaiter makes a waiter for one reply.
func NewWaiter[T any]() *Waiter[T] {
	return &Waiter[T]{ch: make(chan T, 1)}
}

// To is the reply address; only the first reply is kept.
func (w *Waiter[T]) To() To[T] {
	return func(v T) {
		select {
		case w.ch <- v:
		default:
		}
	}
}

// Wait returns the reply, or ctx's error when it ends first.
func (w *Waiter[T]) Wait(ctx context.Context) (T, error) {
	select {
	case v := <-w.ch:
		return v, nil
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("waiting for reply: %w", context.Cause(ctx))
	}
}
