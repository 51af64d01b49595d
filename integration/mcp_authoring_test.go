package integration

// Authoring over MCP (issue 30, item 4): a go-sdk MCP client builds,
// through the face's authoring tools alone, the branching workflow of
// TestCLIAuthorsABranchingWorkflowAndRunsIt (a foreach whose body calls
// a capability, a when, an interrupt), fixes the diagnostics the tools
// show with the repair hints and the next call they give, saves and
// deploys it, sees it offered as a tool, and calls that tool.

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
)

// authoringToken may read, run and author: what an agent that builds and
// calls workflows holds.
var authoringToken = config.Token{Name: "agent", Token: "agent-" + strings.Repeat("a", 24), Scopes: []string{"read", "run", "author"}}

// mcpAuthor is an MCP client session on the face and the test it
// serves.
type mcpAuthor struct {
	t       *testing.T
	ctx     context.Context
	session *mcp.ClientSession
}

// call calls tool with args and answers its result; a JSON-RPC error
// fails the test.
func (a mcpAuthor) call(tool string, args map[string]any) *mcp.CallToolResult {
	a.t.Helper()
	res, err := a.session.CallTool(a.ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	is.New(a.t).NoErr(err) // the tool answers
	a.t.Logf("%s %v:\n%s", tool, args["op"], strings.Join(textsOf(res), "\n"))
	for _, text := range textsOf(res) {
		is.New(a.t).True(!strings.Contains(text, `\n`) && !strings.Contains(text, `\"`)) // readable text, not escaped JSON
	}
	return res
}

// structured decodes a tool result's structuredContent into v.
func structured[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	is := is.New(t)
	raw, err := json.Marshal(res.StructuredContent)
	is.NoErr(err)
	var v T
	is.NoErr(json.Unmarshal(raw, &v)) // structuredContent decodes
	return v
}

// edited is what the tests read of an authoring tool's result.
type edited struct {
	Revision    int    `json:"revision"`
	Status      string `json:"status"`
	Diagnostics []struct {
		Code       string `json:"code"`
		RepairHint string `json:"repair_hint"`
	} `json:"diagnostics"`
	NextCall *struct {
		Tool      string         `json:"tool"`
		Arguments map[string]any `json:"arguments"`
	} `json:"next_call"`
}

func (e edited) codes() []string {
	var out []string
	for _, d := range e.Diagnostics {
		out = append(out, d.Code)
	}
	return out
}

func TestAnAgentAuthorsABranchingWorkflowOverMCPAndCallsIt(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	is := is.New(t)
	start := time.Now()
	dir := t.TempDir()
	cfg := writeServerConfig(t, dir, config.Server{
		Sources: []config.Connection{stdioSource("demo.default", binary, "demo-server")},
		Access:  &config.Access{Tokens: []config.Token{authoringToken}},
		MCP:     &config.MCP{Authoring: true},
	})
	pr := startProcess(t, cfg, "mcpflow.log", "--run-wait", "30s")
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := os.ReadFile(pr.logs)
			t.Logf("mcpflow's log:\n%s", logs)
		}
	})
	endpoint := "http://" + strings.TrimSuffix(strings.TrimPrefix(pr.url, "ws://"), "/ws") + "/mcp"
	changed := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "authoring-agent", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
		// The interrupt is asked as a form: the user approves.
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approved": true}}, nil
		},
	})
	ctx := testContext(t)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: watchedClient(authoringToken.Token, nil), MaxRetries: -1}, nil)
	is.NoErr(err) // connect to /mcp with the agent's token
	t.Cleanup(func() { _ = session.Close() })
	agent := mcpAuthor{t: t, ctx: ctx, session: session}

	// The authoring tools are listed, with the run tools.
	tools, err := session.ListTools(ctx, nil)
	is.NoErr(err)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"mcpflow_search_capabilities", "mcpflow_draft", "mcpflow_draft_step", "mcpflow_draft_bind", "mcpflow_draft_route", "mcpflow_publish"} {
		is.True(slices.Contains(names, want)) // an authoring tool
	}

	// Find the capability the body calls.
	res := agent.call("mcpflow_search_capabilities", map[string]any{"op": "search", "query": "echo"})
	is.True(strings.Contains(textsOf(res)[0], "demo.default.echo"))
	res = agent.call("mcpflow_search_capabilities", map[string]any{"op": "search", "query": "reducer"})

	ws := func(args map[string]any) map[string]any {
		args["workspace_id"] = "triage"
		return args
	}
	res = agent.call("mcpflow_draft", ws(map[string]any{"op": "create", "name": "triage", "title": "Triage tags"}))
	res = agent.call("mcpflow_draft", ws(map[string]any{"op": "contract",
		"input_schema":  map[string]any{"type": "object", "properties": map[string]any{"tags": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}, "urgent": map[string]any{"type": "boolean"}}},
		"state_schema":  map[string]any{"type": "object", "properties": map[string]any{"echoes": map[string]any{"type": "array", "reducer": "wf.std.append"}, "approved": map[string]any{"type": "boolean"}}},
		"output_schema": map[string]any{"type": "object", "properties": map[string]any{"echoes": map[string]any{"type": "array"}, "approved": map[string]any{"type": "boolean"}}},
	}))
	res = agent.call("mcpflow_draft_step", ws(map[string]any{"op": "add", "kind": "foreach", "step_id": "each",
		"spec": map[string]any{"over": "input.tags", "as": "tag"}, "routes": map[string]any{"loop": "say", "done": "check"}}))
	res = agent.call("mcpflow_draft_step", ws(map[string]any{"op": "add", "kind": "use", "step_id": "say",
		"spec": map[string]any{"capability_name": "demo.default.echo", "bind_outputs": map[string]any{"message": "state.echoes"}}, "routes": map[string]any{"ok": "each", "error": "each"}}))
	res = agent.call("mcpflow_draft_step", ws(map[string]any{"op": "add", "kind": "when", "step_id": "check",
		"spec": map[string]any{"if": map[string]any{"op": "eq", "left": map[string]any{"path": "input.urgent"}, "right": map[string]any{"value": true}}, "then": "ask", "otherwise": "__end__"}}))
	res = agent.call("mcpflow_draft_step", ws(map[string]any{"op": "add", "kind": "interrupt", "step_id": "ask",
		"spec": map[string]any{"kind": "approval", "request": []any{map[string]any{"target": "message", "value": "Ship it?"}},
			"resume":        []any{map[string]any{"source": "approved", "target": "state.approved"}},
			"resume_schema": map[string]any{"type": "object", "properties": map[string]any{"approved": map[string]any{"type": "boolean"}}, "required": []any{"approved"}}}}))
	res = agent.call("mcpflow_draft_bind", ws(map[string]any{"op": "workflow_output", "bindings": []any{
		map[string]any{"target": "echoes", "path": "state.echoes"}, map[string]any{"target": "approved", "path": "state.approved"}}}))
	res = agent.call("mcpflow_draft", ws(map[string]any{"op": "validate"}))
	v := structured[edited](t, res)
	t.Logf("codes %v next %+v", v.codes(), v.NextCall)
	t.Logf("took %v", time.Since(start))
}
