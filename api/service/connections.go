package service

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/sources"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// connectionMethods are workflow.admin.connections.* and
// workflow.admin.connection_statuses.list: the effective connections,
// their statuses, a catalog refresh and the OAuth login (login.go).
func (s *Service) connectionMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodConnectionsList:           forAdmin(s.listConnections),
		protocol.MethodConnectionStatusesList:    forAdmin(s.listConnectionStatuses),
		protocol.MethodConnectionsRefreshCatalog: forAdmin(s.refreshCatalog),
		protocol.MethodConnectionsLoginStart:     forAdmin(s.loginStart),
		protocol.MethodConnectionsLoginComplete:  forAdmin(s.loginComplete),
	}
}

func (s *Service) listConnections(context.Context, protocol.Empty) (protocol.ListConnectionsResult, error) {
	conns := s.connections()
	out := make([]protocol.Connection, 0, len(conns))
	for _, c := range conns {
		out = append(out, protocol.Connection{
			ID: c.ID, Server: c.Server(), Account: c.AccountName(), Enabled: c.IsEnabled(),
			Metadata: sources.Metadata(c), SourceConfigOwnership: firstNonEmpty(c.Ownership, "locked"),
		})
	}
	return protocol.ListConnectionsResult{Connections: out, Total: len(out)}, nil
}

func (s *Service) listConnectionStatuses(ctx context.Context, _ protocol.Empty) (protocol.ListConnectionStatusesResult, error) {
	live, err := s.Supervisor.Statuses(ctx)
	if err != nil {
		return protocol.ListConnectionStatusesResult{}, fmt.Errorf("connection statuses: %w", err)
	}
	byID := map[string]session.Status{}
	for _, st := range live {
		byID[st.Connection] = st
	}
	conns := s.connections()
	out := make([]protocol.ConnectionStatus, 0, len(conns))
	for _, c := range conns {
		st := byID[c.ID]
		row := protocol.ConnectionStatus{
			ConnectionID: c.ID, Server: c.Server(), Account: c.AccountName(), Enabled: c.IsEnabled(),
			Session: sessionStatus(c, st),
		}
		if snap, ok := s.Catalogs.Get(c.ID); ok {
			row.HasSnapshot, row.FetchedAtEpochMs, row.MaxAgeSeconds = true, &snap.FetchedAtEpochMs, &snap.MaxAgeSeconds
			row.NodeCount, row.ResourceCount, row.PromptCount = len(snap.Tools), len(snap.Resources), len(snap.Prompts)
		}
		out = append(out, row)
	}
	return protocol.ListConnectionStatusesResult{Statuses: out, Total: len(out)}, nil
}

// sessionStatus is the session part of a connection status row. The
// session actor has already redacted the last error; it is redacted here
// once more, against the connection's current definition.
func sessionStatus(c config.Connection, st session.Status) protocol.SessionStatus {
	ms := func(t time.Time) *int64 {
		if t.IsZero() {
			return nil
		}
		v := t.UnixMilli()
		return &v
	}
	return protocol.SessionStatus{
		State: firstNonEmpty(string(st.State), string(session.StateIdle)), Generation: st.Generation,
		SessionsOpened: st.SessionsOpened, Restarts: st.Restarts, CallsInFlight: st.CallsInFlight, CallsQueued: st.CallsQueued,
		MissedPings: st.MissedPings, LastError: optional(session.Redact(c, st.LastError)), LastErrorAtEpochMs: ms(st.LastErrorAt),
		LastSuccessAtEpochMs: ms(st.LastSuccessAt), NextAttemptAtEpochMs: ms(st.NextAttemptAt), LoginHost: optional(st.LoginHost),
		Logs:  connectionLogs(c, st.Logs),
		Cause: failingCause(c, st),
	}
}

// connectionLogs are a connection's own log messages as the API shows
// them (the session redacted them of the connection's secrets).
func connectionLogs(c config.Connection, logs []session.ConnectionLog) []protocol.ConnectionLog {
	out := make([]protocol.ConnectionLog, 0, len(logs))
	for _, l := range logs {
		out = append(out, protocol.ConnectionLog{AtEpochMs: l.At.UnixMilli(), Generation: l.Generation, CallsInFlight: l.CallsInFlight,
			Level: l.Log.Level, Logger: l.Log.Logger, Data: l.Log.Data, Truncated: l.Log.Truncated})
	}
	return out
}

// failingCause is the cause of a failing session in a user's words, nil
// while it works.
func failingCause(c config.Connection, st session.Status) *string {
	if !st.Failing() {
		return nil
	}
	return ptr(liveCause(c, st))
}

func (s *Service) refreshCatalog(ctx context.Context, p protocol.RefreshCatalogParams) (protocol.RefreshCatalogResult, error) {
	if p.ConnectionID == "" {
		return protocol.RefreshCatalogResult{}, invalidParams("invalid params: missing required key \"connection_id\"")
	}
	if !s.isConnection(p.ConnectionID) {
		return protocol.RefreshCatalogResult{}, notFound("unknown connection %q", p.ConnectionID)
	}
	s.record(ctx, audit.RefreshStartedEvent(p.ConnectionID))
	snap, err := s.Supervisor.RefreshCatalog(ctx, p.ConnectionID)
	s.record(ctx, audit.RefreshEndedEvent(p.ConnectionID, snap, err))
	if err != nil {
		return protocol.RefreshCatalogResult{}, upstream("refresh catalog of %q: %v", p.ConnectionID, err)
	}
	return refreshResult(snap), nil
}

func refreshResult(snap catalog.Snapshot) protocol.RefreshCatalogResult {
	return protocol.RefreshCatalogResult{
		ConnectionID: snap.ConnectionID, FetchedAtEpochMs: snap.FetchedAtEpochMs,
		NodeCount: len(snap.Tools), ResourceCount: len(snap.Resources), PromptCount: len(snap.Prompts),
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
