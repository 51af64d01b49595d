package supervisor_test

import (
	"cmp"
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/reply/replytest"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/fakes"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// patience bounds every wait that only a broken actor would reach.
const patience = 5 * time.Second

func enabled(on bool) *bool { return &on }

// conns are two enabled connections and a disabled one.
func conns() []config.Connection {
	c := func(id string) config.Connection {
		return config.Connection{Kind: "mcp", ID: id, Transport: config.Transport{Kind: "inmemory"}}
	}
	off := c("fake.off")
	off.Enabled = enabled(false)
	return []config.Connection{c("fake.one"), c("fake.two"), off}
}

func testOptions() supervisor.Options {
	return supervisor.Options{
		Session: session.Options{
			ProtocolVersion: "2025-11-25",
			ConnectTimeout:  2 * time.Second,
			CallTimeout:     2 * time.Second,
			CloseTimeout:    time.Second,
			MaxInFlight:     32,
			MaxQueued:       64,
			Policy: session.Policy{
				MinBackoff: 50 * time.Millisecond, MaxBackoff: 400 * time.Millisecond, ProvedAfter: time.Minute,
				MaxRestarts: 2, RestartWindow: time.Minute, ProbeInterval: time.Minute,
			},
		},
		MaxConcurrentConnects: 4,
	}
}

// sup is a supervisor on its own engine, stopped when the test ends.
type sup struct {
	engine *actor.Engine
	handle *supervisor.Handle
	store  *store.Memory
	// replies delivers the answers the test waits for.
	replies *reply.Router
	// trap is the session actors' clock, which panics when told to.
	trap *trapClock
}

// trapClock is a clock that panics at its next reading once armed: read
// by a session actor in its Receive, it makes the actor panic there.
type trapClock struct {
	session.Clock
	armed atomic.Bool
}

// Now panics once after arm, else reads the clock.
func (c *trapClock) Now() time.Time {
	if c.armed.CompareAndSwap(true, false) {
		panic("trapped clock")
	}
	return c.Clock.Now()
}

// arm makes the next reading panic.
func (c *trapClock) arm() { c.armed.Store(true) }

func start(t *testing.T, factory session.TransportFactory, opts supervisor.Options) *sup {
	t.Helper()
	return startWith(t, factory, store.NewMemory(), opts)
}

func startWith(t *testing.T, factory session.TransportFactory, st *store.Memory, opts supervisor.Options) *sup {
	t.Helper()
	is := is.New(t)
	is.Helper()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	is.NoErr(err) // new engine
	trap := &trapClock{Clock: cmp.Or[session.Clock](opts.Session.Clock, opts.Clock, session.SystemClock())}
	opts.Session.Clock = trap
	s := &sup{engine: e, handle: supervisor.Spawn(e, conns(), factory, st, opts), store: st, replies: newRouter(t, e), trap: trap}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		is.NoErr(s.handle.Stop(ctx)) // stop the supervisor
	})
	return s
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), patience)
	t.Cleanup(cancel)
	return c
}

// newRouter spawns a router for the answers the test waits for, stopped
// with it.
func newRouter(t *testing.T, e *actor.Engine) *reply.Router {
	t.Helper()
	return replytest.Router(t, e, "test")
}

// send calls tool on connection as a run does: over the connection's
// line when it is open, or else through the supervisor.
func (s *sup) send(connection, tool string, args map[string]any) *reply.Expected[session.ToolResult] {
	w := reply.Expect[session.ToolResult](s.replies)
	s.handle.Lines().Call(s.engine, s.handle.PID(), session.CallTool{
		Connection: connection,
		Tool:       tool,
		Arguments:  fakes.CallArguments(args),
		Deadline:   time.Now().Add(2 * time.Second),
		Reply:      w.To(),
	})
	return w
}

func (s *sup) call(t *testing.T, connection, tool string, args map[string]any) session.ToolResult {
	t.Helper()
	is := is.New(t)
	is.Helper()
	r, err := s.send(connection, tool, args).Wait(ctx(t))
	if err != nil {
		t.Logf("call %s.%s: %v", connection, tool, err)
	}
	is.NoErr(err) // the supervisor replies to the call
	return r
}

func (s *sup) mustCall(t *testing.T, connection, tool string, args map[string]any) map[string]any {
	t.Helper()
	is := is.New(t)
	is.Helper()
	r := s.call(t, connection, tool, args)
	is.NoErr(r.Error.Err())
	is.Equal(r.Outcome, "ok")
	return fakes.ToolOutput(t, r)
}

// status returns the supervisor's status of connection.
func (s *sup) status(t *testing.T, connection string) session.Status {
	t.Helper()
	is := is.New(t)
	is.Helper()
	all, err := s.handle.Statuses(ctx(t))
	is.NoErr(err) // statuses
	for _, st := range all {
		if st.Connection == connection {
			return st
		}
	}
	t.Logf("no status of %q in %+v", connection, all)
	is.Fail() // the supervisor reports a status of the connection
	return session.Status{}
}

// waitStatus polls the status of connection until ok accepts it.
func (s *sup) waitStatus(t *testing.T, connection string, ok func(session.Status) bool) session.Status {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var st session.Status
	if !poll.Until(patience, func() bool { st = s.status(t, connection); return ok(st) }) {
		t.Logf("status of %q still %+v after %s", connection, st, patience)
		is.Fail() // the status reaches the awaited state in time
	}
	return st
}
