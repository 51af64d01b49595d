package integration

import (
	"context"
	"os/exec"
	"testing"
	"time"

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
//     opens a session per call does;
//   - direct_stdio and oneshot_stdio: the same two against a real
//     `mcpflow demo-server` subprocess, where a one-shot pays the spawn.
//
// Compare with benchstat; read ratios against direct, not absolute times.
func BenchmarkCounterCall(b *testing.B) {
	inMemory := func() mcp.Transport {
		return must(b)(fakes.NewInMemory(nil).NewTransport(config.Connection{ID: "fixture.default"}))
	}
	stdio := func() mcp.Transport {
		return &mcp.CommandTransport{Command: exec.Command(binary, "demo-server"), TerminateDuration: time.Second}
	}
	b.Run("direct", func(b *testing.B) { benchDirect(b, inMemory) })
	b.Run("workflow_ws_sqlite", func(b *testing.B) { benchWorkflow(b, nil) })
	b.Run("workflow_ws_memory", func(b *testing.B) { benchWorkflow(b, store.NewMemory()) })
	b.Run("oneshot", func(b *testing.B) { benchOneShot(b, inMemory) })
	b.Run("direct_stdio", func(b *testing.B) { benchDirect(b, stdio) })
	b.Run("oneshot_stdio", func(b *testing.B) { benchOneShot(b, stdio) })
}

// must fails the benchmark on a setup error.
func must(b *testing.B) func(mcp.Transport, error) mcp.Transport {
	return func(t mcp.Transport, err error) mcp.Transport {
		if err != nil {
			b.Fatal(err)
		}
		return t
	}
}

func connect(ctx context.Context, b *testing.B, t mcp.Transport) *mcp.ClientSession {
	b.Helper()
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

func benchDirect(b *testing.B, transport func() mcp.Transport) {
	ctx := context.Background()
	cs := connect(ctx, b, transport())
	defer cs.Close()
	b.ReportAllocs()
	for b.Loop() {
		callCounter(ctx, b, cs)
	}
}

func benchOneShot(b *testing.B, transport func() mcp.Transport) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		cs := connect(ctx, b, transport())
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
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
}
