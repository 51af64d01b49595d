package mcpface

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/api/access"
)

// HTTPOptions configure the face's HTTP handler.
type HTTPOptions struct {
	// Backend is the workflow API acting for a principal (the edge's
	// Local).
	Backend func(access.Principal) Backend
	// Gate is the method table's access check for a principal (the
	// edge's Local), which says what the face lists.
	Gate func(access.Principal) Gate
	// MaxBodyBytes caps a request body (the edge's max_message_bytes).
	MaxBodyBytes int64
	// SessionTimeout closes a stateful session idle for that long; 0 keeps
	// it until the client ends it.
	SessionTimeout time.Duration
}

// modernEra is the first protocol version served statelessly.
const modernEra = "2026-07-28"

// Handler serves the face over streamable HTTP, for both protocol eras
// (no 2024-era HTTP+SSE endpoint):
// a request whose Mcp-Protocol-Version is 2026-07-28 or later goes to a
// stateless handler (each request on its own, cancelled with its
// stream), any other to a stateful one (sessions, 2025-11-25 and older).
// It serves behind the edge's admission, which put the caller in the
// request's context: each principal has a server of its own, offering
// what it may see, and a stateful session is bound to the principal that
// opened it. The stateful sessions are bounded per token and on the
// server (sessionCap); a face has one Handler.
func (f *Face) Handler(ctx context.Context, opts HTTPOptions) http.Handler {
	servers := principalServers{face: f, ctx: ctx, backend: opts.Backend, gate: opts.Gate, byName: map[string]*served{}}
	// Host and Origin are the edge's to check, against its allow-lists.
	common := mcp.StreamableHTTPOptions{MaxRequestBodyBytes: opts.MaxBodyBytes, DisableLocalhostProtection: true, Logger: f.log}
	stateful := common
	stateful.SessionTimeout = opts.SessionTimeout
	stateless := common
	stateless.Stateless, stateless.PropagateRequestCancellation = true, true
	f.sessions = newSessionCap(f.cfg.MaxSessionsPerToken, f.cfg.MaxSessions, time.Duration(f.cfg.SessionEvictIdleMS)*time.Millisecond,
		opts.MaxBodyBytes, servers.of, f.running.end, f.metrics, f.log)
	legacy := bindPrincipal(f.running.endingSessions(f.sessions.wrap(f.legacyTasksFront(&servers, opts.MaxBodyBytes, mcp.NewStreamableHTTPHandler(servers.of, &stateful)))))
	modern := f.tasksFront(&servers, opts.MaxBodyBytes, bindPrincipal(mcp.NewStreamableHTTPHandler(servers.of, &stateless)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Protocol-Version") >= modernEra {
			modern.ServeHTTP(w, r)
			return
		}
		legacy.ServeHTTP(w, r)
	})
}

// principalServers keeps one server per principal, made on its first
// request. Principals are the configured tokens (or Anonymous), so they
// are few.
type principalServers struct {
	face    *Face
	ctx     context.Context
	backend func(access.Principal) Backend
	gate    func(access.Principal) Gate
	mu      sync.Mutex
	byName  map[string]*served
}

func (p *principalServers) of(r *http.Request) *mcp.Server {
	if s := p.served(r); s != nil {
		return s.srv
	}
	return nil // not admitted: go-sdk answers 400
}

// served is the server of the request's principal, nil for a request not
// admitted. The servers of a Handler serve tasks, and say so: 2026-era
// ones (tasks.go) in server/discover, 2025-era ones (tasks2025.go) in
// initialize and tools/list.
func (p *principalServers) served(r *http.Request) *served {
	who, ok := access.PrincipalFrom(r.Context())
	if !ok {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.byName[who.Name]; ok {
		return s
	}
	s := p.face.newServed(p.ctx, who, p.backend(who), p.gate(who))
	s.srv.AddReceivingMiddleware(announceTasks, p.face.legacyTasks(s))
	p.byName[who.Name] = s
	return s
}

// bindPrincipal gives go-sdk the admitted caller as the request's token
// info, whose UserID binds a stateful session to the principal that
// opened it: another token's request on that session is refused.
func bindPrincipal(next http.Handler) http.Handler {
	verify := func(ctx context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		who, _ := access.PrincipalFrom(r.Context())
		return &auth.TokenInfo{UserID: who.Name}, nil
	}
	withToken := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if who, ok := access.PrincipalFrom(r.Context()); ok && who.IsAnonymous() {
			next.ServeHTTP(w, r) // no tokens: loopback clients only, one principal
			return
		}
		withToken.ServeHTTP(w, r)
	})
}
