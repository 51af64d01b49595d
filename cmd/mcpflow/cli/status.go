package cli

import (
	"context"
	"encoding/json"
	"fmt"
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
catalog size and last error. With -o json: {"health": …, "connections": …},
the results of workflow.health and workflow.admin.connection_statuses.list.`,
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
		t.line("server: %s, store: %s", h.Status, h.StoreRoot)
		t.line("")
		t.row("CONNECTION", "ENABLED", "SESSION", "OPENED", "RESTARTS", "IN FLIGHT", "QUEUED", "TOOLS", "LAST ERROR")
		for _, s := range res.Statuses {
			t.row(s.ConnectionID, s.Enabled, s.Session.State, s.Session.SessionsOpened, s.Session.Restarts,
				s.Session.CallsInFlight, s.Session.CallsQueued, s.NodeCount, lastError(s.Session))
		}
	})
	return err
}

// lastError is a session's last error and how long ago it was.
func lastError(s p.SessionStatus) string {
	if s.LastError == nil {
		return ""
	}
	msg := clip(*s.LastError, 80)
	if s.LastErrorAtEpochMs != nil {
		ago := time.Since(time.UnixMilli(*s.LastErrorAtEpochMs)).Round(time.Second)
		msg = fmt.Sprintf("%s (%s ago)", msg, ago)
	}
	return msg
}
