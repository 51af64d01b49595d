package engines_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
	"github.com/mcpflow/mcpflow/fakes"
)

// counterSource is the source of the counter tool: fakes' in-memory MCP
// server, as integration's BenchmarkCounterCall has it.
var counterSource = config.Connection{Kind: "mcp", ID: "fixture.default",
	Transport: config.Transport{Kind: config.TransportStdio, Command: "in-memory"}}

// BenchmarkWarmRunAlternated measures a whole warm one-step run of the
// counter workflow through /ws (integration's
// CounterCall/workflow_ws_sqlite), in process, on two mcpflows at once:
// one with its store on modernc, one on cgo SQLite, in turns in one loop.
// It reports each one's median time per run (ENGINE-p50-ns) and cgo's
// over modernc's.
func BenchmarkWarmRunAlternated(b *testing.B) {
	alternateAtEachLevel(b, func(b *testing.B, level syncLevel) (ops []engineOp) {
		for _, engine := range sqliteEngines {
			c, deployment := startMcpflow(b, openStore(b, engine.driver, level))
			ctx := b.Context()
			run := func(int) error { return runCounter(ctx, c, deployment) }
			if err := run(0); err != nil { // the first run opens the session
				b.Fatal(err)
			}
			ops = append(ops, engineOp{engine.name, run})
		}
		return ops
	})
}

// runCounter runs the counter deployment once and checks that it
// completed.
func runCounter(ctx context.Context, c *client.Client, deployment string) error {
	run, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: deployment})
	if err != nil {
		return fmt.Errorf("run %s: %w", deployment, err)
	}
	if run.Status != store.RunCompleted {
		return fmt.Errorf("run %s: %s", deployment, run.Status)
	}
	return nil
}

// startMcpflow starts mcpflow in process on st, with the counter's
// source, serving /ws on a loopback port until b ends, and returns a
// client of it and the id of the counter workflow's deployment.
func startMcpflow(b *testing.B, st store.Store) (*client.Client, string) {
	b.Helper()
	cfg := &config.File{Version: 1, Server: config.Server{Store: config.Store{Root: b.TempDir()}, Sources: []config.Connection{counterSource}}}
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	opts := app.DefaultOptions(cfg)
	opts.Store, opts.Transports = st, session.Factories{config.TransportStdio: fakes.NewInMemory(nil)}
	ctx, cancel := context.WithTimeout(b.Context(), 30*time.Second)
	defer cancel()
	a, err := app.Start(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- a.Serve(l) }()
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := errors.Join(a.Shutdown(ctx), <-served); err != nil {
			b.Error(err)
		}
	})
	c, err := client.Dial(ctx, "ws://"+l.Addr().String()+"/ws")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := c.Close(); err != nil {
			b.Error(err)
		}
	})
	deployment, err := deployCounter(ctx, c)
	if err != nil {
		b.Fatal(err)
	}
	return c, deployment
}

// deployCounter makes a workflow of the counter tool and deploys it with
// its suggested bindings; it returns the deployment's id.
func deployCounter(ctx context.Context, c *client.Client) (string, error) {
	if _, err := c.RefreshConnectionCatalog(ctx, counterSource.ID); err != nil {
		return "", fmt.Errorf("refresh the catalog: %w", err)
	}
	const workflow = "counter_workflow"
	if _, err := c.CreateDraftWorkspaceFromCapability(ctx, p.CreateFromCapabilityParams{
		WorkspaceID: "counter_ws", CapabilityName: counterSource.ID + ".counter", Name: new(workflow),
	}); err != nil {
		return "", fmt.Errorf("draft the workflow: %w", err)
	}
	saved, err := c.CreateArtifactFromWorkspace(ctx, p.CreateArtifactParams{
		WorkspaceID: "counter_ws", ArtifactID: workflow, Version: 1, Title: "Counter", Outcomes: []string{"ok", "error"},
	})
	if err != nil {
		return "", fmt.Errorf("save the workflow: %w", err)
	}
	var bindings []any
	for logical, concrete := range saved.SuggestedBindings {
		bindings = append(bindings, p.Object{"logical_source": logical, "concrete_source": concrete})
	}
	dep, err := c.SaveDeployment(ctx, p.Object{"id": workflow + ".default", "artifact_id": workflow, "artifact_version": 1, "bindings": bindings})
	if err != nil {
		return "", fmt.Errorf("deploy the workflow: %w", err)
	}
	return dep.DeploymentID, nil
}
