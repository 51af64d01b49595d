package supervisor_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/fakes"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// callIn calls the counter tool of connection in scope ("" shared).
func (s *sup) callIn(t *testing.T, connection, scope string) session.ToolResult {
	t.Helper()
	is := is.New(t)
	is.Helper()
	w := reply.Expect[session.ToolResult](s.replies)
	s.engine.Send(s.handle.PID(), session.CallTool{
		Connection: connection, Tool: "counter",
		Deadline: time.Now().Add(2 * time.Second), Scope: scope, Reply: w.To(),
	})
	r, err := w.Wait(ctx(t))
	is.NoErr(err) // the supervisor replies to the call
	return r
}

// countIn is the counter of connection's session of scope after one
// more increment.
func (s *sup) countIn(t *testing.T, connection, scope string) float64 {
	t.Helper()
	is := is.New(t)
	is.Helper()
	r := s.callIn(t, connection, scope)
	is.NoErr(r.Error.Err())   // the call succeeds
	is.Equal(r.Outcome, "ok") // the counter answers
	n, _ := fakes.ToolOutput(t, r)["count"].(float64)
	return n
}

func TestRunsShareTheConnectionsSessionByDefault(t *testing.T) {
	is := is.New(t)
	rec := fakes.NewRecording(fakes.NewInMemory(nil))
	s := start(t, rec, testOptions())

	is.Equal(s.countIn(t, "fake.one", ""), 1.0) // run A
	is.Equal(s.countIn(t, "fake.one", ""), 2.0) // run B continues A's counter
	is.Equal(rec.SessionsCreated(), 1)
}

func TestEachRunGetsItsOwnSessionClosedWhenItEnds(t *testing.T) {
	is := is.New(t)
	s, obs, w := observed(t, testOptions())
	runA, runB := supervisor.RunScope("run_a"), supervisor.RunScope("run_b")

	is.Equal(s.countIn(t, "fake.one", runA), 1.0)
	is.Equal(s.countIn(t, "fake.one", runA), 2.0) // a run keeps its own session
	is.Equal(s.countIn(t, "fake.one", runB), 1.0) // another run starts afresh
	is.Equal(s.countIn(t, "fake.one", ""), 1.0)   // the shared session is apart
	is.Equal(s.countIn(t, "fake.two", runA), 1.0) // and each connection too
	is.Equal(len(w.madeFor("fake.one")), 3)

	// The connection's status shows the shared session only.
	st := s.status(t, "fake.one")
	is.Equal(st.State, session.StateOpen)
	is.Equal(st.SessionsOpened, 1)
	is.Equal(statusIDs(t, s), []string{"fake.one", "fake.two", "fake.off"})

	closed, kills := obs.Closed(), w.kills.Load()
	s.handle.ReleaseScope(runA) // run A ended
	obs.WaitClosed(t, 2, patience)
	is.Equal(obs.Closed(), closed+2) // both of A's sessions, nothing else
	poll.For(t, "both transports ended", patience, func() bool { return w.kills.Load() >= kills+2 })
	is.Equal(w.kills.Load(), kills+2) // what their transports started was ended

	is.Equal(s.countIn(t, "fake.one", runB), 2.0) // B's session lives on
	is.Equal(s.countIn(t, "fake.one", ""), 2.0)   // and the shared one
	is.Equal(s.countIn(t, "fake.one", runA), 1.0) // a released scope starts afresh
}

func TestPerRunSessionsAreCapped(t *testing.T) {
	is := is.New(t)
	opts := testOptions()
	opts.MaxRunSessions = 2
	rec := fakes.NewRecording(fakes.NewInMemory(nil))
	s := start(t, rec, opts)

	is.Equal(s.countIn(t, "fake.one", supervisor.RunScope("a")), 1.0)
	is.Equal(s.countIn(t, "fake.two", supervisor.RunScope("b")), 1.0)
	began := time.Now()
	r := s.callIn(t, "fake.one", supervisor.RunScope("c"))
	is.True(errors.Is(r.Error.Err(), session.ErrOverloaded))                  // a third per-run session is refused
	is.True(strings.Contains(r.Error.Err().Error(), "max_run_sessions 2"))    // naming the cap
	is.True(strings.Contains(r.Error.Err().Error(), `connection "fake.one"`)) // and the connection
	is.True(time.Since(began) < time.Second)                                  // at once
	is.Equal(s.countIn(t, "fake.one", supervisor.RunScope("a")), 2.0)         // open ones go on
	is.Equal(s.countIn(t, "fake.one", ""), 1.0)                               // shared sessions are not capped
	is.Equal(s.countIn(t, "fake.one", supervisor.DeploymentScope("d")), 1.0)
	is.Equal(rec.SessionsCreated(), 4)

	s.handle.ReleaseScope(supervisor.RunScope("a"))
	is.Equal(s.countIn(t, "fake.one", supervisor.RunScope("c")), 1.0) // a slot is free again
}

func TestRunsOfOneDeploymentShareTheirOwnSession(t *testing.T) {
	is := is.New(t)
	s, obs, _ := observed(t, testOptions())
	d1, d2 := supervisor.DeploymentScope("d1"), supervisor.DeploymentScope("d2")

	is.Equal(s.countIn(t, "fake.one", ""), 1.0)
	is.Equal(s.countIn(t, "fake.one", d1), 1.0) // a run of d1: not the shared counter
	is.Equal(s.countIn(t, "fake.one", d1), 2.0) // another run of d1 shares it
	is.Equal(s.countIn(t, "fake.one", d2), 1.0) // d2 has its own
	is.Equal(s.countIn(t, "fake.one", ""), 2.0)

	closed := obs.Closed()
	s.handle.ReleaseScope(d1) // d1 was deleted
	obs.WaitClosed(t, 1, patience)
	is.Equal(obs.Closed(), closed+1)
	is.Equal(s.countIn(t, "fake.one", d2), 2.0)
	is.Equal(s.countIn(t, "fake.one", d1), 1.0)
}

func TestAChangedOrRemovedConnectionStopsItsScopedSessions(t *testing.T) {
	is := is.New(t)
	s, obs, w := observed(t, testOptions())
	run, dep := supervisor.RunScope("r"), supervisor.DeploymentScope("d")
	is.Equal(s.countIn(t, "fake.one", run), 1.0)
	is.Equal(s.countIn(t, "fake.one", dep), 1.0)
	is.Equal(s.countIn(t, "fake.two", dep), 1.0)

	// A changed credential (here the auth_ref) means fresh sessions in
	// every scope: none keeps what the old one built.
	closed := obs.Closed()
	ref := "other"
	r := s.reconcile(t, changed(conns(), "fake.one", func(c *config.Connection) { c.AuthRef = &ref }))
	is.Equal(r.Replaced, []string{"fake.one"})
	obs.WaitClosed(t, 2, patience) // fake.one's run and deployment sessions (its shared one never opened)
	is.Equal(s.countIn(t, "fake.one", run), 1.0)
	is.Equal(s.countIn(t, "fake.one", dep), 1.0)
	is.Equal(s.countIn(t, "fake.two", dep), 2.0) // another connection's are untouched
	last := w.madeFor("fake.one")
	is.Equal(*last[len(last)-1].AuthRef, "other") // opened with the new definition
	is.Equal(obs.Closed(), closed+2)

	// A removed connection's scoped sessions close; calls fail at once.
	r = s.reconcile(t, without(conns(), "fake.two"))
	is.Equal(r.Removed, []string{"fake.two"})
	obs.WaitClosed(t, 1, patience)
	res := s.callIn(t, "fake.two", dep)
	is.True(res.Error.Err() != nil)
	is.True(strings.Contains(res.Error.Err().Error(), `unknown connection "fake.two"`))
}

func TestCancelCallsReachTheScopedSession(t *testing.T) {
	is := is.New(t)
	s := start(t, fakes.NewInMemory(nil), testOptions())
	scope := supervisor.RunScope("slow")
	is.Equal(s.countIn(t, "fake.one", scope), 1.0) // the scope's session is open

	w := reply.Expect[session.ToolResult](s.replies)
	s.engine.Send(s.handle.PID(), session.CallTool{
		Connection: "fake.one", Tool: "sleep", Arguments: fakes.CallArguments(map[string]any{"ms": 60_000}),
		Deadline: time.Now().Add(time.Minute), Owner: "slow", Scope: scope, Reply: w.To(),
	})
	// Sent to the shared session, the cancel finds nothing; to the scope's,
	// it ends the call.
	s.engine.Send(s.handle.PID(), session.CancelCalls{Connection: "fake.one", Owner: "slow"})
	s.engine.Send(s.handle.PID(), session.CancelCalls{Connection: "fake.one", Owner: "slow", Scope: scope})
	r, err := w.Wait(ctx(t))
	is.NoErr(err)
	is.True(r.Error.Err() != nil) // the call was withdrawn
}

func TestTheRunSessionCapComesFromTheServersSupervision(t *testing.T) {
	is := is.New(t)
	is.Equal(supervisor.DefaultOptions().MaxRunSessions, 32)
	is.Equal(supervisor.DefaultOptions().WithConfig(nil).MaxRunSessions, 32)
	is.Equal(supervisor.DefaultOptions().WithConfig(&config.Supervision{MaxRunSessions: 5}).MaxRunSessions, 5)
	is.True((&config.Supervision{MaxRunSessions: -1}).Validate() != nil) // a negative cap is refused
}
