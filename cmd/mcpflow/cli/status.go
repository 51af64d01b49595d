package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

func newStatusCommand(r *remote) *cobra.Command {
	return &cobra.Command{
		Use:     "status",
		Example: "  mcpflow status\n  mcpflow status --url ws://10.0.0.5:8765/ws -o json",
		Short:   "Show the server's health and each connection's session",
		Long: `Show the server's health and, for each MCP connection, its upstream
session: state, sessions opened, restarts, calls in flight and queued,
catalog size and last error. While a source fails (failing to connect,
degraded, waiting for a login) the server is "degraded (N of M sources
failing)", and each failing source's cause comes first, whole, in words
(the command was not found on PATH, the server refused the connection…).
With -o json: {"health": …, "connections": …}, the results of
workflow.health (its sources say which fail) and
workflow.admin.connection_statuses.list (each session's cause).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return r.do(cmd, status)
		},
	}
}

func status(ctx context.Context, c *conn) error {
	health, err := c.call(ctx, p.MethodHealth, nil)
	if err != nil {
		return err
	}
	statuses, err := c.call(ctx, p.MethodConnectionStatusesList, nil)
	if err != nil {
		return err
	}
	if c.json() {
		return printJSON(c.out, map[string]json.RawMessage{"health": health, "connections": statuses})
	}
	var h p.HealthResult
	if err := json.Unmarshal(health, &h); err != nil {
		return fmt.Errorf("%s: decode result: %w", p.MethodHealth, err)
	}
	_, err = show(c, p.MethodConnectionStatusesList, statuses, func(t *table, res p.ListConnectionStatusesResult) {
		t.line("server: %s, store: %s", serverHealth(h), h.StoreRoot)
		t.line("")
		failing := false
		for _, s := range res.Statuses {
			if s.Session.Cause != nil {
				t.line("%s", wrap(s.ConnectionID+" is "+stateWords(s.Session.State)+": "+*s.Session.Cause+" ("+lastErrorAgo(s.Session)+"mcpflow sources diagnose "+s.ConnectionID+")", wrapWidth, "    "))
				failing = true
			}
		}
		if failing {
			t.line("")
		}
		t.row("CONNECTION", "ENABLED", "SESSION", "OPENED", "RESTARTS", "IN FLIGHT", "QUEUED", "TOOLS", "LAST ERROR")
		for _, s := range res.Statuses {
			t.row(s.ConnectionID, s.Enabled, sessionState(s.Session), s.Session.SessionsOpened, s.Session.Restarts,
				s.Session.CallsInFlight, s.Session.CallsQueued, s.NodeCount, lastError(s.Session))
		}
	})
	return err
}

// stateWords is a failing session's state as a sentence says it.
func stateWords(state string) string {
	switch state {
	case "backoff":
		return "failing to connect (it retries)"
	case "connecting":
		return "reconnecting after a failure"
	case "needs_login":
		return "waiting for a login"
	}
	return state
}

// serverHealth is what the status line says of the server: ok, or
// degraded with how many of its sources fail.
func serverHealth(h p.HealthResult) string {
	if h.Sources == nil || h.Sources.Failing == 0 {
		return h.Status
	}
	return fmt.Sprintf("degraded (%d of %d sources failing)", h.Sources.Failing, h.Sources.Total)
}

// wrapWidth is the width status wraps a cause at.
const wrapWidth = 100

// wrap breaks s into lines of at most width characters at spaces (a
// longer word stays whole), the lines after the first indented.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	line := 0
	for i, word := range strings.Fields(s) {
		switch {
		case i == 0:
		case line+1+len(word) > width:
			b.WriteString("\n" + indent)
			line = len(indent)
		default:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(word)
		line += len(word)
	}
	return b.String()
}

// lastErrorAgo is "last error 17s ago; " of a session, "" without one.
func lastErrorAgo(s p.SessionStatus) string {
	if s.LastErrorAtEpochMs == nil {
		return ""
	}
	return fmt.Sprintf("last error %s ago; ", time.Since(time.UnixMilli(*s.LastErrorAtEpochMs)).Round(time.Second))
}

// sessionState is a session's state, with where to log in when it needs
// a login.
func sessionState(s p.SessionStatus) string {
	if s.LoginHost != nil && *s.LoginHost != "" {
		return s.State + " (" + *s.LoginHost + ")"
	}
	return s.State
}

// lastError is a session's last error and how long ago it was; a
// failing session's cause is printed whole above the table instead.
func lastError(s p.SessionStatus) string {
	if s.LastError == nil {
		return ""
	}
	if s.Cause != nil {
		return "see above"
	}
	msg := clip(*s.LastError, 80)
	if s.LastErrorAtEpochMs != nil {
		ago := time.Since(time.UnixMilli(*s.LastErrorAtEpochMs)).Round(time.Second)
		msg = fmt.Sprintf("%s (%s ago)", msg, ago)
	}
	return msg
}
