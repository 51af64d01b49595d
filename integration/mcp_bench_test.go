package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
)

// BenchmarkMCPToolCall measures what the MCP face adds to a run:
//
//	go test -run '^$' -bench MCPToolCall -benchtime 1000x -count 3 ./integration/
//
// The real binary serves the goal benchmarks' counter deployment (one
// step calling `mcpflow demo-server`'s counter; SQLite at sync full).
// Each iteration makes, alternately so that both see the same machine,
// one tools/call of its tool on a warm go-sdk session to /mcp and one
// workflow.runs.start of the same deployment over /ws (the baseline),
// both answered once the run ends. Per era (a 2025-11-25 session, or
// 2026-07-28 stateless requests) it reports the p50 and p99 of each and
// their ratios mcp/ws.
func BenchmarkMCPToolCall(b *testing.B) {
	if testing.Short() {
		b.Skip("starts the real binary")
	}
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		b.Run("era="+era, func(b *testing.B) { benchMCPToolCall(b, era) })
	}
}

func benchMCPToolCall(b *testing.B, era string) {
	ctx := context.Background()
	g := startGoalServer(b, config.StoreSyncFull)
	ws := dialURL(b, g.pr.url)
	endpoint := "http://" + strings.TrimSuffix(strings.TrimPrefix(g.pr.url, "ws://"), "/ws") + "/mcp"
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ProtocolVersion; got != era {
		b.Fatalf("the session speaks %s, want %s", got, era)
	}
	call := func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "counter_workflow", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			b.Fatalf("tools/call: %v %+v", err, res)
		}
		if env, _ := res.StructuredContent.(map[string]any); env["status"] != "completed" {
			b.Fatalf("tools/call answered %+v", res.StructuredContent)
		}
	}
	call() // warm: the deployment's tool is listed, the upstream session open
	g.run(ctx, b, ws)

	var calls, runs samples
	for b.Loop() {
		start := time.Now()
		call()
		calls = append(calls, time.Since(start))

		start = time.Now()
		g.run(ctx, b, ws)
		runs = append(runs, time.Since(start))
	}
	call50, call99 := calls.percentile(.5), calls.percentile(.99)
	run50, run99 := runs.percentile(.5), runs.percentile(.99)
	b.ReportMetric(us(call50), "mcp-p50-µs")
	b.ReportMetric(us(call99), "mcp-p99-µs")
	b.ReportMetric(us(run50), "ws-p50-µs")
	b.ReportMetric(us(run99), "ws-p99-µs")
	b.ReportMetric(float64(call50)/float64(run50), "mcp/ws-p50")
	b.ReportMetric(float64(call99)/float64(run99), "mcp/ws-p99")
}
