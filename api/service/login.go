package service

import (
	"context"
	"errors"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/credentials"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// loginBinder is the binder of a login: it reads and saves the
// connection's oauth record in the store (which seals it).
func (s *Service) loginBinder() *credentials.Binder {
	b := credentials.NewBinder(credentials.FromStore(s.Store))
	b.Records = s.Store
	return b
}

// loginConnection is the oauth connection a login names.
func (s *Service) loginConnection(id string) (config.Connection, error) {
	if id == "" {
		return config.Connection{}, invalidParams("invalid params: missing required key \"connection_id\"")
	}
	c, ok := s.connection(id)
	if !ok {
		return config.Connection{}, notFound("unknown connection %q", id)
	}
	if !c.IsOAuth() {
		return config.Connection{}, invalid("connection %q has no auth {\"kind\": \"oauth\"}: it takes no login", id)
	}
	return c, nil
}

// loginError maps a login step's error: a refused step is invalid, the
// rest (discovery, the store) upstream.
func loginError(err error) error {
	if errors.Is(err, credentials.ErrLogin) {
		return invalid("%v", err)
	}
	return upstream("%v", err)
}

func (s *Service) loginStart(ctx context.Context, p protocol.LoginStartParams) (protocol.LoginStartResult, error) {
	c, err := s.loginConnection(p.ConnectionID)
	if err != nil {
		return protocol.LoginStartResult{}, err
	}
	start, err := s.loginBinder().BeginLogin(ctx, c, p.RedirectURI, p.CodeChallenge, p.State)
	if err != nil {
		return protocol.LoginStartResult{}, loginError(err)
	}
	return protocol.LoginStartResult{ConnectionID: c.ID, AuthorizationURL: start.URL, AuthorizationHost: start.Host, Issuer: start.Issuer, RedirectURI: start.RedirectURI}, nil
}

// loginComplete exchanges the code, saves the tokens, and makes the
// session connect at once: the supervisor replaces the connection's
// session actor (its auth record changed) and the catalog is listed
// through the new one.
func (s *Service) loginComplete(ctx context.Context, p protocol.LoginCompleteParams) (protocol.LoginCompleteResult, error) {
	c, err := s.loginConnection(p.ConnectionID)
	if err != nil {
		return protocol.LoginCompleteResult{}, err
	}
	b := s.loginBinder()
	if err := b.CompleteLogin(ctx, c, p.Code, p.CodeVerifier, p.RedirectURI); err != nil {
		return protocol.LoginCompleteResult{}, loginError(err)
	}
	if err := s.Sources.Reapply(ctx); err != nil { // the other nodes replace theirs too
		return protocol.LoginCompleteResult{}, sourcesErr(err)
	}
	host := ""
	if rec, err := s.Store.GetAuth(ctx, authRef(c)); err == nil {
		host, _ = credentials.LoginRecord(rec)
	}
	s.record(ctx, audit.RefreshStartedEvent(c.ID))
	snap, err := s.Supervisor.RefreshCatalog(ctx, c.ID)
	s.record(ctx, audit.RefreshEndedEvent(c.ID, snap, err))
	if err != nil {
		return protocol.LoginCompleteResult{}, upstream("the login of %q is saved, but its session did not connect: %v", c.ID, err)
	}
	return protocol.LoginCompleteResult{ConnectionID: c.ID, AuthorizationHost: host, State: string(session.StateOpen), NodeCount: len(snap.Tools)}, nil
}

func authRef(c config.Connection) string {
	id, _ := credentials.Ref(c)
	return id
}
