package mcpface

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/api/protocol"
)

// releaseTimeout bounds the call that closes a client's upstream
// sessions.
const releaseTimeout = 10 * time.Second

// clientSessions closes the upstream sessions a 2025-era client session
// had of its own (connections exposed per_client) when it ends, however
// it ends: the client's DELETE, its eviction or idle timeout, or the
// face's end, which closes every session (Run). Each session that made a
// per_client call is watched by one goroutine, which ends with it; the
// sessions are bounded (sessionCap), and so are the goroutines.
type clientSessions struct {
	mu      sync.Mutex
	watched map[string]bool // by session id
	wg      sync.WaitGroup
}

// watch has the per_client upstream sessions of client session id (ss,
// or a stdio face's one session) closed, through s's backend, when ss
// ends. A stateless request (no id) has no end to watch: its calls share
// the token's upstream session, which stays open (under
// max_run_sessions) while the server runs.
func (c *clientSessions) watch(s *served, ss *mcp.ServerSession, id string) {
	if id == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watched[id] {
		return
	}
	if c.watched == nil {
		c.watched = map[string]bool{}
	}
	c.watched[id] = true
	c.wg.Go(func() {
		_ = ss.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		defer cancel()
		if err := s.api.Call(ctx, protocol.MethodRunsPassthroughRelease, protocol.PassthroughReleaseParams{ClientSession: id}, nil); err != nil {
			slog.Warn("mcp face: close the upstream sessions of an ended client session", "principal", s.who.Name, "err", err)
		}
		c.mu.Lock()
		delete(c.watched, id)
		c.mu.Unlock()
	})
}

// wait waits for the watches of the sessions that ended.
func (c *clientSessions) wait() { c.wg.Wait() }
