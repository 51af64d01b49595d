package reply_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/reply/replytest"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// answer is an answer for the tests.
type answer struct {
	ID   uint64
	Text string
}

func (a answer) Correlation() uint64 { return a.ID }

// other is an answer of another type.
type other struct{ ID uint64 }

func (o other) Correlation() uint64 { return o.ID }

// router spawns a router on a new engine, stopped with the test.
func router(t *testing.T) (*actor.Engine, *reply.Router) {
	t.Helper()
	is := is.New(t)
	e, err := actor.NewEngine(actor.NewEngineConfig())
	is.NoErr(err) // new engine
	return e, replytest.Router(t, e, "test")
}

func TestAnAnswerSentToTheAddressReachesTheWaiter(t *testing.T) {
	is := is.New(t)
	e, r := router(t)
	w := reply.Expect[answer](r)
	to := w.To()
	is.True(!to.IsZero())
	is.Equal(to.PID().ID, "replies/test") // the router's PID
	returnsAtOnce(t, func() { reply.Send(e, to, answer{ID: to.Correlation, Text: "hello"}) })
	got, err := w.Wait(bounded(t))
	is.NoErr(err)
	is.Equal(got.Text, "hello")
	is.Equal(r.Waiting(), 0) // an answered wait leaves nothing behind
}

func TestEachWaiterGetsTheAnswerWithItsOwnCorrelation(t *testing.T) {
	is := is.New(t)
	e, r := router(t)
	first, second := reply.Expect[answer](r), reply.Expect[answer](r)
	is.True(first.To().Correlation != second.To().Correlation) // each expected answer has its own id
	reply.Send(e, second.To(), answer{ID: second.To().Correlation, Text: "second"})
	reply.Send(e, first.To(), answer{ID: first.To().Correlation, Text: "first"})
	a, err := first.Wait(bounded(t))
	is.NoErr(err)
	b, err := second.Wait(bounded(t))
	is.NoErr(err)
	is.Equal(a.Text, "first")
	is.Equal(b.Text, "second")
}

func TestALateAnswerIsDroppedOnceTheWaiterGaveUp(t *testing.T) {
	is := is.New(t)
	e, r := router(t)
	w := reply.Expect[answer](r)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := w.Wait(ctx)
	is.True(errors.Is(err, context.DeadlineExceeded)) // the deadline ends the wait
	is.Equal(r.Waiting(), 0)                          // and the router forgets it at once

	// The late answer and a second one for the same id find nobody: the
	// router drops them, and still serves the next waiter.
	reply.Send(e, w.To(), answer{ID: w.To().Correlation, Text: "late"})
	reply.Send(e, w.To(), answer{ID: w.To().Correlation, Text: "later"})
	next := reply.Expect[answer](r)
	reply.Send(e, next.To(), answer{ID: next.To().Correlation, Text: "next"})
	got, err := next.Wait(bounded(t))
	is.NoErr(err)
	is.Equal(got.Text, "next")
	is.Equal(r.Waiting(), 0)
}

func TestCloseGivesUpWithoutWaiting(t *testing.T) {
	is := is.New(t)
	e, r := router(t)
	w := reply.Expect[answer](r)
	is.Equal(r.Waiting(), 1)
	w.Close()
	w.Close() // idempotent
	is.Equal(r.Waiting(), 0)
	returnsAtOnce(t, func() { reply.Send(e, w.To(), answer{ID: w.To().Correlation}) }) // nobody waits: dropped
}

func TestWaitReportsTheCauseOfACancellation(t *testing.T) {
	is := is.New(t)
	_, r := router(t)
	cause := errors.New("client went away")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	_, err := reply.Expect[answer](r).Wait(ctx)
	is.True(errors.Is(err, cause)) // a cancellation reports its cause
}

func TestAnAnswerOfAnotherTypeIsAnError(t *testing.T) {
	is := is.New(t)
	e, r := router(t)
	w := reply.Expect[answer](r)
	reply.Send(e, w.To(), other{ID: w.To().Correlation})
	_, err := w.Wait(bounded(t))
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "answered with reply_test.other")) // names what came instead
}

func TestManyConcurrentAnswersNeverBlockTheirSenders(t *testing.T) {
	is := is.New(t)
	e, r := router(t)
	const n = 50
	waits := make([]*reply.Expected[answer], n)
	for i := range waits {
		waits[i] = reply.Expect[answer](r)
	}
	returnsAtOnce(t, func() {
		done := make(chan struct{})
		for i, w := range waits {
			go func() {
				to := w.To()
				reply.Send(e, to, answer{ID: to.Correlation, Text: string(rune('a' + i%26))})
				reply.Send(e, to, answer{ID: to.Correlation, Text: "duplicate"}) // dropped
				done <- struct{}{}
			}()
		}
		for range n {
			<-done
		}
	})
	for i, w := range waits {
		got, err := w.Wait(bounded(t))
		is.NoErr(err)
		is.Equal(got.Text, string(rune('a'+i%26))) // the first answer of each
	}
	poll.For(t, "no waiter left behind", patience, func() bool { return r.Waiting() == 0 })
}

func TestTheZeroAddressAsksForNoAnswer(t *testing.T) {
	is := is.New(t)
	e, _ := router(t)
	var none reply.Address
	is.True(none.IsZero())
	is.True(none.PID() == nil)
	is.True(reply.At(nil, 7).IsZero())
	returnsAtOnce(t, func() { reply.Send(e, none, answer{ID: 1}) }) // sends nothing
}

func TestAnActorAddressDeliversTheAnswerToItsInbox(t *testing.T) {
	is := is.New(t)
	e, _ := router(t)
	got := make(chan answer, 1)
	pid := e.SpawnFunc(func(c *actor.Context) {
		if a, ok := c.Message().(answer); ok {
			got <- a
		}
	}, "asker")
	t.Cleanup(func() { <-e.Poison(pid).Done() })
	to := reply.At(pid, 42)
	is.Equal(to, reply.Address{Node: pid.Address, Actor: pid.ID, Correlation: 42}) // plain data
	is.True(to.PID().Equals(pid))
	reply.Send(e, to, answer{ID: to.Correlation, Text: "hi"})
	select {
	case a := <-got:
		is.Equal(a, answer{ID: 42, Text: "hi"}) // the actor received the answer as a message
	case <-time.After(patience):
		is.Fail() // the answer reaches the actor in time
	}
}

func TestAnAnswerFromTheRoutersOwnEngineIsHandedOverBySendItself(t *testing.T) {
	is := is.New(t)
	e, r := router(t)
	w := reply.Expect[answer](r)
	reply.Send(e, w.To(), answer{ID: w.To().Correlation, Text: "direct"})
	is.True(w.Arrived()) // there when Send returns: no actor passed it on
	got, err := w.Wait(bounded(t))
	is.NoErr(err)
	is.Equal(got.Text, "direct")
}
