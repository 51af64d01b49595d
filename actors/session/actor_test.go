package session_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

func TestConcurrentCallsShareOneSession(t *testing.T) {
	is := is.New(t)
	rec := fakes.NewRecording(fakes.NewInMemory(nil))
	e, pid := spawn(t, rec, testOptions())

	const n = 20
	waiters := make([]*reply.Expected[session.ToolResult], n)
	for i := range n {
		waiters[i] = send(e, pid, "counter", nil, 2*time.Second)
	}
	var counts []int
	for _, w := range waiters {
		r := await(t, w)
		is.NoErr(r.Error.Err())
		is.Equal(r.Outcome, "ok")
		counts = append(counts, int(fakes.ToolOutput(t, r)["count"].(float64)))
	}
	slices.Sort(counts)
	for i, c := range counts {
		is.Equal(c, i+1) // one server counted every call: the calls shared it
	}
	is.Equal(rec.SessionsCreated(), 1)
	is.Equal(len(rec.ToolCalls()), n)
}

func TestStructuredOutputIsReturnedAsTheObject(t *testing.T) {
	is := is.New(t)
	e, pid := spawn(t, fakes.NewInMemory(nil), testOptions())

	r := call(t, e, pid, "echo", map[string]any{"message": "hi"})
	is.NoErr(r.Error.Err())
	is.Equal(r.Outcome, "ok")
	is.Equal(fakes.ToolOutput(t, r), map[string]any{"message": "hi"})
}

func TestCorrelationIDIsEchoed(t *testing.T) {
	is := is.New(t)
	e, pid := spawn(t, fakes.NewInMemory(nil), testOptions())

	w := expect[session.ToolResult](e)
	e.Send(pid, session.CallTool{Connection: connID, Tool: "counter", Deadline: time.Now().Add(2 * time.Second), Reply: w.To()})
	r := await(t, w)
	is.NoErr(r.Error.Err())
	is.Equal(r.CorrelationID, w.To().Correlation)
}

func TestToolErrorIsAnErrorOutcomeNotAnErr(t *testing.T) {
	is := is.New(t)
	e, pid := spawn(t, fakes.NewInMemory(nil), testOptions())

	r := call(t, e, pid, "fail", map[string]any{"message": "boom"})
	is.NoErr(r.Error.Err()) // a tool error is a result
	is.Equal(r.Outcome, "error")
	content, ok := fakes.ToolOutput(t, r)["content"].([]any)
	is.True(ok) // the error text comes as {"content": [...]}
	is.Equal(len(content), 1)
	is.Equal(content[0].(map[string]any)["text"], "boom")
}

func TestToolWithoutStructuredContentYieldsContent(t *testing.T) {
	is := is.New(t)
	newServer := func() *mcp.Server {
		s := fakes.NewServer()
		s.AddTool(&mcp.Tool{Name: "plain", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "just text"}}}, nil
			})
		return s
	}
	e, pid := spawn(t, fakes.NewInMemory(newServer), testOptions())

	out := mustCall(t, e, pid, "plain", nil)
	is.Equal(out, map[string]any{"content": []any{map[string]any{"type": "text", "text": "just text"}}})
}

func TestPassedDeadlineFailsTheCallAndKeepsTheSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		rec := fakes.NewRecording(fakes.NewInMemory(nil))
		e, pid := spawn(t, rec, testOptions())
		mustCall(t, e, pid, "counter", nil) // open the session first

		began := time.Now()
		r := await(t, send(e, pid, "sleep", map[string]any{"ms": 5000}, 100*time.Millisecond))
		is.True(r.Error.Err() != nil)                               // the deadline ended the call
		is.True(errors.Is(r.Error.Err(), context.DeadlineExceeded)) // and says so
		is.Equal(time.Since(began), 100*time.Millisecond)           // at the deadline to the tick, not after the sleep (the bubble's clock)
		is.Equal(mustCall(t, e, pid, "counter", nil)["count"], 2.0) // the same server answers
		is.Equal(rec.SessionsCreated(), 1)
	})
}

func TestCallAlreadyPastItsDeadlineFailsWithErrDeadline(t *testing.T) {
	is := is.New(t)
	rec := fakes.NewRecording(fakes.NewInMemory(nil))
	e, pid := spawn(t, rec, testOptions())

	r := await(t, send(e, pid, "counter", nil, -time.Second))
	is.True(errors.Is(r.Error.Err(), session.ErrDeadline))
	is.Equal(rec.SessionsCreated(), 0) // nothing was opened for it
}

func TestCallBeyondInFlightAndQueueBoundsIsRefused(t *testing.T) {
	is := is.New(t)
	opts := testOptions()
	opts.MaxInFlight, opts.MaxQueued = 1, 1
	e, pid := spawn(t, fakes.NewInMemory(nil), opts)
	mustCall(t, e, pid, "counter", nil) // the session is open

	send(e, pid, "sleep", map[string]any{"ms": 5000}, 3*time.Second) // in flight
	send(e, pid, "sleep", map[string]any{"ms": 5000}, 3*time.Second) // queued
	began := time.Now()
	r := call(t, e, pid, "counter", nil)
	is.True(errors.Is(r.Error.Err(), session.ErrOverloaded))
	is.True(time.Since(began) < time.Second) // refused at once
}

func TestQueuedCallFailsAtItsOwnDeadline(t *testing.T) {
	is := is.New(t)
	opts := testOptions()
	opts.MaxInFlight = 1
	e, pid := spawn(t, fakes.NewInMemory(nil), opts)
	mustCall(t, e, pid, "counter", nil) // the session is open

	running := send(e, pid, "sleep", map[string]any{"ms": 5000}, 10*time.Second)
	queued := send(e, pid, "counter", nil, 100*time.Millisecond)
	r := await(t, queued) // answered while the sleep still holds the only slot
	is.True(errors.Is(r.Error.Err(), session.ErrDeadline))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := running.Wait(ctx)
	is.True(err != nil) // the call in flight has not finished: the queue was swept, not drained
}

func TestStoppingAnswersInFlightAndQueuedCalls(t *testing.T) {
	is := is.New(t)
	opts := testOptions()
	opts.MaxInFlight = 1
	rec := fakes.NewRecording(fakes.NewInMemory(nil))
	e := newEngine(t)
	pid := e.Spawn(newSession(rec, opts), "session")
	mustCall(t, e, pid, "counter", nil)

	running := send(e, pid, "sleep", map[string]any{"ms": 60_000}, 30*time.Second)
	queued := send(e, pid, "counter", nil, 30*time.Second)
	is.True(rec.WaitForToolCalls(2, patience)) // the sleep is at the server

	stop(t, e, pid)
	for _, w := range []*reply.Expected[session.ToolResult]{running, queued} {
		r := await(t, w) // nobody is left waiting for a stopped actor
		is.True(errors.Is(r.Error.Err(), session.ErrUnavailable))
		// Only the call that was never sent may be asked again of the
		// connection's next session actor.
		is.Equal(errors.Is(r.Error.Err(), session.ErrRetired), w == queued)
	}
}

func TestTheDeathOfASessionThatAnsweredACallReopensItAtOnce(t *testing.T) {
	is := is.New(t)
	inMemory := fakes.NewInMemory(nil)
	rec := fakes.NewRecording(inMemory)
	h := spawnWithParent(t, rec, testOptions())

	mustCall(t, h.engine, h.pid, "counter", nil)
	h.waitState(t, session.StateConnecting)
	is.Equal(h.waitState(t, session.StateOpen).Generation, int64(1))

	inMemory.KillAll()
	// Nobody calls: the supervision policy reopens it by itself, at once
	// (it had proved itself), without a backoff.
	st := h.waitState(t, session.StateConnecting)
	is.True(st.LastError != "") // the death is reported
	is.Equal(st.Restarts, 1)
	is.True(st.NextAttemptAt.IsZero())
	is.Equal(h.waitState(t, session.StateOpen).Generation, int64(2))

	out := mustCall(t, h.engine, h.pid, "counter", nil)
	is.Equal(out["count"], 1.0) // a fresh upstream
	is.Equal(rec.SessionsCreated(), 2)
}

func TestCrashingToolFailsAndTheNextCallReconnects(t *testing.T) {
	is := is.New(t)
	rec := fakes.NewRecording(fakes.NewInMemory(nil))
	h := spawnWithParent(t, rec, testOptions())
	mustCall(t, h.engine, h.pid, "counter", nil)
	h.waitState(t, session.StateConnecting)
	h.waitState(t, session.StateOpen)

	r := call(t, h.engine, h.pid, "crash", nil)
	is.True(errors.Is(r.Error.Err(), session.ErrSessionLost)) // the call died with its connection
	is.True(strings.HasPrefix(r.Error.Err().Error(), "session_lost: "))
	is.Equal(r.Generation, int64(1))
	h.waitState(t, session.StateConnecting) // at once: the session had answered a call

	is.Equal(mustCall(t, h.engine, h.pid, "counter", nil)["count"], 1.0)
	is.Equal(rec.SessionsCreated(), 2)
}

func TestACallWaitsThroughAFailedConnectForTheRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		factory := &flakyFactory{inner: fakes.NewInMemory(nil), failures: 2}
		e, pid := spawn(t, factory, testOptions())

		r := call(t, e, pid, "counter", nil) // waits through two refused connects
		is.NoErr(r.Error.Err())
		is.Equal(fakes.ToolOutput(t, r)["count"], 1.0)
		is.Equal(r.Generation, int64(1))
		is.Equal(factory.attempts.Load(), int32(3)) // two refused, one that worked
	})
}

func TestFailedConnectReportsBackoffStatus(t *testing.T) {
	is := is.New(t)
	h := spawnWithParent(t, &flakyFactory{inner: fakes.NewInMemory(nil), failures: 1}, testOptions())

	r := call(t, h.engine, h.pid, "counter", nil)
	is.NoErr(r.Error.Err()) // it waited for the retry
	h.waitState(t, session.StateConnecting)
	st := h.waitState(t, session.StateBackoff)
	is.True(strings.Contains(st.LastError, "upstream refused"))
	is.Equal(st.SessionsOpened, 0)
	is.Equal(st.Restarts, 1)
	h.waitState(t, session.StateConnecting)
	st = h.waitState(t, session.StateOpen)
	is.Equal(st.SessionsOpened, 1)
	is.True(strings.Contains(st.LastError, "upstream refused")) // the last error stays, with its time
	is.True(!st.LastSuccessAt.Before(st.LastErrorAt))
}

func TestStoppingClosesTheUpstreamSession(t *testing.T) {
	is := is.New(t)
	observer := fakes.ObserveCloses(fakes.NewInMemory(nil))
	e := newEngine(t)
	pid := e.Spawn(newSession(observer, testOptions()), "session")
	mustCall(t, e, pid, "counter", nil)

	stop(t, e, pid)
	is.Equal(observer.Closed(), 1) // closed before the actor was gone
}

func TestStatusesReachTheParent(t *testing.T) {
	is := is.New(t)
	inMemory := fakes.NewInMemory(nil)
	h := spawnWithParent(t, inMemory, testOptions())

	mustCall(t, h.engine, h.pid, "counter", nil)
	st := h.waitState(t, session.StateConnecting)
	is.Equal(st.Connection, connID)
	is.Equal(st.SessionsOpened, 0)
	st = h.waitState(t, session.StateOpen)
	is.Equal(st.SessionsOpened, 1)
	is.Equal(st.LastError, "")

	inMemory.KillAll()
	h.waitState(t, session.StateConnecting)
	st = h.waitState(t, session.StateOpen)
	is.Equal(st.SessionsOpened, 2)
	is.Equal(st.Generation, int64(2))
}
