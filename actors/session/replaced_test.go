package session_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

// awaitReplaced waits for the session actor to tell its parent that a
// session was replaced.
func (h *harness) awaitReplaced(t *testing.T) session.Replaced {
	t.Helper()
	is := is.New(t)
	is.Helper()
	select {
	case m := <-h.replaced:
		return m
	case <-time.After(patience):
		t.Logf("no Replaced within %s", patience)
		is.Fail() // the replacement is announced
	}
	return session.Replaced{}
}

// sendExpecting asks pid to call tool on the session want names.
func sendExpecting(e *actor.Engine, pid *actor.PID, tool string, want session.Identity) *reply.Expected[session.ToolResult] {
	w := expect[session.ToolResult](e)
	e.Send(pid, session.CallTool{Connection: connID, Tool: tool, Deadline: time.Now().Add(2 * time.Second), Reply: w.To(), Expect: &want})
	return w
}

func TestANewSessionThatReplacesOneIsAnnouncedWithTheCause(t *testing.T) {
	is := is.New(t)
	inMemory := fakes.NewInMemory(nil)
	h := spawnWithParent(t, inMemory, testOptions())

	r := call(t, h.engine, h.pid, "counter", nil)
	is.NoErr(r.Error.Err())
	is.Equal(r.Generation, int64(1))
	is.True(r.Instance != "") // a node alone names its process
	select {
	case m := <-h.replaced:
		t.Logf("unexpected %+v", m)
		is.Fail() // the first session replaces nothing
	default:
	}

	inMemory.KillAll()
	m := h.awaitReplaced(t)
	is.Equal(m.Connection, connID)
	is.Equal(m.Previous, int64(1))
	is.Equal(m.Generation, int64(2))
	is.Equal(m.Cause.Kind, session.CauseClosed) // the in-memory pipe was cut: the session ended
	is.True(m.Cause.Error != "")
}

func TestACallExpectingAReplacedSessionIsRefusedUnsent(t *testing.T) {
	is := is.New(t)
	inMemory := fakes.NewInMemory(nil)
	rec := fakes.NewRecording(inMemory)
	h := spawnWithParent(t, rec, testOptions())

	first := call(t, h.engine, h.pid, "counter", nil)
	is.NoErr(first.Error.Err())
	was := session.Identity{Generation: first.Generation, Instance: first.Instance}
	same := await(t, sendExpecting(h.engine, h.pid, "counter", was))
	is.NoErr(same.Error.Err()) // the expected session is the open one: sent
	is.Equal(fakes.ToolOutput(t, same)["count"], 2.0)

	inMemory.KillAll()
	h.awaitReplaced(t)
	refused := await(t, sendExpecting(h.engine, h.pid, "counter", was))
	is.True(errors.Is(refused.Error.Err(), session.ErrSessionReplaced))
	is.Equal(refused.Error.Err().Error(),
		`session_replaced: session of connection "fake.one" was replaced (generation 1 → 2): its state is gone`)
	is.Equal(refused.Generation, int64(2)) // it names the session now open
	is.Equal(refused.Instance, first.Instance)
	is.Equal(len(rec.ToolCalls()), 2) // the refused call never reached the server

	// Without an expectation, a call goes to the new session.
	is.Equal(mustCall(t, h.engine, h.pid, "counter", nil)["count"], 1.0)
}

func TestASessionOfAnotherProcessIsAReplacedOne(t *testing.T) {
	is := is.New(t)
	h := spawnWithParent(t, fakes.NewInMemory(nil), testOptions())

	// The run saw generation 1 before mcpflow restarted: this process's
	// generation 1 is another session.
	before := session.Identity{Generation: 1, Instance: "an earlier process"}
	r := await(t, sendExpecting(h.engine, h.pid, "counter", before))
	is.True(errors.Is(r.Error.Err(), session.ErrSessionReplaced))
	is.True(strings.Contains(r.Error.Err().Error(), "(generation 1 → 1, opened since mcpflow restarted)"))
}

func TestIdentityReplaces(t *testing.T) {
	is := is.New(t)
	one := session.Identity{Generation: 1, Instance: "a"}
	two := session.Identity{Generation: 2, Instance: "a"}
	is.True(two.Replaces(one))
	is.True(!one.Replaces(two))                                                        // a late answer of the older session
	is.True(!one.Replaces(one))                                                        // the same session
	is.True(session.Identity{Generation: 1, Instance: "b"}.Replaces(two))              // another process
	is.True(!session.Identity{}.Replaces(one))                                         // never sent
	is.True(session.Identity{Generation: 5}.Replaces(session.Identity{Generation: 4})) // a cluster's
}
