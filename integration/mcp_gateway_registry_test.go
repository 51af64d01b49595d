package integration

import (
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// TestMCPGatewayFollowsTheSourceRegistry: a source the registry adds
// with an expose block is offered on /mcp once the registry is applied,
// with no restart, and a call of its tool goes through its session as a
// recorded pass-through run; an entry whose prefix another exposed
// connection takes is refused, naming both; and when an update drops
// the block, the next apply withdraws the tool.
func TestMCPGatewayFollowsTheSourceRegistry(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	cfg := writeServerConfig(t, t.TempDir(), config.Server{Sources: []config.Connection{stdioSource("counter.default", fakeMCP)},
		MCP: &config.MCP{Expose: []config.MCPExpose{{Connection: "counter.default", Prefix: "cfg"}}}})
	pr := startProcess(t, cfg, "mcpflow.log")
	ws := dialURL(t, pr.url)
	ctx := testContext(t)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpflow-test-go", Version: "v1.8.0"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpEndpoint(pr), MaxRetries: -1}, nil)
	is.NoErr(err)
	t.Cleanup(func() { _ = cs.Close() })
	offers := func(name string) bool {
		for tool, err := range cs.Tools(ctx, nil) {
			is.NoErr(err)
			if tool.Name == name {
				return true
			}
		}
		return false
	}
	apply := func() {
		is.NoErr(ws.Call(ctx, "workflow.admin.source_registry.apply", p.Object{}, nil))
	}

	entry := p.Object{"id": "reg.fake", "kind": "mcp", "transport": p.Object{"kind": "stdio", "command": fakeMCP},
		"expose": p.Object{"prefix": "reg", "tools": p.Object{"allow": []string{"echo"}}}}
	is.NoErr(ws.Call(ctx, "workflow.admin.source_registry.add", p.Object{"entry": entry}, nil))
	apply()
	poll.For(t, "/mcp offers reg_echo", settleWait, func() bool { return offers("reg_echo") })
	is.True(!offers("reg_counter")) // not allowed by the block
	got, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "reg_echo", Arguments: map[string]any{"message": "through the registry"}})
	is.NoErr(err)
	is.True(!got.IsError)
	runs, err := ws.ListRuns(ctx, p.ListRunsParams{})
	is.NoErr(err)
	is.True(slices.ContainsFunc(runs.Runs, func(r p.RunSummary) bool {
		return r.Kind == p.RunKindPassthrough && r.ArtifactID == "passthrough:reg.fake.echo"
	})) // recorded as any pass-through call

	clash := p.Object{"id": "reg.other", "kind": "mcp", "transport": p.Object{"kind": "stdio", "command": fakeMCP}, "expose": p.Object{"prefix": "cfg"}}
	err = ws.Call(ctx, "workflow.admin.source_registry.add", p.Object{"entry": clash}, nil)
	is.True(err != nil)
	t.Logf("a clashing prefix: %v", err)
	is.True(strings.Contains(err.Error(), `"counter.default" and "reg.other" both take the prefix "cfg"`))

	is.NoErr(ws.Call(ctx, "workflow.admin.source_registry.update", p.Object{"source_id": "reg.fake", "patch": p.Object{"expose": nil}}, nil))
	apply()
	poll.For(t, "/mcp withdraws reg_echo", settleWait, func() bool { return !offers("reg_echo") })
	is.True(offers("cfg_echo")) // the config's exposure stays
}
