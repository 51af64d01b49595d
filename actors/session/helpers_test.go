package session_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/guard"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/reply/replytest"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

// patience bounds every wait that only a broken actor would reach.
const patience = 5 * time.Second

// connID is the connection every test session serves.
const connID = "fake.one"

func testConn() config.Connection {
	return config.Connection{Kind: "mcp", ID: connID, Transport: config.Transport{Kind: "inmemory"}}
}

// testOptions are short bounds, so that failures show up in milliseconds.
func testOptions() session.Options {
	return session.Options{
		ProtocolVersion: "2025-11-25",
		ConnectTimeout:  2 * time.Second,
		CallTimeout:     2 * time.Second,
		CloseTimeout:    time.Second,
		MaxInFlight:     32,
		MaxQueued:       64,
		Policy: session.Policy{
			MinBackoff: 50 * time.Millisecond, MaxBackoff: 400 * time.Millisecond,
			ProvedAfter: time.Minute, ProbeInterval: 100 * time.Millisecond,
		},
	}
}

// newEngine makes an engine with a router for the answers the test waits
// for (see expect), stopped with the test.
func newEngine(t *testing.T) *actor.Engine {
	t.Helper()
	is := is.New(t)
	is.Helper()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	is.NoErr(err)                           // new engine
	t.Cleanup(func() { routers.Delete(e) }) // after the router stopped
	routers.Store(e, replytest.Router(t, e, "test"))
	return e
}

// routers are the routers of the tests' engines.
var routers sync.Map // *actor.Engine → *reply.Router

// expect expects an answer of type T through e's router.
func expect[T reply.Answer](e *actor.Engine) *reply.Expected[T] {
	r, _ := routers.Load(e)
	return reply.Expect[T](r.(*reply.Router))
}

// spawn starts a session actor directly on a fresh engine (no parent) and
// stops it when the test ends.
func spawn(t *testing.T, factory session.TransportFactory, opts session.Options) (*actor.Engine, *actor.PID) {
	t.Helper()
	e := newEngine(t)
	pid := e.Spawn(newSession(factory, opts), "session", actor.WithID(connID))
	t.Cleanup(func() { stop(t, e, pid) })
	return e, pid
}

// newSession is the session actor of the test connection.
func newSession(factory session.TransportFactory, opts session.Options) actor.Producer {
	return session.New(testConn(), factory, opts)
}

// stop poisons pid and waits, bounded, until it is gone.
func stop(t *testing.T, e *actor.Engine, pid *actor.PID) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	select {
	case <-e.Poison(pid).Done():
	case <-time.After(patience):
		t.Logf("actor %s did not stop within %s", pid, patience)
		is.Fail() // the poisoned actor stops
	}
}

// harness is a session actor spawned as the child of a tiny parent actor
// that forwards what the session reports: statuses, unasked catalogs, and
// (through the guard) panics.
type harness struct {
	engine   *actor.Engine
	parent   *actor.PID
	pid      *actor.PID
	statuses chan session.Status
	catalogs chan session.CatalogListed
	panics   chan guard.Panic
	replaced chan session.Replaced
}

func spawnWithParent(t *testing.T, factory session.TransportFactory, opts session.Options) *harness {
	t.Helper()
	return spawnConnWithParent(t, testConn(), factory, opts)
}

// spawnConnWithParent is spawnWithParent for the session actor of conn.
func spawnConnWithParent(t *testing.T, conn config.Connection, factory session.TransportFactory, opts session.Options) *harness {
	t.Helper()
	is := is.New(t)
	is.Helper()
	h := &harness{
		engine:   newEngine(t),
		statuses: make(chan session.Status, 1024),
		catalogs: make(chan session.CatalogListed, 64),
		panics:   make(chan guard.Panic, 64),
		replaced: make(chan session.Replaced, 64),
	}
	children := make(chan *actor.PID, 1)
	h.parent = h.engine.SpawnFunc(func(c *actor.Context) {
		switch m := c.Message().(type) {
		case actor.Started:
			report := func(p guard.Panic) {
				select {
				case h.panics <- p:
				default:
				}
			}
			children <- c.SpawnChild(guard.Producer(session.New(conn, factory, opts), report), "session",
				actor.WithID(connID))
		case session.Status:
			h.statuses <- m
		case session.CatalogListed:
			h.catalogs <- m
		case session.Replaced:
			h.replaced <- m
		}
	}, "parent", actor.WithID("test"))
	select {
	case h.pid = <-children:
	case <-time.After(patience):
		t.Logf("the parent did not spawn the session actor within %s", patience)
		is.Fail() // the parent spawns the session actor
	}
	t.Cleanup(func() { stop(t, h.engine, h.parent) })
	return h
}

// waitState returns the next status the session reports, which must be
// want.
func (h *harness) waitState(t *testing.T, want session.State) session.Status {
	t.Helper()
	is := is.New(t)
	is.Helper()
	select {
	case st := <-h.statuses:
		if st.State != want {
			t.Logf("status %q (%s), want %q", st.State, st.LastError, want)
		}
		is.Equal(st.State, want) // the next status reported
		return st
	case <-time.After(patience):
		t.Logf("no %q status within %s", want, patience)
		is.Fail() // the session reports the status in time
	}
	return session.Status{}
}

// send asks pid to call tool and returns where the reply will arrive.
func send(e *actor.Engine, pid *actor.PID, tool string, args map[string]any, deadline time.Duration) *reply.Expected[session.ToolResult] {
	w := expect[session.ToolResult](e)
	e.Send(pid, session.CallTool{
		Connection: connID,
		Tool:       tool,
		Arguments:  fakes.CallArguments(args),
		Deadline:   time.Now().Add(deadline),
		Reply:      w.To(),
	})
	return w
}

// await waits, bounded, for a reply.
func await[T reply.Answer](t *testing.T, w *reply.Expected[T]) T {
	t.Helper()
	is := is.New(t)
	is.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	v, err := w.Wait(ctx)
	if err != nil {
		t.Logf("no reply within %s: %v", patience, err)
	}
	is.NoErr(err) // a reply arrives in time
	return v
}

// call is send and await.
func call(t *testing.T, e *actor.Engine, pid *actor.PID, tool string, args map[string]any) session.ToolResult {
	t.Helper()
	return await(t, send(e, pid, tool, args, 2*time.Second))
}

// mustCall calls a tool that must succeed.
func mustCall(t *testing.T, e *actor.Engine, pid *actor.PID, tool string, args map[string]any) map[string]any {
	t.Helper()
	is := is.New(t)
	is.Helper()
	r := call(t, e, pid, tool, args)
	is.NoErr(r.Error.Err())
	is.Equal(r.Outcome, "ok")
	return fakes.ToolOutput(t, r)
}

// flakyFactory fails its first failures transports, then delegates.
type flakyFactory struct {
	inner    session.TransportFactory
	failures int32
	attempts atomic.Int32
}

func (f *flakyFactory) NewTransport(conn config.Connection) (mcp.Transport, error) {
	if n := f.attempts.Add(1); n <= f.failures {
		return nil, errors.New("upstream refused")
	}
	return f.inner.NewTransport(conn)
}
