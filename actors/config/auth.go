package config

import (
	"errors"
	"fmt"
)

// AuthOAuth is the kind of a source's auth that follows the MCP
// authorization flow (OAuth 2.1, PKCE, discovery, dynamic client
// registration): see docs/oauth.md.
const AuthOAuth = "oauth"

// SourceAuth says how a source authorizes itself beyond an auth record it
// already has. Kind "oauth" makes an HTTP source discover its
// authorization server on a 401 and wait for `mcpflow sources login`.
type SourceAuth struct {
	Kind string `json:"kind"`
	// ClientID is a client registered beforehand; empty registers one
	// dynamically (RFC 7591).
	ClientID string `json:"client_id,omitempty"`
	// Scopes are asked for; empty takes what the resource's metadata or
	// its challenge names.
	Scopes []string `json:"scopes,omitempty"`
	// RedirectPort is the loopback port of the login's redirect
	// (http://127.0.0.1:PORT/callback); 0 lets the login pick a free one,
	// which the authorization server must allow for a loopback redirect
	// (RFC 8252 §7.3).
	RedirectPort int `json:"redirect_port,omitempty"`
}

// IsOAuth reports whether c's auth is kind oauth.
func (c Connection) IsOAuth() bool { return c.Auth != nil && c.Auth.Kind == AuthOAuth }

// Validate checks a source's auth for its transport kind.
func (a *SourceAuth) Validate(transport string) error {
	if a == nil {
		return nil
	}
	if a.Kind != AuthOAuth {
		return fmt.Errorf("auth: kind must be %q, got %q", AuthOAuth, a.Kind)
	}
	if transport != TransportHTTP && transport != TransportSSE {
		return errors.New("auth: kind oauth needs an http or sse transport")
	}
	if a.RedirectPort < 0 || a.RedirectPort > 65535 {
		return fmt.Errorf("auth: redirect_port %d is not a port", a.RedirectPort)
	}
	for _, s := range a.Scopes {
		if s == "" {
			return errors.New("auth: scopes holds an empty scope")
		}
	}
	return nil
}
