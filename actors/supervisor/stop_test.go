package supervisor_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/fakes"
)

// hungCloses makes transports whose connection never closes until its
// transport is killed: a hung upstream, which each session actor closes
// only by running into its CloseTimeout.
type hungCloses struct{ inner session.TransportFactory }

func (h hungCloses) NewTransport(c config.Connection) (mcp.Transport, error) {
	t, err := h.inner.NewTransport(c)
	if err != nil {
		return nil, err
	}
	return &hungTransport{Transport: t, killed: make(chan struct{})}, nil
}

type hungTransport struct {
	mcp.Transport
	once   sync.Once
	killed chan struct{}
}

func (t *hungTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &hungConn{Connection: c, killed: t.killed}, nil
}

// Kill implements session.Killer.
func (t *hungTransport) Kill() error {
	t.once.Do(func() { close(t.killed) })
	return nil
}

type hungConn struct {
	mcp.Connection
	killed chan struct{}
}

func (c *hungConn) Close() error {
	<-c.killed
	return c.Connection.Close()
}

// TestStopClosesHungSessionsInParallel: five sessions whose upstreams
// hang on close each take CloseTimeout to stop; Stop stops them at once,
// not one after the other. It runs in a synctest bubble, so that the
// time Stop takes is measured on the bubble's clock, not the machine's.
func TestStopClosesHungSessionsInParallel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		opts := testOptions()
		var conns []config.Connection
		for i := range 5 {
			conns = append(conns, config.Connection{Kind: "mcp", ID: fmt.Sprintf("hung.%d", i), Transport: config.Transport{Kind: "inmemory"}})
		}
		e, err := actor.NewEngine(actor.NewEngineConfig())
		is.NoErr(err)
		s := &sup{engine: e, handle: supervisor.Spawn(e, conns, hungCloses{fakes.NewInMemory(nil)}, store.NewMemory(), opts), replies: newRouter(t, e)}
		for _, c := range conns {
			s.mustCall(t, c.ID, "echo", map[string]any{"message": "hi"}) // opens the session
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*opts.Session.CloseTimeout)
		defer cancel()
		start := time.Now()
		is.NoErr(s.handle.Stop(ctx))
		took := time.Since(start)
		t.Logf("stopped 5 hung sessions in %s (CloseTimeout %s)", took.Round(time.Millisecond), opts.Session.CloseTimeout)
		// The bubble's clock: took is the time the closes waited, exactly.
		is.Equal(took, opts.Session.CloseTimeout) // they hung for CloseTimeout, all at once: one after the other takes 5 × CloseTimeout
	})
}

// TestStopWithADeadlineKillsWhatIsStillClosingInTime: a Stop whose
// context leaves less than CloseTimeout for a hung session to close kills
// its peer KillGrace before the deadline, and returns within it, so that
// the stop's next stages keep their own time. In a synctest bubble, as
// above.
func TestStopWithADeadlineKillsWhatIsStillClosingInTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		opts := testOptions()
		conns := []config.Connection{{Kind: "mcp", ID: "hung.0", Transport: config.Transport{Kind: "inmemory"}}}
		e, err := actor.NewEngine(actor.NewEngineConfig())
		is.NoErr(err)
		s := &sup{engine: e, handle: supervisor.Spawn(e, conns, hungCloses{fakes.NewInMemory(nil)}, store.NewMemory(), opts), replies: newRouter(t, e)}
		s.mustCall(t, "hung.0", "echo", map[string]any{"message": "hi"}) // opens the session
		budget := supervisor.KillGrace + opts.Session.CloseTimeout/2
		ctx, cancel := context.WithTimeout(context.Background(), budget)
		defer cancel()
		start := time.Now()
		is.NoErr(s.handle.Stop(ctx)) // within its deadline
		took := time.Since(start)
		t.Logf("stopped a hung session in %s of a %s budget (CloseTimeout %s)", took.Round(time.Millisecond), budget, opts.Session.CloseTimeout)
		is.Equal(took, budget-supervisor.KillGrace) // killed KillGrace before the deadline, not at CloseTimeout
	})
}
