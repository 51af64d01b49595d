package mcpface

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/api/access"
)

// errSessionEnded is the cause of a tool call's end when the client ends
// its 2025-era session (DELETE) while the call runs: the client went
// away, so the run goes on.
var errSessionEnded = errors.New("the client ended its MCP session")

// inFlight keeps the cancels of the tool calls running on each 2025-era
// session. go-sdk closes a session only once its calls have returned,
// so a session's end (the client's DELETE) first ends its calls here,
// and the DELETE is answered at once; the runs go on.
type inFlight struct {
	mu       sync.Mutex
	sessions map[string]*sessionCalls // by session id
}

// sessionCalls are the calls running on one session, and whose it is.
type sessionCalls struct {
	owner   string // the principal's name
	cancels map[*context.CancelCauseFunc]struct{}
}

// track has the calls of s's handler end when their session does.
func (c *inFlight) track(s *served, handler mcp.ToolHandler) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		id := req.Session.ID()
		if id == "" { // stateless: the request's stream is its lifetime
			return handler(ctx, req)
		}
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		c.mu.Lock()
		if c.sessions == nil {
			c.sessions = map[string]*sessionCalls{}
		}
		calls := c.sessions[id]
		if calls == nil {
			calls = &sessionCalls{owner: s.who.Name, cancels: map[*context.CancelCauseFunc]struct{}{}}
			c.sessions[id] = calls
		}
		calls.cancels[&cancel] = struct{}{}
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			delete(calls.cancels, &cancel)
			if len(calls.cancels) == 0 && c.sessions[id] == calls {
				delete(c.sessions, id)
			}
			c.mu.Unlock()
		}()
		return handler(ctx, req)
	}
}

// end ends the calls of session id, if it is owner's.
func (c *inFlight) end(id, owner string) {
	c.mu.Lock()
	calls := c.sessions[id]
	if calls == nil || calls.owner != owner {
		c.mu.Unlock()
		return
	}
	delete(c.sessions, id)
	// Taken under c.mu: a call that returns deletes its cancel from the
	// map.
	cancels := make([]*context.CancelCauseFunc, 0, len(calls.cancels))
	for cancel := range calls.cancels {
		cancels = append(cancels, cancel)
	}
	c.mu.Unlock()
	for _, cancel := range cancels {
		(*cancel)(errSessionEnded)
	}
}

// endingSessions ends a session's calls before go-sdk closes it on the
// client's DELETE (go-sdk then checks, again, that the session is the
// caller's).
func (c *inFlight) endingSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); r.Method == http.MethodDelete && id != "" {
			if who, ok := access.PrincipalFrom(r.Context()); ok {
				c.end(id, who.Name)
			}
		}
		next.ServeHTTP(w, r)
	})
}
