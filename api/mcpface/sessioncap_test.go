package mcpface

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// open takes a place for owner and settles it as an open session that
// was last used at last, as the handler does once go-sdk opened it.
func open(c *sessionCap, owner, id string, last time.Time) *capped {
	victim, refusal := c.admit(owner)
	if victim != nil || refusal != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.opening--
	s := &capped{id: id, owner: owner, last: last}
	c.sessions[id] = s
	return s
}

func TestASessionPastTheServersBoundIsRefusedWhileNoneIsIdleLongEnough(t *testing.T) {
	is := is.New(t)
	c := newSessionCap(2, 3, time.Minute, 0, nil, nil, nil, slog.Default())
	now := time.Now()
	is.True(open(c, "a", "a1", now.Add(-2*time.Minute)) != nil)
	busy := open(c, "a", "a2", now.Add(-3*time.Minute))
	busy.busy = 1 // a request in flight: never evicted
	is.True(open(c, "b", "b1", now) != nil)

	a1 := c.sessions["a1"]
	a1.busy = 1
	victim, refusal := c.admit("c")
	is.Equal(victim, (*capped)(nil))
	is.True(refusal != nil) // every session busy or idle for less than a minute
	is.Equal(refusal.Code, jsonrpc.Overloaded)
	t.Log(refusal.Message)
	is.True(strings.Contains(refusal.Message, "too many MCP sessions on this server: 3 open, the limit (server.mcp.max_sessions)"))
	is.True(strings.Contains(refusal.Message, "raise server.mcp.max_sessions"))

	a1.busy = 0 // idle for two minutes: it makes room, not the busy older one
	victim, refusal = c.admit("c")
	is.Equal(refusal, (*jsonrpc.Error)(nil))
	is.Equal(victim, a1)
	is.Equal(c.byOwner["a"], 1)
	is.Equal(c.byOwner["c"], 1)
}
