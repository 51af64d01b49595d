package integration

import (
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// TestMCPStdioOffersWhatHTTPOffers: `mcpflow mcp`, launched by go-sdk's
// client as a stdio server, offers its token what /mcp offers it: the
// same tools (the deployments', npm server-everything's exposed "ev_…"
// ones and the authoring tools, server.mcp.authoring being on), the same
// exposed prompts and resource templates. An exposed tool called over
// stdio goes through the connection's one session as a passthrough run
// of the token, and a prompt's argument completes through it. A token
// whose mcp_connections leaves the connection out is offered none of it,
// over stdio as over /mcp.
func TestMCPStdioOffersWhatHTTPOffers(t *testing.T) {
	t.Parallel() // its own mcpflow and upstream: see parallelTests
	is := is.New(t)
	narrow := config.Token{Name: "narrow", Token: "narrow-" + strings.Repeat("n", 24), Scopes: []string{"read", "run"}, MCPConnections: []string{"nothing.*"}}
	f := startFace(t, faceOptions{everything: true, wsToken: adminToken.Token, mcpToken: adminToken.Token,
		access: &config.Access{Tokens: []config.Token{adminToken, narrow}},
		mcp: &config.MCP{Authoring: true, Expose: []config.MCPExpose{{Connection: faceEverything, Prefix: "ev", Prompts: true, Resources: true,
			Tools: &config.MCPToolFilter{Allow: []string{"echo", "get-sum"}}}}}})
	_, err := f.ws.RefreshConnectionCatalog(testContext(t), faceEverything)
	is.NoErr(err)
	ctx := testContext(t)
	overHTTP := func(token string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpflow-test-go", Version: "v1.8.0"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: f.mcp, HTTPClient: bearerClient(token), MaxRetries: -1}, nil)
		is.NoErr(err)
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	httpSession := overHTTP(adminToken.Token)

	offered := func(cs *mcp.ClientSession) (tools, prompts, templates []string) {
		for tool, err := range cs.Tools(ctx, nil) {
			is.NoErr(err)
			tools = append(tools, tool.Name)
		}
		for p, err := range cs.Prompts(ctx, nil) {
			is.NoErr(err)
			prompts = append(prompts, p.Name)
		}
		for r, err := range cs.ResourceTemplates(ctx, nil) {
			is.NoErr(err)
			templates = append(templates, r.URITemplate)
		}
		slices.Sort(tools)
		slices.Sort(prompts)
		slices.Sort(templates)
		return tools, prompts, templates
	}
	var toolsOverHTTP []string
	poll.For(t, "/mcp lists the exposed tools", settleWait, func() bool {
		toolsOverHTTP, _, _ = offered(httpSession)
		return slices.Contains(toolsOverHTTP, "ev_echo") && slices.Contains(toolsOverHTTP, "ev_get-sum")
	})
	_, promptsOverHTTP, templatesOverHTTP := offered(httpSession)

	st := startStdio(t, f.pr.url, nil, "MCPFLOW_TOKEN="+adminToken.Token)
	tools, prompts, templates := offered(st.session)
	t.Logf("stdio offers %d tools, prompts %v, templates %v", len(tools), prompts, templates)
	is.Equal(tools, toolsOverHTTP) // the deployments', the exposed and the authoring tools, as /mcp
	is.True(slices.Contains(tools, "mcpflow_draft"))
	is.Equal(prompts, promptsOverHTTP)
	is.True(slices.Contains(prompts, "ev_completable-prompt"))
	is.Equal(templates, templatesOverHTTP)

	echoed, err := st.session.CallTool(ctx, &mcp.CallToolParams{Name: "ev_echo", Arguments: map[string]any{"message": "over stdio"}})
	is.NoErr(err)
	is.True(!echoed.IsError)
	is.Equal(echoed.Content[0].(*mcp.TextContent).Text, "Echo: over stdio") // the upstream's answer, unchanged
	runs := f.runs(t)
	is.Equal(runs[0].Kind, "passthrough") // recorded as the token's pass-through run
	is.Equal(runs[0].StartedBy, adminToken.Name)
	completed, err := st.session.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "ev_completable-prompt"},
		Argument: mcp.CompleteParamsArgument{Name: "department", Value: "S"}})
	is.NoErr(err)
	is.Equal(completed.Completion.Values, []string{"Sales", "Support"})
	is.Equal(f.sessionsOpened(t, faceEverything), 1) // the one session of the connection

	other := startStdio(t, f.pr.url, nil, "MCPFLOW_TOKEN="+narrow.Token)
	tools, prompts, templates = offered(other.session)
	is.True(!slices.ContainsFunc(tools, func(n string) bool { return strings.HasPrefix(n, "ev_") })) // its mcp_connections leave it out
	is.Equal(len(prompts)+len(templates), 0)
	toolsOverHTTP, _, _ = offered(overHTTP(narrow.Token))
	is.Equal(tools, toolsOverHTTP) // what /mcp offers that token
	is.NoErr(st.close())
	is.NoErr(other.close())
}
