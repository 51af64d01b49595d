package mcpface

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// sessionCap bounds the 2025-era sessions of the stateful handler, per
// token and on the whole server. go-sdk keeps its sessions in a map of its
// own with no bound, so the cap wraps the handler: a POST without
// Mcp-Session-Id opens a session, and takes a place before go-sdk sees it;
// a session's place is given back when go-sdk closes it (the client's
// DELETE, the idle timeout, a failed initialize) or the cap evicts it.
//
// At a bound, the least recently used session of that bound (the token's
// own at the token's bound, any at the server's) is closed for the new
// one if no request of it is in flight and it has been idle for
// evictIdle; otherwise the new session is refused, 429 with a JSON-RPC
// error that names the bound.
type sessionCap struct {
	perToken, all int
	evictIdle     time.Duration
	maxBody       int64
	find          func(*http.Request) *mcp.Server // the server of the request's principal
	// endCalls ends the tool calls of a session before it is closed
	// (go-sdk's Close waits for them); their runs go on.
	endCalls func(id, owner string)
	metrics  *metrics.Metrics
	log      *slog.Logger

	mu       sync.Mutex
	sessions map[string]*capped // by session id
	byOwner  map[string]int     // places taken (open and opening), by token name
	opening  int                // places taken by sessions not open yet
	closed   bool
	// watching are the goroutines that give a session's place back when
	// go-sdk closes it; each ends with its session.
	watching sync.WaitGroup
}

// capped is one open session.
type capped struct {
	id, owner string
	ss        *mcp.ServerSession
	last      time.Time // the end of its last request
	busy      int       // its requests in flight (a call, a GET stream)
}

func newSessionCap(perToken, all int, evictIdle time.Duration, maxBody int64, find func(*http.Request) *mcp.Server,
	endCalls func(id, owner string), m *metrics.Metrics, log *slog.Logger) *sessionCap {
	if maxBody <= 0 {
		maxBody = mcp.DefaultMaxRequestBodyBytes
	}
	return &sessionCap{perToken: perToken, all: all, evictIdle: evictIdle, maxBody: maxBody, find: find, endCalls: endCalls, metrics: m, log: log,
		sessions: map[string]*capped{}, byOwner: map[string]int{}}
}

// wrap bounds the sessions next (go-sdk's stateful handler) opens.
func (c *sessionCap) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who, ok := access.PrincipalFrom(r.Context())
		if id := r.Header.Get("Mcp-Session-Id"); !ok || id != "" || r.Method != http.MethodPost {
			if ok && id != "" {
				c.using(id, who.Name, 1)
				defer c.using(id, who.Name, -1)
			}
			next.ServeHTTP(w, r) // go-sdk answers a GET or DELETE without a session
			return
		}
		victim, refusal := c.admit(who.Name)
		if refusal != nil {
			c.refuse(w, r, refusal)
			return
		}
		if victim != nil {
			c.evict(victim)
		}
		defer func() { c.opened(r, who.Name, w.Header().Get("Mcp-Session-Id")) }()
		next.ServeHTTP(w, r)
	})
}

// using marks a request of session id (owner's) begun (+1) or ended (-1).
func (c *sessionCap) using(id, owner string, delta int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.sessions[id]; s != nil && s.owner == owner {
		// A request may begin before opened registers its session (the
		// client has the id once the initialize's headers are out): its
		// end must not leave the count below zero, never idle again.
		s.busy = max(s.busy+delta, 0)
		s.last = time.Now()
	}
}

// admit takes a place for a new session of owner: at a bound, it gives the
// place of the bound's least recently used idle session, which the caller
// evicts; where there is none, a refusal.
func (c *sessionCap) admit(owner string) (victim *capped, refusal *jsonrpc.Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return nil, jsonrpc.Errorf(jsonrpc.Overloaded, "mcpflow is shutting down")
	case c.byOwner[owner] >= c.perToken:
		victim = c.leastRecentlyUsed(owner)
		if victim == nil {
			c.metrics.MCPSessionRefused("token")
			return nil, c.refusal(fmt.Sprintf("too many MCP sessions for token %q: %d open, the limit (server.mcp.max_sessions_per_token)", owner, c.perToken),
				"server.mcp.max_sessions_per_token")
		}
	case len(c.sessions)+c.opening >= c.all:
		victim = c.leastRecentlyUsed("")
		if victim == nil {
			c.metrics.MCPSessionRefused("server")
			return nil, c.refusal(fmt.Sprintf("too many MCP sessions on this server: %d open, the limit (server.mcp.max_sessions)", c.all),
				"server.mcp.max_sessions")
		}
	}
	if victim != nil {
		c.drop(victim)
	}
	c.byOwner[owner]++
	c.opening++
	return victim, nil
}

// refusal is the error of a new session refused at a bound.
func (c *sessionCap) refusal(what, knob string) *jsonrpc.Error {
	e := jsonrpc.Errorf(jsonrpc.Overloaded, "%s, and none has been idle for %s: a session idle that long is closed for a new one, "+
		"so retry later, end the sessions you no longer use (DELETE /mcp with their Mcp-Session-Id), or raise %s", what, idleFor(c.evictIdle), knob)
	e.Message += ": " + e.Detail() // MCP clients show the message
	return e
}

// idleFor spells an idle time in seconds ("60s", not "1m0s").
func idleFor(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s" }

// leastRecentlyUsed is the session (owner's; any for "") with no request
// in flight that was used least recently, if it has been idle for
// evictIdle. Under c.mu.
func (c *sessionCap) leastRecentlyUsed(owner string) *capped {
	var oldest *capped
	for _, s := range c.sessions {
		if s.busy == 0 && (owner == "" || s.owner == owner) && (oldest == nil || s.last.Before(oldest.last)) {
			oldest = s
		}
	}
	if oldest == nil || time.Since(oldest.last) < c.evictIdle {
		return nil
	}
	return oldest
}

// drop gives s's place back. Under c.mu.
func (c *sessionCap) drop(s *capped) {
	delete(c.sessions, s.id)
	c.release(s.owner)
}

// release gives a place of owner's back. Under c.mu.
func (c *sessionCap) release(owner string) {
	c.byOwner[owner]--
	if c.byOwner[owner] == 0 {
		delete(c.byOwner, owner)
	}
	c.metrics.MCPSessions(owner, c.byOwner[owner])
}

// evict closes a session whose place admit gave to a new one.
func (c *sessionCap) evict(s *capped) {
	c.metrics.MCPSessionEvicted()
	c.log.Info("mcp face: closed the least recently used idle session for a new one", "token", s.owner, "idle", time.Since(s.last).Round(time.Second))
	c.close(s)
}

// close ends s's calls, then s.
func (c *sessionCap) close(s *capped) {
	c.endCalls(s.id, s.owner)
	_ = s.ss.Close()
}

// opened settles the place admit took: the session go-sdk opened (the
// response's Mcp-Session-Id, if go-sdk still holds it) keeps it until it
// closes; otherwise it is given back.
func (c *sessionCap) opened(r *http.Request, owner, id string) {
	var ss *mcp.ServerSession
	if srv := c.find(r); id != "" && srv != nil {
		for s := range srv.Sessions() {
			if s.ID() == id {
				ss = s
				break
			}
		}
	}
	if !c.keep(owner, id, ss) && ss != nil {
		_ = ss.Close() // the face stopped while it opened, after closeAll's sweep
	}
}

// keep turns the place owner's new session took into an open session's,
// watched until go-sdk closes it; without a session (or once the face
// stopped) it gives the place back and reports false.
func (c *sessionCap) keep(owner, id string, ss *mcp.ServerSession) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.opening--
	if ss == nil || c.closed {
		c.release(owner)
		return false
	}
	s := &capped{id: id, owner: owner, ss: ss, last: time.Now()}
	c.sessions[id] = s
	c.metrics.MCPSessions(owner, c.byOwner[owner])
	c.watching.Go(func() {
		_ = ss.Wait()
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.sessions[id] == s {
			c.drop(s)
		}
	})
	return true
}

// refuse answers a new session refused: 429, Retry-After the idle time
// after which a session is evicted, and the JSON-RPC error with the
// request's id.
func (c *sessionCap) refuse(w http.ResponseWriter, r *http.Request, e *jsonrpc.Error) {
	id := jsonrpc.NullID
	var req struct {
		ID jsonrpc.ID `json:"id"`
	}
	if body, err := io.ReadAll(io.LimitReader(r.Body, c.maxBody)); err == nil && json.Unmarshal(body, &req) == nil && !req.ID.IsZero() {
		id = req.ID
	}
	body, err := jsonrpc.EncodeResponse(jsonrpc.NewError(id, e))
	if err != nil {
		http.Error(w, e.Message, http.StatusTooManyRequests)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(c.evictIdle.Seconds()))))
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write(body)
}

// closeAll closes every session and waits for their places to be given
// back; a session that opens later is closed as it opens. A nil cap (no
// HTTP handler) does nothing.
func (c *sessionCap) closeAll() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.closed = true
	open := make([]*capped, 0, len(c.sessions))
	for _, s := range c.sessions {
		open = append(open, s)
	}
	c.mu.Unlock()
	for _, s := range open {
		c.close(s)
	}
	c.watching.Wait() // each watcher ends as its session closes
}
