package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
)

// Access says who may call the API (see docs/access.md): bearer tokens,
// each with its scopes, given inline or in a token file, and the browser
// origins and Host names the edge accepts besides loopback ones. With no
// token, mcpflow serves loopback clients only.
type Access struct {
	Tokens []Token `json:"tokens,omitempty"`
	// TokenFile names a JSON file {"tokens": [...]} of more tokens, read
	// at start; a relative path is relative to the config file. Keeping
	// tokens there keeps them out of the config.
	TokenFile string `json:"token_file,omitempty"`
	// AllowedOrigins are browser origins (scheme://host[:port]) allowed
	// besides loopback ones.
	AllowedOrigins []string `json:"allowed_origins,omitempty"`
	// AllowedHosts are the Host header names (without port) accepted
	// besides loopback names: the names clients reach a non-loopback
	// listener by.
	AllowedHosts []string `json:"allowed_hosts,omitempty"`
}

// Token is one bearer token and what it may do.
type Token struct {
	// Name says whose token it is, in logs; never the token itself.
	Name   string   `json:"name"`
	Token  string   `json:"token"`
	Scopes []string `json:"scopes"`
	// MCPDeployments, when set, are the only deployments this token sees
	// as MCP tools: ids or path.Match patterns.
	MCPDeployments []string `json:"mcp_deployments,omitempty"`
	// MCPConnections, when set, are the only exposed connections
	// (server.mcp.expose) whose tools this token sees as MCP tools: ids
	// or path.Match patterns.
	MCPConnections []string `json:"mcp_connections,omitempty"`
}

// Scopes a token may hold: read (list, inspect, trace), run (start,
// resume and cancel runs), author (workspaces, artifacts, deployments)
// and admin (connections, registry, credentials; it also grants the
// others).
var Scopes = []string{"read", "run", "author", "admin"}

// minTokenLength keeps guessable tokens out.
const minTokenLength = 16

// Validate checks the inline tokens and the origins.
func (a *Access) Validate() error {
	if a == nil {
		return nil
	}
	var errs []error
	for _, o := range a.AllowedOrigins {
		if o == "*" {
			errs = append(errs, errors.New("access.allowed_origins: \"*\" would let any web page drive mcpflow; list the origins"))
		}
	}
	return errors.Join(append(errs, validateTokens("access.tokens", a.Tokens))...)
}

// validateTokens checks a token list: names unique and set, tokens long
// enough and unique, scopes known.
func validateTokens(where string, tokens []Token) error {
	var errs []error
	names, values := map[string]bool{}, map[string]bool{}
	for i, t := range tokens {
		at := fmt.Sprintf("%s[%d]", where, i)
		switch {
		case t.Name == "":
			errs = append(errs, fmt.Errorf("%s: a token needs a name", at))
		case names[t.Name]:
			errs = append(errs, fmt.Errorf("%s: token name %q is used twice", at, t.Name))
		}
		names[t.Name] = true
		switch {
		case len(t.Token) < minTokenLength:
			errs = append(errs, fmt.Errorf("%s (%s): the token must be at least %d characters", at, t.Name, minTokenLength))
		case values[t.Token]:
			errs = append(errs, fmt.Errorf("%s (%s): the same token is configured twice", at, t.Name))
		}
		values[t.Token] = true
		if len(t.Scopes) == 0 {
			errs = append(errs, fmt.Errorf("%s (%s): a token needs at least one scope of %v", at, t.Name, Scopes))
		}
		for _, s := range t.Scopes {
			if !slices.Contains(Scopes, s) {
				errs = append(errs, fmt.Errorf("%s (%s): unknown scope %q (scopes: %v)", at, t.Name, s, Scopes))
			}
		}
		if err := ValidatePatterns(at+".mcp_deployments", t.MCPDeployments); err != nil {
			errs = append(errs, err)
		}
		for j, p := range t.MCPConnections {
			if _, err := path.Match(p, ""); err != nil || p == "" {
				errs = append(errs, fmt.Errorf("%s.mcp_connections[%d]: %q is not a connection id or pattern", at, j, p))
			}
		}
	}
	return errors.Join(errs...)
}

// AllTokens returns the inline tokens and those of the token file, read
// relative to dir, checked together.
func (a *Access) AllTokens(dir string) ([]Token, error) {
	if a == nil {
		return nil, nil
	}
	tokens := slices.Clone(a.Tokens)
	if a.TokenFile != "" {
		path := a.TokenFile
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("access.token_file: %w", err)
		}
		var file struct {
			Tokens []Token `json:"tokens"`
		}
		if err := json.Unmarshal(data, &file); err != nil {
			return nil, fmt.Errorf("access.token_file %s: not a {\"tokens\": [...]} document: %w", path, err)
		}
		tokens = append(tokens, file.Tokens...)
	}
	if err := validateTokens("access", tokens); err != nil {
		return nil, err
	}
	return tokens, nil
}
