package integration

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes"
)

// protocolVersion is what mcpflow's session actors negotiate.
var protocolVersion = session.DefaultOptions().ProtocolVersion

// BenchmarkCounterCall measures one counter call four ways in one run, all
// against the same in-process MCP server:
//
//   - direct: go-sdk CallTool on an open in-memory session (the floor);
//   - workflow_ws_sqlite: a one-step workflow run through /ws, durable;
//   - workflow_ws_memory: the same with the in-memory store, isolating the
//     edge and actor overhead from the store's fsyncs;
//   - oneshot: connect, initialize, call and close, as a gateway that
//     opens a session per call does.
//
// Compare with benchstat; read ratios against direct, not absolute times.
func BenchmarkCounterCall(b *testing.B) {
	b.Run("direct", benchDirect)
	b.Run("workflow_ws_sqlite", func(b *testing.B) { benchWorkflow(b, nil) })
	b.Run("workflow_ws_memory", func(b *testing.B) { benchWorkflow(b, store.NewMemory()) })
	b.Run("oneshot", benchOneShot)
}

func connectFake(ctx context.Context, b *testing.B) *mcp.ClientSession {
	b.Helper()
	t, err := fakes.NewInMemory(nil).NewTransport(config.Connection{ID: "fixture.default"})
	if err != nil {
		b.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		b.Fatal(err)
	}
	return cs
}

func callCounter(ctx context.Context, b *testing.B, cs *mcp.ClientSession) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "counter", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		b.Fatalf("counter: %v %v", err, res)
	}
}

func benchDirect(b *testing.B) {
	ctx := context.Background()
	cs := connectFake(ctx, b)
	defer cs.Close()
	b.ReportAllocs()
	for b.Loop() {
		callCounter(ctx, b, cs)
	}
}

func benchOneShot(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		cs := connectFake(ctx, b)
		callCounter(ctx, b, cs)
		if err := cs.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func benchWorkflow(b *testing.B, st store.Store) {
	svc := startServiceWith(b, st, session.Factories{config.TransportStdio: fakes.NewInMemory(nil)}, stdioSource("fixture.default", "in-memory"))
	c := svc.dial(b)
	deployment := buildCounterDeployment(b, c, "fixture.default")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		run, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: deployment})
		if err != nil || run.Status != "completed" {
			b.Fatalf("run: %v %+v", err, run)
		}
	}
}
