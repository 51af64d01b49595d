package sources

import (
	"context"
	"errors"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/credentials"
	"github.com/mcpflow/mcpflow/actors/store"
)

// What a diagnosis of a source checks without reaching its server: that
// it has a transport to reach it by, and which auth record it uses.

// TransportConfigured says whether t can reach a server: a stdio
// transport with a command, an http or sse one with a URL.
func TransportConfigured(t config.Transport) bool {
	switch t.Kind {
	case config.TransportStdio:
		return t.Command != ""
	case config.TransportHTTP, config.TransportSSE:
		return t.URL != ""
	}
	return false
}

// AuthCheck is the auth record a connection uses, resolved as the
// runtime resolves it.
type AuthCheck struct {
	// Ref is the record's id: the connection's auth_ref (or a legacy
	// metadata.auth_ref), else its own id if a record has it; empty
	// when the connection uses none (which is fine: it needs no auth).
	Ref string
	// Present says the record exists; an auth_ref may name none.
	Present bool
	// Scheme is the record's, when present.
	Scheme string
	// TransportSupported says the connection's transport can take the
	// scheme (credentials.SchemeSupported); true when there is no record.
	TransportSupported bool
	// NeedsLogin says why the connection, which logs in with OAuth, has no
	// login in the store, and how to log in (credentials.LoginNeeded);
	// "" when it needs none.
	NeedsLogin string
}

// CheckAuth resolves the auth record of c in the store: its auth_ref,
// whose record must then exist, else a record named after c, if there is
// one.
func (s *Sources) CheckAuth(ctx context.Context, c config.Connection) (AuthCheck, error) {
	ref, explicit := credentials.Ref(c)
	rec, err := s.store.GetAuth(ctx, ref)
	switch {
	case errors.Is(err, store.ErrNotFound) && explicit:
		return AuthCheck{Ref: ref, TransportSupported: true}, nil
	case errors.Is(err, store.ErrNotFound):
		return AuthCheck{TransportSupported: true, NeedsLogin: errText(credentials.LoginNeeded(c, nil))}, nil
	case err != nil:
		return AuthCheck{}, fail(ErrFailed, "auth record %q of source %q: %w", ref, c.ID, err)
	}
	return AuthCheck{Ref: ref, Present: true, Scheme: rec.Scheme, TransportSupported: credentials.SchemeSupported(c.Transport.Kind, rec.Scheme),
		NeedsLogin: errText(credentials.LoginNeeded(c, &rec))}, nil
}

// errText is err's message, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
