package sources

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/credentials"
	"github.com/mcpflow/mcpflow/actors/supervisor"
)

// Applied is what an apply did.
type Applied struct {
	// Registered, Updated and Removed are the ids of the connections the
	// supervisor started, changed (a replaced session included) and
	// stopped.
	Registered, Updated, Removed []string
	// Connections is how many effective connections there are now, and
	// Entries how many registry entries there were.
	Connections, Entries int
	// Auth lists the enabled connections whose auth record does not bind.
	Auth []AuthFinding
}

// Apply reconciles the live connections with the registry: the
// supervisor starts, stops and replaces session actors, and once it has
// (removed sessions closed, their stdio process groups ended) the
// effective set changes, the other nodes are told and the connection
// events are recorded.
func (s *Sources) Apply(ctx context.Context) (Applied, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	merged, done, entries, err := s.reconcile(ctx)
	if err != nil {
		return Applied{}, err
	}
	s.announce()
	recordMerge(ctx, s.store, merged)
	replaced := map[string]bool{}
	for _, id := range done.Replaced {
		replaced[id] = true
	}
	for _, id := range done.Registered {
		c, _ := s.view.Get(id)
		s.record(ctx, audit.Event{Kind: audit.ConnectionRegistered, ConnectionID: id,
			Payload: map[string]any{"enabled": c.IsEnabled(), "transport_kind": c.Transport.Kind}})
	}
	for _, id := range done.Updated {
		c, _ := s.view.Get(id)
		s.record(ctx, audit.Event{Kind: audit.ConnectionUpdated, ConnectionID: id,
			Payload: map[string]any{"enabled": c.IsEnabled(), "transport_kind": c.Transport.Kind, "session_replaced": replaced[id]}})
	}
	for _, id := range done.Removed {
		s.record(ctx, audit.Event{Kind: audit.ConnectionRemoved, ConnectionID: id})
	}
	return Applied{
		Registered: nonNil(done.Registered), Updated: nonNil(done.Updated), Removed: nonNil(done.Removed),
		Connections: len(merged.Connections), Entries: entries, Auth: s.authFindings(ctx, merged.Connections),
	}, nil
}

// Reapply applies the registry again and tells the other nodes, with no
// event of its own: a login's new auth record makes the supervisor
// replace the connection's session here and on every node.
func (s *Sources) Reapply(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, _, _, err := s.reconcile(ctx); err != nil {
		return err
	}
	s.announce()
	return nil
}

// Follow applies the source registry as another node of the cluster did,
// so that every node runs the same connections; the events were that
// node's to record.
func (s *Sources) Follow(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _, _, err := s.reconcile(ctx)
	return err
}

func (s *Sources) announce() {
	if s.Announce != nil {
		s.Announce.SourcesApplied()
	}
}

// reconcile makes the config merged with the source registry the
// supervisor's connections and the view's. s.mu is held.
func (s *Sources) reconcile(ctx context.Context) (config.Merged, supervisor.Reconciled, int, error) {
	registered, entries, err := registryConnections(ctx, s.store)
	if err != nil {
		return config.Merged{}, supervisor.Reconciled{}, 0, fail(ErrFailed, "%w", err)
	}
	merged := config.Merge(s.view.Configured(), registered)
	done, err := s.supervisor.Reconcile(ctx, merged.Connections)
	// The supervisor applies what it was sent even when the wait ends
	// first: the view follows it either way.
	s.view.Set(merged.Connections)
	if err != nil {
		return config.Merged{}, supervisor.Reconciled{}, 0, fail(ErrFailed, "apply the source registry: %w", err)
	}
	return merged, done, entries, nil
}

// AuthFinding is an enabled connection whose auth record does not bind.
type AuthFinding struct {
	SourceID string
	// Code is credentials.CodeNotFound, credentials.CodeNotSupported,
	// auth_invalid or auth_unreadable.
	Code    string
	Message string
	Hint    string
}

// authFindings checks, without reaching any server, that every enabled
// connection's auth record binds: an auth_ref naming no record, a scheme
// the transport does not take, or a payload its scheme cannot use.
func (s *Sources) authFindings(ctx context.Context, conns []config.Connection) []AuthFinding {
	binder := credentials.NewBinder(credentials.FromStore(s.store))
	out := []AuthFinding{}
	for _, c := range conns {
		if !c.IsEnabled() {
			continue
		}
		err := binder.Check(ctx, c)
		if err == nil {
			continue
		}
		ref, _ := credentials.Ref(c)
		code, hint := "auth_unreadable", "check the store"
		switch {
		case errors.Is(err, credentials.ErrNotFound):
			code, hint = credentials.CodeNotFound, fmt.Sprintf("save the auth record %q (workflow.admin.auth.save) or clear the source's auth_ref", ref)
		case errors.Is(err, credentials.ErrNotSupported):
			code, hint = credentials.CodeNotSupported, "save an auth record whose scheme the source's transport takes (http: bearer, headers, oauth_refresh_token, oauth; stdio: env)"
		case errors.Is(err, credentials.ErrInvalid):
			code, hint = "auth_invalid", fmt.Sprintf("save the auth record %q again with the payload its scheme needs", ref)
		}
		out = append(out, AuthFinding{SourceID: c.ID, Code: code, Message: err.Error(), Hint: hint})
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
