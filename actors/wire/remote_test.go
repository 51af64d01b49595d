package wire_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/anthdm/hollywood/remote"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/reply/replytest"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/actors/wire"
	"github.com/mcpflow/mcpflow/actors/wire/wiretest"
	"github.com/mcpflow/mcpflow/fakes"
)

// patience bounds every wait that only a broken remote would reach.
const patience = 10 * time.Second

func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	t.Cleanup(cancel)
	return ctx
}

// TestAToolCallCrossesToTheSessionOfAnotherNodeAndItsAnswerComesBack sends
// a CallTool from node A to the supervisor of node B, which owns the
// connection's session actor: the answer, addressed to A's router by PID
// and correlation id, comes back over the remote.
func TestAToolCallCrossesToTheSessionOfAnotherNodeAndItsAnswerComesBack(t *testing.T) {
	is := is.New(t)
	a, b := wiretest.Engine(t), wiretest.Engine(t)
	is.True(a.Address() != b.Address())

	opts := supervisor.DefaultOptions()
	opts.Session.ConnectTimeout, opts.Session.CallTimeout, opts.Session.CloseTimeout = 5*time.Second, 5*time.Second, time.Second
	conns := []config.Connection{{Kind: "mcp", ID: "fake.one", Transport: config.Transport{Kind: "inmemory"}}}
	sup := supervisor.Spawn(b, conns, fakes.NewInMemory(nil), store.NewMemory(), opts)
	t.Cleanup(func() { is.NoErr(sup.Stop(bounded(t))) }) // node B's supervisor stops
	replies := replytest.Router(t, a, "test")            // node A's

	// B's supervisor, as A addresses it: B's address, the same actor id.
	remoteSup := actor.NewPID(b.Address(), sup.PID().ID)
	for want := 1.0; want <= 2; want++ {
		w := reply.Expect[session.ToolResult](replies)
		is.Equal(w.To().Node, a.Address()) // the answer is addressed to node A
		a.Send(remoteSup, session.CallTool{
			Connection: "fake.one", Tool: "counter", Arguments: json.RawMessage(`{}`),
			Deadline: time.Now().Add(5 * time.Second), Reply: w.To(),
		})
		r, err := w.Wait(bounded(t))
		is.NoErr(err) // the answer crossed back
		is.NoErr(r.Error.Err())
		is.Equal(r.CorrelationID, w.To().Correlation)
		is.Equal(fakes.ToolOutput(t, r)["count"], want) // one session on node B, its state kept
	}

	// An error crosses as a Failure, and keeps its sentinel.
	w := reply.Expect[session.ToolResult](replies)
	a.Send(remoteSup, session.CallTool{Connection: "fake.one", Tool: "counter", Deadline: time.Now().Add(-time.Second), Reply: w.To()})
	r, err := w.Wait(bounded(t))
	is.NoErr(err)
	is.Equal(r.Error.Code, "deadline")
	is.True(errors.Is(r.Error.Err(), session.ErrDeadline)) // errors.Is holds on node A
}

// TestANodeLocalMessageIsNotSentToAnotherNode: a Reconcile addressed to
// another node is dropped, and the sending node goes on.
func TestANodeLocalMessageIsNotSentToAnotherNode(t *testing.T) {
	is := is.New(t)
	a, b := wiretest.Engine(t), wiretest.Engine(t)
	got := make(chan any, 4)
	pid := b.SpawnFunc(func(c *actor.Context) {
		switch m := c.Message().(type) {
		case supervisor.Reconcile, supervisor.ReleaseScope:
			got <- m
		}
	}, "probe", actor.WithID("one"))
	t.Cleanup(func() { <-b.Poison(pid).Done() })
	there := actor.NewPID(b.Address(), pid.ID)
	a.Send(there, supervisor.Reconcile{})                  // refused: node-local
	a.Send(there, supervisor.ReleaseScope{Scope: "run:x"}) // crosses
	select {
	case m := <-got:
		is.Equal(m, supervisor.ReleaseScope{Scope: "run:x"}) // only the message that may cross arrived
	case <-time.After(patience):
		is.Fail() // the crossing message arrives in time
	}
}

// TestANodeIsReachedAtTheAddressItAdvertises: a node listening on every
// interface (here 0.0.0.0) is known by the address it advertises, which
// its PIDs carry, and a message to one of them arrives.
func TestANodeIsReachedAtTheAddressItAdvertises(t *testing.T) {
	is := is.New(t)
	a := wiretest.Engine(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	port := l.Addr().(*net.TCPAddr).Port
	is.NoErr(l.Close())
	r := wire.NewRemote(fmt.Sprintf("0.0.0.0:%d", port), remote.NewConfig()).Advertised(fmt.Sprintf("localhost:%d", port))
	b, err := actor.NewEngine(actor.NewEngineConfig().WithRemote(r))
	is.NoErr(err)
	t.Cleanup(func() { r.Stop().Wait() })
	is.Equal(b.Address(), fmt.Sprintf("localhost:%d", port)) // its actors are named by the advertised address

	got := make(chan any, 1)
	pid := b.SpawnFunc(func(c *actor.Context) {
		if m, ok := c.Message().(supervisor.ReleaseScope); ok {
			got <- m
		}
	}, "probe", actor.WithID("one"))
	t.Cleanup(func() { <-b.Poison(pid).Done() })
	a.Send(pid, supervisor.ReleaseScope{Scope: "run:x"})
	select {
	case m := <-got:
		is.Equal(m, supervisor.ReleaseScope{Scope: "run:x"}) // it arrived through the advertised address
	case <-time.After(patience):
		is.Fail() // the message arrives in time
	}
}
