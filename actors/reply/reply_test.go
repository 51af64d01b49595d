package reply_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/reply"
)

// patience bounds every wait that only a broken reply address would reach.
const patience = 5 * time.Second

func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	t.Cleanup(cancel)
	return ctx
}

// returnsAtOnce runs send and fails the test if it blocks.
func returnsAtOnce(t *testing.T, send func()) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		send()
	}()
	select {
	case <-done:
	case <-time.After(patience):
		is.Fail() // the sender never blocks
	}
}

func TestAWaiterKeepsTheFirstReplyAndNeverBlocksTheSender(t *testing.T) {
	is := is.New(t)
	w := reply.NewWaiter[string]()
	to := w.To()
	returnsAtOnce(t, func() {
		to("first")
		to("second") // nobody waits, the slot is taken: dropped
		w.To()("third")
	})
	got, err := w.Wait(bounded(t))
	is.NoErr(err)
	is.Equal(got, "first") // only the first reply is kept

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = w.Wait(ctx)
	is.True(errors.Is(err, context.DeadlineExceeded)) // later replies were dropped, not queued
}

func TestAWaiterDeliversAReplySentWhileItWaits(t *testing.T) {
	is := is.New(t)
	w := reply.NewWaiter[int]()
	go w.To()(42)
	got, err := w.Wait(bounded(t))
	is.NoErr(err)
	is.Equal(got, 42)
}

func TestManyConcurrentSendersNeverBlockAndOneWins(t *testing.T) {
	is := is.New(t)
	w := reply.NewWaiter[int]()
	to := w.To()
	returnsAtOnce(t, func() {
		done := make(chan struct{})
		for i := range 50 {
			go func() {
				to(i)
				done <- struct{}{}
			}()
		}
		for range 50 {
			<-done
		}
	})
	got, err := w.Wait(bounded(t))
	is.NoErr(err)
	is.True(got >= 0 && got < 50) // one of the replies
}

func TestWaitReturnsTheContextsErrorAtTheDeadline(t *testing.T) {
	is := is.New(t)
	w := reply.NewWaiter[string]()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	got, err := w.Wait(ctx)
	is.True(errors.Is(err, context.DeadlineExceeded)) // the deadline ends the wait
	is.Equal(got, "")                                 // with the zero value

	cause := errors.New("client went away")
	cctx, ccancel := context.WithCancelCause(context.Background())
	ccancel(cause)
	_, err = w.Wait(cctx)
	is.True(errors.Is(err, cause)) // a cancellation reports its cause
}

func TestActorDeliversTheReplyToTheActorsInbox(t *testing.T) {
	is := is.New(t)
	e, err := actor.NewEngine(actor.NewEngineConfig())
	is.NoErr(err) // new engine
	got := make(chan string, 1)
	pid := e.SpawnFunc(func(c *actor.Context) {
		if s, ok := c.Message().(string); ok {
			got <- s
		}
	}, "inbox")
	t.Cleanup(func() {
		select {
		case <-e.Poison(pid).Done():
		case <-time.After(patience):
			is.NewRelaxed(t).Fail() // the actor stops in time
		}
	})

	to := reply.Actor[string](e, pid)
	returnsAtOnce(t, func() { to("hello") })
	select {
	case s := <-got:
		is.Equal(s, "hello") // the actor received the reply as a message
	case <-time.After(patience):
		is.Fail() // the reply reaches the actor in time
	}
}
