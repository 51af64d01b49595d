package service

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// liveStatusTimeout bounds how long a check waits for the supervisor's
// statuses before it answers without the live state.
const liveStatusTimeout = 2 * time.Second

// Health statuses of the sources (HealthSources.Status).
const (
	sourcesOK       = "ok"
	sourcesDegraded = "degraded"
)

// liveStatuses is the live status of each connection's shared session, by
// connection id; nil when the supervisor does not answer in time (a check
// then says nothing of the live state rather than fail).
func (s *Service) liveStatuses(ctx context.Context) map[string]session.Status {
	if s.Supervisor == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, liveStatusTimeout)
	defer cancel()
	all, err := s.Supervisor.Statuses(ctx)
	if err != nil {
		return nil
	}
	byID := make(map[string]session.Status, len(all))
	for _, st := range all {
		byID[st.Connection] = st
	}
	return byID
}

// liveCause is a failing session's last error in a user's words, redacted
// against the connection's definition.
func liveCause(c config.Connection, st session.Status) string {
	if st.State == session.StateNeedsLogin {
		return "it needs an OAuth login: mcpflow sources login " + c.ID
	}
	return session.Actionable(session.Redact(c, st.LastError))
}

// liveDiag is the diagnostic of a connection whose session fails now,
// naming it, its state and the cause; ok is false while it works.
func liveDiag(c config.Connection, st session.Status, ref string) (runs.Diagnostic, bool) {
	if !c.IsEnabled() || !st.Failing() {
		return runs.Diagnostic{}, false
	}
	id, cause := c.ID, liveCause(c, st)
	switch st.State {
	case session.StateNeedsLogin:
		return runs.DiagError("needs_login", ref, &id, fmt.Sprintf("source %q needs a login: its calls fail until one", id),
			"log in: mcpflow sources login "+id), true
	case session.StateDegraded:
		return runs.DiagError("source_degraded", ref, &id, fmt.Sprintf("source %q is degraded (it restarted too often; calls fail fast): %s", id, cause),
			"fix the cause, then wait for the background probe or apply the source again (mcpflow registry apply); mcpflow sources diagnose "+id), true
	}
	return runs.DiagError("source_failing", ref, &id, fmt.Sprintf("source %q is failing to connect (%s): %s", id, st.State, cause),
		"fix the cause; calls wait for a reconnect meanwhile (mcpflow sources diagnose "+id+")"), true
}

// sessionDiagnosis is a source's live session as its diagnosis shows it.
func sessionDiagnosis(c config.Connection, st session.Status) *protocol.SourceSessionDiagnosis {
	d := &protocol.SourceSessionDiagnosis{State: firstNonEmpty(string(st.State), string(session.StateIdle)), Failing: c.IsEnabled() && st.Failing()}
	if st.LastError != "" {
		d.LastError = ptr(session.Redact(c, st.LastError))
		d.Cause = ptr(liveCause(c, st))
		d.LastErrorAtEpochMs = ptr(st.LastErrorAt.UnixMilli())
	} else if st.State == session.StateNeedsLogin {
		d.Cause = ptr(liveCause(c, st))
	}
	return d
}

// sessionDiags are the diagnostics of the failing sessions the
// deployment's bindings name: it is not runnable now.
func (s *Service) sessionDiags(ctx context.Context, bindings map[string]string) []runs.Diagnostic {
	live := s.liveStatuses(ctx)
	var diags []runs.Diagnostic
	for _, logical := range workflow.SortedKeys(bindings) {
		c, ok := s.connection(bindings[logical])
		if !ok {
			continue
		}
		if d, failing := liveDiag(c, live[c.ID], logical); failing {
			diags = append(diags, d)
		}
	}
	return diags
}

// SourcesHealth is the health of the enabled connections' sessions, as
// workflow.health and /readyz show it.
func (s *Service) SourcesHealth(ctx context.Context) *protocol.HealthSources {
	live := s.liveStatuses(ctx)
	h := &protocol.HealthSources{Status: sourcesOK, Detail: []protocol.SourceHealth{}}
	for _, c := range s.connections() {
		if !c.IsEnabled() {
			continue
		}
		h.Total++
		if st := live[c.ID]; st.Failing() {
			h.Failing++
			h.Detail = append(h.Detail, protocol.SourceHealth{SourceID: c.ID, State: string(st.State), Cause: liveCause(c, st)})
		}
	}
	if h.Failing > 0 {
		h.Status = sourcesDegraded
	}
	return h
}
