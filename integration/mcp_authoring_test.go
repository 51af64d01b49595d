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
		Access:  &config.Access{Tokens: []config.Token{authoringToken, authorToken}},
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
	res = agent.call("mcpflow_search_capabilities", map[string]any{"op": "reducers"})
	is.True(strings.Contains(textsOf(res)[0], ".append")) // the reducer the echoes need

	ws := func(args map[string]any) map[string]any {
		args["workspace_id"] = "triage"
		return args
	}
	// An empty draft: no steps, so no start; the next call adds one.
	v := structured[edited](t, agent.call("mcpflow_draft", ws(map[string]any{"op": "create", "name": "triage", "title": "Triage tags"})))
	is.Equal(v.Revision, 1)
	is.Equal(v.codes(), []string{"unknown_start"})
	is.Equal(v.NextCall.Tool, "mcpflow_draft_step")
	is.Equal(v.NextCall.Arguments["op"], "add")
	agent.call("mcpflow_draft", ws(map[string]any{"op": "contract",
		"input_schema":  map[string]any{"type": "object", "properties": map[string]any{"tags": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}, "urgent": map[string]any{"type": "boolean"}}},
		"state_schema":  map[string]any{"type": "object", "properties": map[string]any{"echoes": map[string]any{"type": "array", "reducer": "wf.std.append"}, "approved": map[string]any{"type": "boolean"}}},
		"output_schema": map[string]any{"type": "object", "properties": map[string]any{"echoes": map[string]any{"type": "array"}, "approved": map[string]any{"type": "boolean"}}},
	}))

	// each: once per tag, its body say, then check. The steps it names
	// come later: the workspace keeps invalid drafts.
	v = structured[edited](t, agent.call("mcpflow_draft_step", ws(map[string]any{"op": "add", "kind": "foreach", "step_id": "each",
		"spec": map[string]any{"over": "input.tags", "as": "tag"}, "routes": map[string]any{"loop": "say", "done": "check"}})))
	is.Equal(v.Revision, 3) // each edit at the current revision, read for the agent
	is.True(slices.Contains(v.codes(), "unknown_edge_destination"))
	// say: echo, its output appended to state.echoes; its input left
	// unbound (the agent forgot it).
	agent.call("mcpflow_draft_step", ws(map[string]any{"op": "add", "kind": "use", "step_id": "say",
		"spec": map[string]any{"capability_name": "demo.default.echo", "bind_outputs": map[string]any{"message": "state.echoes"}}, "routes": map[string]any{"ok": "each", "error": "each"}}))
	// check: ask when urgent, else end.
	agent.call("mcpflow_draft_step", ws(map[string]any{"op": "add", "kind": "when", "step_id": "check",
		"spec": map[string]any{"if": map[string]any{"op": "eq", "left": map[string]any{"path": "input.urgent"}, "right": map[string]any{"value": true}}, "then": "ask", "otherwise": "__end__"}}))
	// ask: an approval into state.approved; its outcome left unrouted.
	agent.call("mcpflow_draft_step", ws(map[string]any{"op": "add", "kind": "interrupt", "step_id": "ask",
		"spec": map[string]any{"kind": "approval", "request": []any{map[string]any{"target": "message", "value": "Ship it?"}},
			"resume":        []any{map[string]any{"source": "approved", "target": "state.approved"}},
			"resume_schema": map[string]any{"type": "object", "properties": map[string]any{"approved": map[string]any{"type": "boolean"}}, "required": []any{"approved"}}}}))
	agent.call("mcpflow_draft_bind", ws(map[string]any{"op": "workflow_output", "bindings": []any{
		map[string]any{"target": "echoes", "path": "state.echoes"}, map[string]any{"target": "approved", "path": "state.approved"}}}))

	// Validate: the two slips, each with its repair hint.
	res = agent.call("mcpflow_draft", ws(map[string]any{"op": "validate"}))
	v = structured[edited](t, res)
	is.Equal(v.Status, "invalid")
	is.True(slices.Contains(v.codes(), "required_input_unbound"))
	is.True(slices.Contains(v.codes(), "missing_outcome_edge"))
	text := textsOf(res)[0]
	is.True(strings.Contains(text, `- error required_input_unbound at steps.say.input: step "say" does not fill "message"`))
	is.True(strings.Contains(text, "with these tools: mcpflow_draft_bind op bind")) // the repair, as a tool
	is.True(strings.Contains(text, `- error missing_outcome_edge at steps.ask: outcome "submitted" of step "ask" has no route`))

	// Repair the unbound input as the hint says: op inputs, the foreach's
	// item into message. The edit's next call then routes ask's outcome;
	// the agent makes it as given.
	v = structured[edited](t, agent.call("mcpflow_draft_bind", ws(map[string]any{"op": "inputs", "step_id": "say",
		"bindings": []any{map[string]any{"target": "message", "path": "context.tag"}}})))
	is.True(!slices.Contains(v.codes(), "required_input_unbound")) // fixed
	is.True(v.NextCall != nil)                                     // a next call
	is.Equal(v.NextCall.Tool, "mcpflow_draft_route")
	is.Equal(v.NextCall.Arguments["op"], "branch")
	is.Equal(v.NextCall.Arguments["routes"], map[string]any{"submitted": "__end__"})
	v = structured[edited](t, agent.call(v.NextCall.Tool, v.NextCall.Arguments))
	is.Equal(v.Status, "valid")
	is.Equal(len(v.Diagnostics), 0)

	// Compile, save, and deploy as the save's next call says.
	res = agent.call("mcpflow_draft", ws(map[string]any{"op": "compile"}))
	is.True(strings.Contains(textsOf(res)[0], "compiled plan:"))
	is.True(v.NextCall != nil && v.NextCall.Tool == "mcpflow_publish" && v.NextCall.Arguments["op"] == "save") // valid: save it
	save := v.NextCall.Arguments
	save["artifact_id"], save["title"], save["description"] = "triage", "Triage tags", "Echoes each tag, then asks for approval when urgent."
	v = structured[edited](t, agent.call("mcpflow_publish", save))
	is.True(v.NextCall != nil && v.NextCall.Arguments["op"] == "deploy")
	is.Equal(v.NextCall.Arguments["bindings"], map[string]any{"demo.default": "demo.default"})
	drain(changed)
	res = agent.call(v.NextCall.Tool, v.NextCall.Arguments)
	is.True(!res.IsError)
	is.True(strings.Contains(textsOf(res)[0], "Deployed triage.default"))

	// The deployment appears as a tool: the list changes, and lists it.
	i := -1
	for i < 0 {
		select {
		case <-changed:
		case <-ctx.Done():
			is.Fail() // tools/list_changed, then the workflow listed, after the deploy
		}
		tools, err = session.ListTools(ctx, nil)
		is.NoErr(err)
		i = slices.IndexFunc(tools.Tools, func(tool *mcp.Tool) bool { return tool.Name == "triage" })
	}
	is.True(strings.HasPrefix(tools.Tools[i].Description, "Echoes each tag, then asks for approval when urgent.")) // in the author's words

	// Call it: not urgent, it echoes and ends; urgent, it asks, the user
	// approves (the client's elicitation), and it ends.
	res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "triage", Arguments: map[string]any{"tags": []any{"a", "b"}, "urgent": false}})
	is.NoErr(err)
	is.True(!res.IsError)
	out := structured[struct {
		Status string         `json:"status"`
		Output map[string]any `json:"output"`
	}](t, res)
	is.Equal(out.Status, "completed")
	is.Equal(out.Output, map[string]any{"echoes": []any{"a", "b"}})
	res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "triage", Arguments: map[string]any{"tags": []any{"c"}, "urgent": true}})
	is.NoErr(err)
	out = structured[struct {
		Status string         `json:"status"`
		Output map[string]any `json:"output"`
	}](t, res)
	is.Equal(out.Status, "completed")
	is.Equal(out.Output, map[string]any{"echoes": []any{"c"}, "approved": true})

	// A token of author alone edits at the revision it gives: reading
	// the current one is a read method, and the answer says so.
	authorOnly, err := mcp.NewClient(&mcp.Implementation{Name: "author-only", Version: "0"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: watchedClient(authorToken.Token, nil), MaxRetries: -1}, nil)
	is.NoErr(err)
	t.Cleanup(func() { _ = authorOnly.Close() })
	author := mcpAuthor{t: t, ctx: ctx, session: authorOnly}
	res = author.call("mcpflow_draft", map[string]any{"op": "create", "workspace_id": "other", "name": "other"})
	is.True(!res.IsError)
	add := map[string]any{"op": "add", "workspace_id": "other", "step_id": "done", "kind": "end", "spec": map[string]any{"outcome": "ok"}}
	res = author.call("mcpflow_draft_step", add)
	is.True(res.IsError)
	is.True(strings.Contains(textsOf(res)[0], "give revision")) // what to do, not a bare refusal
	add["revision"] = 1
	v = structured[edited](t, author.call("mcpflow_draft_step", add))
	is.Equal(v.Revision, 2)
	t.Logf("took %v", time.Since(start))
}

// drain empties ch of what it holds now.
func drain(ch chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}
