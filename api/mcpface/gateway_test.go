package mcpface

import (
	"context"
	"encoding/json"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// Exposed tools are named "<prefix>_<tool>", within hosts' limits, the
// same whatever order the upstreams list them in; a name too long, taken
// or reserved ends in a hash of the connection and the tool.
func TestExposedToolNamesAreShortSafeAndStable(t *testing.T) {
	is := is.New(t)
	prefixes := map[string]string{"seqthink.default": "think", "everything.default": "ev", "other.default": "ev_get"}
	prefix := func(c string) string { return prefixes[c] }
	long := strings.Repeat("x", 60)
	keys := []gatewayKey{
		{"seqthink.default", "sequentialthinking"},
		{"everything.default", "get-tiny-image"},
		{"everything.default", "greet (structured)"},
		{"everything.default", long},
		{"everything.default", "get_run"},
		{"everything.default", "tiny"},
		{"other.default", "tiny"}, // "ev_get" + "_" + "tiny": get_tiny's name too
		{"everything.default", "get_tiny"},
	}
	reserved := func(n string) bool { return n == "ev_get_run" }
	names := gatewayNames(keys, prefix, reserved)
	is.Equal(names[gatewayKey{"seqthink.default", "sequentialthinking"}], "think_sequentialthinking")
	is.Equal(names[gatewayKey{"everything.default", "get-tiny-image"}], "ev_get-tiny-image")
	is.Equal(names[gatewayKey{"everything.default", "greet (structured)"}], "ev_greet__structured_") // only [A-Za-z0-9_-]
	is.True(names[gatewayKey{"everything.default", "get_run"}] != "ev_get_run")                      // reserved: hashed
	// "everything.default" sorts first, so its get_tiny keeps the name
	// other.default's tiny also comes to.
	is.Equal(names[gatewayKey{"everything.default", "get_tiny"}], "ev_get_tiny")
	is.True(strings.HasPrefix(names[gatewayKey{"other.default", "tiny"}], "ev_get_tiny_"))
	seen := map[string]bool{}
	for _, n := range names {
		is.True(validName.MatchString(n)) // fits every host
		is.True(!seen[n])                 // one name, one tool
		seen[n] = true
	}
	is.Equal(len(names[gatewayKey{"everything.default", long}]), MaxToolName)

	reversed := slices.Clone(keys)
	slices.Reverse(reversed)
	is.Equal(gatewayNames(reversed, prefix, reserved), names) // the order listed changes nothing
}

// The filter of an exposed connection is its config's: allowed and not
// denied; the default prefix is the connection id without ".default".
func TestExposedToolsAreFilteredByTheirEntry(t *testing.T) {
	is := is.New(t)
	e := config.MCPExpose{Connection: "everything.default", Tools: &config.MCPToolFilter{Allow: []string{"get-*", "echo"}, Deny: []string{"get-env"}}}
	var offered []string
	for _, tool := range []string{"echo", "get-env", "get-tiny-image", "trigger-long-running-operation"} {
		if e.Offers(tool) {
			offered = append(offered, tool)
		}
	}
	is.Equal(offered, []string{"echo", "get-tiny-image"})
	is.Equal(e.DefaultPrefix(), "everything")
}

// A pass-through's result is the upstream's: content blocks of their own
// types, or its structured content with the same JSON as text; a failed
// run is an error saying why.
func TestAPassthroughAnswersTheUpstreamsResult(t *testing.T) {
	is := is.New(t)
	id := "run_1"
	image := passthroughResult(protocol.RunResult{RunID: &id, Status: "completed", Output: protocol.Object{
		"content": []any{map[string]any{"type": "image", "data": "aGk=", "mimeType": "image/png"}}}})
	is.Equal(len(image.Content), 1)
	_, ok := image.Content[0].(*mcp.ImageContent)
	is.True(ok) // an image stays an image

	structured := passthroughResult(protocol.RunResult{RunID: &id, Status: "completed", Output: protocol.Object{"thoughtHistoryLength": 2.0}})
	is.Equal(string(structured.StructuredContent.(json.RawMessage)), `{"thoughtHistoryLength":2}`)
	is.Equal(structured.Content[0].(*mcp.TextContent).Text, `{"thoughtHistoryLength":2}`)
	is.True(!structured.IsError)

	why := "sequentialthinking failed: bad thought"
	failed := passthroughResult(protocol.RunResult{RunID: &id, Status: "failed", Error: &why})
	is.True(failed.IsError)
	is.Equal(failed.Content[0].(*mcp.TextContent).Text, why)
}

// A token's mcp_connections chooses the exposed connections whose tools
// it is offered; a token without the list sees them all.
func TestATokenSeesTheExposedConnectionsItsListNames(t *testing.T) {
	is := is.New(t)
	f := New(Options{})
	f.gateway = []gatewayTool{
		{key: gatewayKey{"everything.default", "echo"}, tool: &mcp.Tool{Name: "ev_echo"}},
		{key: gatewayKey{"seqthink.default", "sequentialthinking"}, tool: &mcp.Tool{Name: "think_sequentialthinking"}},
	}
	guard := access.NewGuard([]config.Token{
		{Name: "narrow", Token: "narrow-" + strings.Repeat("n", 24), Scopes: []string{"run"}, MCPConnections: []string{"seq*"}},
		{Name: "wide", Token: "wide-" + strings.Repeat("w", 24), Scopes: []string{"run"}},
	})
	offered := func(token string) []string {
		who, ok := guard.Authenticate(token)
		is.True(ok)
		var names []string
		for _, e := range f.gatewayEntries(&served{who: who}) {
			names = append(names, e.tool.Name)
		}
		return names
	}
	is.Equal(offered("narrow-"+strings.Repeat("n", 24)), []string{"think_sequentialthinking"})
	is.Equal(offered("wide-"+strings.Repeat("w", 24)), []string{"ev_echo", "think_sequentialthinking"})
}

// upstreams is a Backend that answers capabilities.list and .inspect from
// each connection's tools; a connection in gone is no source (KeyError),
// one in broken fails otherwise.
type upstreams struct {
	tools        map[string][]string
	gone, broken map[string]bool
	// resources are each connection's resource URIs; a read answers the
	// URI and its connection as text.
	resources map[string][]string
	// templates are each connection's resource templates.
	templates map[string][]string
	// prompts are each connection's prompts (with one argument, "who");
	// rendering one answers its connection, name and argument as text.
	prompts map[string][]string
}

func (u upstreams) Call(_ context.Context, method string, params, result any) error {
	var out any
	switch method {
	case protocol.MethodCapabilitiesList:
		conn := *params.(protocol.ListCapabilitiesParams).SourceID
		switch {
		case u.gone[conn]:
			return jsonrpc.Failed("KeyError", "unknown source "+conn)
		case u.broken[conn]:
			return jsonrpc.Errorf(jsonrpc.InternalError, "broken")
		}
		var page protocol.ListCapabilitiesResult
		for _, tool := range u.tools[conn] {
			page.Capabilities = append(page.Capabilities, protocol.CapabilitySummary{Name: conn + "." + tool, SourceID: conn})
		}
		out = page
	case protocol.MethodCapabilitiesInspect:
		name := params.(protocol.InspectCapabilityParams).QualifiedName
		out = protocol.CapabilityDetail{Name: name, InputSchema: protocol.Object{"type": "object"}}
	case protocol.MethodSourcesResources:
		conn := params.(protocol.SourceResourcesParams).SourceID
		listed := protocol.SourceResourcesResult{Resources: []protocol.SourceResource{}, ResourceTemplates: []protocol.SourceResourceTemplate{}}
		for _, uri := range u.resources[conn] {
			listed.Resources = append(listed.Resources, protocol.SourceResource{URI: uri, Name: path.Base(uri)})
		}
		for _, tmpl := range u.templates[conn] {
			listed.ResourceTemplates = append(listed.ResourceTemplates, protocol.SourceResourceTemplate{URITemplate: tmpl, Name: "tmpl"})
		}
		out = listed
	case protocol.MethodSourcesPrompts:
		conn := params.(protocol.SourcePromptsParams).SourceID
		listed := protocol.SourcePromptsResult{Prompts: []protocol.SourcePrompt{}}
		for _, name := range u.prompts[conn] {
			listed.Prompts = append(listed.Prompts, protocol.SourcePrompt{Name: name, Arguments: []protocol.SourcePromptArgument{{Name: "who", Required: true}}})
		}
		out = listed
	case protocol.MethodSourcesGetPrompt:
		p := params.(protocol.GetSourcePromptParams)
		out = protocol.GetSourcePromptResult{Messages: []protocol.Object{{"role": "user", "content": map[string]any{"type": "text", "text": p.SourceID + " " + p.Name + " " + p.Arguments["who"]}}}}
	case protocol.MethodSourcesComplete:
		p := params.(protocol.CompleteSourceParams)
		total := 3
		out = protocol.CompleteSourceResult{Values: []string{p.SourceID, deref(p.Ref.Name) + deref(p.Ref.URI), p.Argument.Name + "=" + p.Argument.Value + " " + p.Arguments["city"]},
			Total: &total, HasMore: true}
	case protocol.MethodSourcesReadResource:
		p := params.(protocol.ReadSourceResourceParams)
		out = protocol.ReadSourceResourceResult{Contents: []protocol.Object{{"uri": p.URI, "mimeType": "text/plain", "text": p.SourceID + " " + p.URI}}}
	default:
		return jsonrpc.Errorf(jsonrpc.MethodNotFound, "%s", method)
	}
	raw, _ := json.Marshal(out)
	return json.Unmarshal(raw, result)
}

func (u upstreams) Subscribe(context.Context, string, any, any, func(string, json.RawMessage)) error {
	return nil
}

// An exposed connection whose tools cannot be read keeps the tools it was
// offered with; one that is no longer a source offers none.
func TestExposedToolsOfAConnectionThatFailsStayAndOfOneThatIsGoneGo(t *testing.T) {
	is := is.New(t)
	u := upstreams{tools: map[string][]string{"a.default": {"one"}, "b.default": {"two"}}, gone: map[string]bool{}, broken: map[string]bool{}}
	f := New(Options{Watch: u, Config: &config.MCP{Expose: []config.MCPExpose{{Connection: "a.default"}, {Connection: "b.default"}}}})
	names := func() []string {
		f.gateway = f.refreshGateway(t.Context(), f.exposuresNow(t.Context()))
		var out []string
		for _, g := range f.gateway {
			out = append(out, g.tool.Name)
		}
		return out
	}
	is.Equal(names(), []string{"a_one", "b_two"})
	u.broken["a.default"], u.gone["b.default"] = true, true
	is.Equal(names(), []string{"a_one"}) // a kept, b gone
}

// The resources of the connections exposed with resources are listed
// under their own URIs, named "<prefix>_<name>", and read through the
// connection that listed them; a URI listed by two connections is the
// first's (sorted by id); a token sees the resources of the connections
// its mcp_connections names, and none without the read scope.
func TestExposedResourcesAreListedAndReadThroughTheirConnection(t *testing.T) {
	is := is.New(t)
	u := upstreams{resources: map[string][]string{
		"a.default": {"demo://a/one", "demo://shared"},
		"b.default": {"demo://b/two", "demo://shared"},
		"c.default": {"demo://c/hidden"}, // exposed without resources
	}, templates: map[string][]string{
		"b.default": {"demo://b/item/{id}", "demo://b/{broken"}, // an invalid template is not offered
	}}
	f := New(Options{Watch: u, Config: &config.MCP{Expose: []config.MCPExpose{
		{Connection: "b.default", Prefix: "bee", Resources: true}, {Connection: "a.default", Resources: true}, {Connection: "c.default"},
	}}})
	guard := access.NewGuard([]config.Token{
		{Name: "wide", Token: "wide-" + strings.Repeat("w", 24), Scopes: []string{"read"}},
		{Name: "narrow", Token: "narrow-" + strings.Repeat("n", 24), Scopes: []string{"read"}, MCPConnections: []string{"b.*"}},
	})
	connect := func(token string, gate Gate) *mcp.ClientSession {
		who, ok := guard.Authenticate(token)
		is.True(ok)
		srv := f.NewServer(t.Context(), who, u, gate)
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(t.Context(), st, nil)
		is.NoErr(err)
		t.Cleanup(func() { _ = ss.Close() })
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(), ct, nil)
		is.NoErr(err)
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	listed := func(cs *mcp.ClientSession) []string {
		var out []string
		for r, err := range cs.Resources(t.Context(), nil) {
			is.NoErr(err)
			out = append(out, r.Name+" "+r.URI)
		}
		return out
	}
	reader := Callable{Token: "wide", Methods: append(gatewayResourceMethods, gatewayCompleteMethods...)}
	wide := connect("wide-"+strings.Repeat("w", 24), reader)
	is.True(wide.InitializeResult().Capabilities.Resources.ListChanged)                                      // passed on as the upstreams' change
	is.Equal(listed(wide), []string{"a_one demo://a/one", "bee_two demo://b/two", "a_shared demo://shared"}) // in URI order
	read, err := wide.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "demo://shared"})
	is.NoErr(err)
	is.Equal(read.Contents[0].Text, "a.default demo://shared") // read through the connection that listed it
	read, err = wide.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "demo://b/two"})
	is.NoErr(err)
	is.Equal(read.Contents[0].Text, "b.default demo://b/two")
	var templates []string
	for r, err := range wide.ResourceTemplates(t.Context(), nil) {
		is.NoErr(err)
		templates = append(templates, r.Name+" "+r.URITemplate)
	}
	is.Equal(templates, []string{"bee_tmpl demo://b/item/{id}"})
	read, err = wide.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "demo://b/item/7"})
	is.NoErr(err)
	is.Equal(read.Contents[0].Text, "b.default demo://b/item/7") // a URI of a template: read through its connection
	_, err = wide.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "demo://c/hidden"})
	is.True(err != nil) // c exposes its tools only
	completed, err := wide.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "demo://b/item/{id}"},
		Argument: mcp.CompleteParamsArgument{Name: "id", Value: "7"}})
	is.NoErr(err)
	is.Equal(completed.Completion.Values, []string{"b.default", "demo://b/item/{id}", "id=7 "}) // completed by the template's connection
	_, err = wide.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "demo://b/two"},
		Argument: mcp.CompleteParamsArgument{Name: "id", Value: "7"}})
	is.True(err != nil) // not a template: nothing to complete

	narrow := connect("narrow-"+strings.Repeat("n", 24), reader)
	is.Equal(listed(narrow), []string{"bee_two demo://b/two"}) // demo://shared is a's, which it does not see

	none := connect("wide-"+strings.Repeat("w", 24), Callable{Token: "wide"})
	is.Equal(len(listed(none)), 0) // may not read: offered none
}

// The prompts of the connections exposed with prompts are listed named as
// exposed tools are, with their arguments, and rendered through the
// connection that listed them; a token sees those of the connections its
// mcp_connections names; their arguments complete through that
// connection, with no values where the principal may not complete.
func TestExposedPromptsAreListedAndRenderedThroughTheirConnection(t *testing.T) {
	is := is.New(t)
	u := upstreams{prompts: map[string][]string{"a.default": {"greet", "simple prompt"}, "b.default": {"greet"}}}
	f := New(Options{Watch: u, Config: &config.MCP{Expose: []config.MCPExpose{
		{Connection: "a.default", Prompts: true}, {Connection: "b.default", Prefix: "bee", Prompts: true},
	}}})
	guard := access.NewGuard([]config.Token{
		{Name: "wide", Token: "wide-" + strings.Repeat("w", 24), Scopes: []string{"read"}},
		{Name: "narrow", Token: "narrow-" + strings.Repeat("n", 24), Scopes: []string{"read"}, MCPConnections: []string{"b.*"}},
	})
	connect := func(token string, methods ...string) *mcp.ClientSession {
		who, ok := guard.Authenticate(token)
		is.True(ok)
		st, ct := mcp.NewInMemoryTransports()
		ss, err := f.NewServer(t.Context(), who, u, Callable{Methods: append(methods, gatewayPromptMethods...)}).Connect(t.Context(), st, nil)
		is.NoErr(err)
		t.Cleanup(func() { _ = ss.Close() })
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(), ct, nil)
		is.NoErr(err)
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	listed := func(cs *mcp.ClientSession) []string {
		var out []string
		for p, err := range cs.Prompts(t.Context(), nil) {
			is.NoErr(err)
			is.Equal(len(p.Arguments), 1) // the upstream's arguments
			out = append(out, p.Name)
		}
		return out
	}
	wide := connect("wide-"+strings.Repeat("w", 24), gatewayCompleteMethods...)
	is.True(wide.InitializeResult().Capabilities.Prompts.ListChanged)
	is.Equal(listed(wide), []string{"a_greet", "a_simple_prompt", "bee_greet"})
	got, err := wide.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "bee_greet", Arguments: map[string]string{"who": "Ada"}})
	is.NoErr(err)
	is.Equal(got.Messages[0].Content.(*mcp.TextContent).Text, "b.default greet Ada") // rendered by its own connection
	got, err = wide.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "a_simple_prompt", Arguments: map[string]string{"who": "Grace"}})
	is.NoErr(err)
	is.Equal(got.Messages[0].Content.(*mcp.TextContent).Text, "a.default simple prompt Grace") // the upstream's own name

	complete := func(cs *mcp.ClientSession, prompt string) (*mcp.CompleteResult, error) {
		return cs.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: prompt},
			Argument: mcp.CompleteParamsArgument{Name: "who", Value: "A"}, Context: &mcp.CompleteContext{Arguments: map[string]string{"city": "Lisbon"}}})
	}
	completed, err := complete(wide, "bee_greet")
	is.NoErr(err) // forwarded to its own connection, under the upstream's name, with the context
	is.Equal(completed.Completion, mcp.CompletionResultDetails{Values: []string{"b.default", "greet", "who=A Lisbon"}, Total: 3, HasMore: true})
	_, err = complete(wide, "no_such_prompt")
	is.True(err != nil) // -32602: not a prompt offered

	narrow := connect("narrow-" + strings.Repeat("n", 24))
	is.Equal(listed(narrow), []string{"bee_greet"})
	completed, err = complete(narrow, "bee_greet")
	is.NoErr(err)
	is.Equal(len(completed.Completion.Values), 0) // may not call workflow.sources.complete: no values
	_, err = complete(narrow, "a_greet")
	is.True(err != nil) // a's prompts are not offered to narrow
}
