// Package access owns who may call what on mcpflow's edge: bearer tokens
// and their scopes, how a request carries its token (an Authorization
// header, or a Sec-WebSocket-Protocol value for browsers), and which
// browser origins and Host names are accepted. It decides; the edge asks.
package access

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// Scope is what a method needs and a token grants.
type Scope string

// The scopes. Admin grants every other scope; Any is what a method any
// valid token may call needs.
const (
	Any    Scope = "any"    // any valid token (no token grants it by name)
	Read   Scope = "read"   // list, inspect, trace, validate
	Run    Scope = "run"    // start, resume and cancel runs
	Author Scope = "author" // workspaces, artifacts, deployments
	Admin  Scope = "admin"  // connections, source registry, credentials
)

// Principal is who a request acts for.
type Principal struct {
	// Name is the token's configured name ("anonymous" without tokens).
	Name   string
	scopes []Scope
	all    bool
	// deployments are the patterns of the deployments the principal sees
	// as MCP tools; none: all.
	deployments []string
	// connections are the patterns of the exposed connections whose
	// tools the principal sees as MCP tools; none: all.
	connections []string
}

// Anonymous is the principal of every request when no token is
// configured: mcpflow then serves loopback clients only, and they may do
// everything.
var Anonymous = Principal{Name: "anonymous", all: true}

// IsAnonymous reports whether p is Anonymous: the server has no tokens.
func (p Principal) IsAnonymous() bool { return p.all && p.Name == Anonymous.Name }

// Internal is the principal of the server's own faces when they read for
// themselves (the MCP face following the deployments), never a caller's.
var Internal = Principal{Name: "mcpflow", all: true}

// Allows reports whether p may call a method that needs s.
func (p Principal) Allows(s Scope) bool {
	return s == Any || p.all || slices.Contains(p.scopes, s) || slices.Contains(p.scopes, Admin)
}

// Scopes lists the scopes p holds: all four for Anonymous and Internal.
func (p Principal) Scopes() []Scope {
	if p.all || slices.Contains(p.scopes, Admin) {
		return []Scope{Read, Run, Author, Admin}
	}
	return slices.Clone(p.scopes)
}

// Deployments are the patterns of the deployments p sees as MCP tools
// (a token's mcp_deployments); none: all.
func (p Principal) Deployments() []string { return slices.Clone(p.deployments) }

// NewPrincipal is the principal a server described (workflow.access.whoami),
// for a client that offers only what its token may do.
func NewPrincipal(name string, scopes []Scope, deployments []string) Principal {
	return Principal{Name: name, scopes: slices.Clone(scopes), deployments: slices.Clone(deployments)}
}

// Connections are the patterns of the exposed connections p sees (a
// token's mcp_connections); none: all.
func (p Principal) Connections() []string { return slices.Clone(p.connections) }

// WithConnections is p seeing the exposed connections of patterns (as a
// server described the principal's mcp_connections).
func (p Principal) WithConnections(patterns []string) Principal {
	p.connections = slices.Clone(patterns)
	return p
}

// SeesDeployment reports whether the principal's token offers deployment
// id as an MCP tool (config's mcp_deployments).
func (p Principal) SeesDeployment(id string) bool {
	return config.MatchAny(p.deployments, id)
}

// SeesConnection reports whether the principal's token offers the tools
// of exposed connection id as MCP tools (config's mcp_connections).
func (p Principal) SeesConnection(id string) bool {
	return config.MatchAny(p.connections, id)
}

// principalKey is the context key of a request's principal.
type principalKey struct{}

// WithPrincipal returns ctx carrying p, the principal an admitted request
// acts for.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal WithPrincipal put in ctx.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// Guard authenticates bearer tokens.
type Guard struct {
	// principals by the SHA-256 of their token: a lookup compares digests,
	// never the tokens themselves.
	digests    [][32]byte
	principals []Principal
}

// NewGuard returns a guard of tokens; with none, Enabled is false and
// every request is Anonymous.
func NewGuard(tokens []config.Token) *Guard {
	g := &Guard{}
	for _, t := range tokens {
		p := Principal{Name: t.Name, deployments: t.MCPDeployments, connections: t.MCPConnections}
		for _, s := range t.Scopes {
			p.scopes = append(p.scopes, Scope(s))
		}
		g.digests = append(g.digests, sha256.Sum256([]byte(t.Token)))
		g.principals = append(g.principals, p)
	}
	return g
}

// Enabled reports whether tokens are configured.
func (g *Guard) Enabled() bool { return len(g.digests) > 0 }

// Authenticate returns the principal of token. It compares the token's
// digest with every configured one in constant time, so that timing tells
// nothing about which prefix matched.
func (g *Guard) Authenticate(token string) (Principal, bool) {
	if !g.Enabled() {
		return Anonymous, true
	}
	if token == "" {
		return Principal{}, false
	}
	d := sha256.Sum256([]byte(token))
	found := -1
	for i := range g.digests {
		if subtle.ConstantTimeCompare(d[:], g.digests[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Principal{}, false
	}
	return g.principals[found], true
}

// SubprotocolPrefix marks the Sec-WebSocket-Protocol value that carries a
// token, for browsers, which cannot set an Authorization header on a
// WebSocket: "mcpflow.bearer.<token>". The server answers with
// Subprotocol, never echoing the token.
const (
	SubprotocolPrefix = "mcpflow.bearer."
	Subprotocol       = "mcpflow"
)

// Token returns the bearer token r carries, from its Authorization header
// or, failing that, its Sec-WebSocket-Protocol values; "" if none.
func Token(r *http.Request) string {
	if scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(token)
	}
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			if token, ok := strings.CutPrefix(strings.TrimSpace(p), SubprotocolPrefix); ok {
				return token
			}
		}
	}
	return ""
}

// Unauthenticated is the error of a request without a valid token
// (jsonrpc.Unauthenticated, -32001). It names what was missing, never the
// token.
func Unauthenticated(token string) *jsonrpc.Error {
	if token == "" {
		return jsonrpc.Errorf(jsonrpc.Unauthenticated, "authentication required: send a bearer token (Authorization: Bearer <token>, or the WebSocket subprotocols %q and %q)", Subprotocol, SubprotocolPrefix+"<token>")
	}
	return jsonrpc.Errorf(jsonrpc.Unauthenticated, "authentication failed: the bearer token matches no configured token")
}

// Forbidden is the error of a method p's scopes do not cover
// (jsonrpc.Forbidden, -32003).
func Forbidden(p Principal, method string, need Scope) *jsonrpc.Error {
	return jsonrpc.Errorf(jsonrpc.Forbidden, "forbidden: %s needs scope %q, which token %q does not have", method, need, p.Name)
}
