package config

import (
	"cmp"
	"errors"
	"fmt"
	"path"
)

// MCP says how /mcp and `mcpflow mcp` offer the deployments to MCP
// clients (see docs/mcp.md). Every field is optional.
type MCP struct {
	// Disabled serves no /mcp.
	Disabled bool `json:"disabled,omitempty"`
	// Tools is how deployments become tools: MCPToolsAuto (the default:
	// one tool per deployment up to MaxTools, beyond it the two finder
	// tools), MCPToolsPerDeployment or MCPToolsFind.
	Tools string `json:"tools,omitempty"`
	// MaxTools is the number of deployments beyond which auto offers the
	// finder tools instead of one tool each (default 64).
	MaxTools int `json:"max_tools,omitempty"`
	// Deployments, when set, are the only deployments offered: ids or
	// path.Match patterns ("billing_*.default").
	Deployments []string `json:"deployments,omitempty"`
	// Authoring offers the authoring tools to tokens with the author
	// scope (off by default).
	Authoring bool `json:"authoring,omitempty"`
	// HeartbeatMS is the longest silence on a tool call's progress while
	// a step runs (default 15000, at most 20000).
	HeartbeatMS int `json:"heartbeat_ms,omitempty"`
	// MaxSessionsPerToken bounds the 2025-era sessions one token (or, on
	// a server without tokens, all clients) holds open at once (default
	// 100); MaxSessions bounds them on the whole server (default 1000).
	// At a bound, a new session takes the place of the bound's least
	// recently used session idle for SessionEvictIdleMS (default 60 000),
	// and is refused when none is.
	MaxSessionsPerToken int `json:"max_sessions_per_token,omitempty"`
	MaxSessions         int `json:"max_sessions,omitempty"`
	SessionEvictIdleMS  int `json:"session_evict_idle_ms,omitempty"`
	// Expose offers connections' upstream tools beside the deployments
	// (gateway mode, expose.go).
	Expose []MCPExpose `json:"expose,omitempty"`
}

// How deployments become tools.
const (
	MCPToolsAuto          = "auto"
	MCPToolsPerDeployment = "per_deployment"
	MCPToolsFind          = "find"
)

// MCP defaults and limits.
const (
	DefaultMCPMaxTools   = 64
	DefaultMCPHeartbeat  = 15000
	MaxMCPHeartbeatMS    = 20000
	minMCPHeartbeatMS    = 100
	mcpDeploymentPattern = "server.mcp.deployments"

	DefaultMCPMaxSessionsPerToken = 100
	DefaultMCPMaxSessions         = 1000
	DefaultMCPSessionEvictIdleMS  = 60_000
)

// Validate checks an mcp block.
func (m *MCP) Validate() error {
	if m == nil {
		return nil
	}
	var errs []error
	switch m.Tools {
	case "", MCPToolsAuto, MCPToolsPerDeployment, MCPToolsFind:
	default:
		errs = append(errs, fmt.Errorf("server.mcp.tools must be %s, %s or %s, got %q", MCPToolsAuto, MCPToolsPerDeployment, MCPToolsFind, m.Tools))
	}
	if m.MaxTools < 0 {
		errs = append(errs, fmt.Errorf("server.mcp.max_tools must not be negative, got %d", m.MaxTools))
	}
	if m.HeartbeatMS != 0 && (m.HeartbeatMS < minMCPHeartbeatMS || m.HeartbeatMS > MaxMCPHeartbeatMS) {
		errs = append(errs, fmt.Errorf("server.mcp.heartbeat_ms must be from %d to %d, got %d", minMCPHeartbeatMS, MaxMCPHeartbeatMS, m.HeartbeatMS))
	}
	for _, f := range []struct {
		name string
		n    int
	}{{"max_sessions_per_token", m.MaxSessionsPerToken}, {"max_sessions", m.MaxSessions}, {"session_evict_idle_ms", m.SessionEvictIdleMS}} {
		if f.n < 0 {
			errs = append(errs, fmt.Errorf("server.mcp.%s must not be negative (0 keeps the default), got %d", f.name, f.n))
		}
	}
	if perToken, all := m.SessionCaps(); perToken > all {
		errs = append(errs, fmt.Errorf("server.mcp.max_sessions_per_token (%d) must not exceed server.mcp.max_sessions (%d)", perToken, all))
	}
	if err := ValidatePatterns(mcpDeploymentPattern, m.Deployments); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// SessionCaps are the bounds on 2025-era sessions, defaults filled in:
// per token, and on the whole server.
func (m *MCP) SessionCaps() (perToken, all int) {
	if m == nil {
		return DefaultMCPMaxSessionsPerToken, DefaultMCPMaxSessions
	}
	return cmp.Or(m.MaxSessionsPerToken, DefaultMCPMaxSessionsPerToken), cmp.Or(m.MaxSessions, DefaultMCPMaxSessions)
}

// ValidatePatterns checks deployment patterns (path.Match syntax).
func ValidatePatterns(where string, patterns []string) error {
	var errs []error
	for i, p := range patterns {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			errs = append(errs, fmt.Errorf("%s[%d]: %q is not a deployment id or pattern", where, i, p))
		}
	}
	return errors.Join(errs...)
}

// MatchAny reports whether id matches one of patterns; every id matches
// when there are none.
func MatchAny(patterns []string, id string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if ok, _ := path.Match(p, id); ok {
			return true
		}
	}
	return false
}
