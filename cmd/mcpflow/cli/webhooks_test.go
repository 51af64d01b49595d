package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/matryer/is"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

// TestWebhookInspectShowsRecentDeliveries: inspect's table ends with the
// webhook's recent deliveries, each its outcome, status, delivery id and
// run or reason; a webhook without any shows none.
func TestWebhookInspectShowsRecentDeliveries(t *testing.T) {
	is := is.New(t)
	h := p.Webhook{ID: "on-push", DeploymentID: "ci", Path: "/hooks/on-push", CreatedAtEpochMs: 1796637600000}
	var out bytes.Buffer
	tb := newTable(&out)
	webhookTable(tb, h)
	is.NoErr(tb.flush())
	is.True(!strings.Contains(out.String(), "recent deliveries")) // none, no heading

	h.RecentDeliveries = []p.WebhookDelivery{
		{ReceivedAtEpochMs: 1796637660000, Outcome: "bad_signature", Status: 401, Reason: "the signature does not match"},
		{ReceivedAtEpochMs: 1796637600000, DeliveryID: "d-1", Outcome: "started", Status: 202, RunID: "run_1"},
	}
	out.Reset()
	tb = newTable(&out)
	webhookTable(tb, h)
	is.NoErr(tb.flush())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	is.Equal(strings.Fields(lines[len(lines)-2]), strings.Fields("2026-12-07T10:01:00Z bad_signature 401 - the signature does not match"))
	is.Equal(strings.Fields(lines[len(lines)-1]), strings.Fields("2026-12-07T10:00:00Z started 202 d-1 run_1"))
}
