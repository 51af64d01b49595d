package mcpface

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
	mfrpc "github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// Gateway mode: the upstream tools of the connections server.mcp.expose
// names are offered beside the deployments, each called through the
// connection's shared session as a one-step run of kind passthrough
// (workflow.runs.passthrough), and followed as a workflow tool's run is
// (progress, interrupts, cancellation).

// gatewaySep joins an exposed connection's prefix and a tool's name.
const gatewaySep = "_"

// gatewayTool is one upstream tool offered by the face.
type gatewayTool struct {
	key  gatewayKey
	tool *mcp.Tool
	// perClient says the connection is exposed per_client: each client
	// session's calls go to an upstream session of its own.
	perClient bool
}

// gatewayKey names an upstream tool: its connection and its own name.
type gatewayKey struct{ connection, tool string }

// gatewayMethods are what calling an exposed tool takes: the scopes of a
// workflow tool's call, with the pass-through in place of runs.start.
var gatewayMethods = []string{protocol.MethodRunsPassthrough, protocol.MethodRunsSubscribe, protocol.MethodRunsInspect,
	protocol.MethodRunsResume, protocol.MethodRunsCancel}

// gatewayNames names each exposed tool "<prefix>_<tool>", the tool's name
// made of [A-Za-z0-9_-] only. A name longer than MaxToolName, or taken
// by an earlier key (in sorted order) or reserved (the face's own tools),
// is cut and ends in "_" and 8 hex digits of a hash of the connection and
// the tool. The names depend only on the set of keys and the prefixes,
// so they are the same after every restart and whatever the order the
// upstreams list their tools in.
func gatewayNames(keys []gatewayKey, prefix func(connection string) string, reserved func(string) bool) map[gatewayKey]string {
	sorted := slices.SortedFunc(slices.Values(keys), func(a, b gatewayKey) int {
		return cmp.Or(strings.Compare(a.connection, b.connection), strings.Compare(a.tool, b.tool))
	})
	names := make(map[gatewayKey]string, len(sorted))
	taken := map[string]bool{}
	for _, k := range sorted {
		n := prefix(k.connection) + gatewaySep + config.ToolSafe(k.tool)
		if len(n) > MaxToolName || taken[n] || reserved(n) {
			n = hashed(n, k.connection+"\x00"+k.tool)
		}
		names[k], taken[n] = n, true
	}
	return names
}

// loadGateway lists the tools of each exposed connection (those its
// entry offers) with their contracts, as tools of the face named by
// gatewayNames. A connection whose catalog cannot be read is logged and
// named in failed; the others are listed.
func (f *Face) loadGateway(ctx context.Context, exposed []config.MCPExpose) ([]gatewayTool, map[string]bool) {
	var (
		failed  = map[string]bool{}
		keys    []gatewayKey
		details = map[gatewayKey]protocol.CapabilityDetail{}
	)
	for _, e := range exposed {
		found, err := f.exposedTools(ctx, e)
		if err != nil {
			f.log.Warn("mcp face: an exposed connection's tools are not read again", "connection", e.Connection, "err", err)
			failed[e.Connection] = true
			continue
		}
		for _, d := range found {
			k := gatewayKey{e.Connection, strings.TrimPrefix(d.Name, e.Connection+".")}
			keys, details[k] = append(keys, k), d
		}
	}
	prefixes, perClient := map[string]string{}, map[string]bool{}
	for _, e := range exposed {
		prefixes[e.Connection], perClient[e.Connection] = e.DefaultPrefix(), e.Scope == config.ExposePerClient
	}
	names := gatewayNames(keys, func(c string) string { return prefixes[c] }, isOwnTool)
	tools := make([]gatewayTool, 0, len(keys))
	for _, k := range keys {
		d := details[k]
		tools = append(tools, gatewayTool{key: k, tool: &mcp.Tool{
			Name:        names[k],
			Title:       k.tool,
			Description: cmpOr(deref(d.Description), fmt.Sprintf("The tool %s of %s, called through mcpflow's supervised session.", k.tool, k.connection)),
			InputSchema: inputSchema(d.InputSchema),
			Annotations: annotationsOf(d.Annotations),
		}, perClient: perClient[k.connection]})
	}
	slices.SortFunc(tools, func(a, b gatewayTool) int { return strings.Compare(a.tool.Name, b.tool.Name) })
	return tools, failed
}

// exposedTools reads the contracts of the tools of e's connection that e
// offers, page by page; none when the connection is no longer a source.
func (f *Face) exposedTools(ctx context.Context, e config.MCPExpose) ([]protocol.CapabilityDetail, error) {
	var (
		out    []protocol.CapabilityDetail
		cursor *string
		limit  = 100
	)
	for {
		var page protocol.ListCapabilitiesResult
		err := f.watch.Call(ctx, protocol.MethodCapabilitiesList, protocol.ListCapabilitiesParams{SourceID: &e.Connection, Cursor: cursor, Limit: &limit}, &page)
		if notFound(err) {
			return nil, nil // the source is gone (a registry apply removed it): it offers nothing
		}
		if err != nil {
			return nil, fmt.Errorf("list its tools: %w", err)
		}
		for _, c := range page.Capabilities {
			if !e.Offers(strings.TrimPrefix(c.Name, e.Connection+".")) {
				continue
			}
			var d protocol.CapabilityDetail
			if err := f.watch.Call(ctx, protocol.MethodCapabilitiesInspect, protocol.InspectCapabilityParams{QualifiedName: c.Name}, &d); err != nil {
				return nil, fmt.Errorf("tool %q: %w", c.Name, err)
			}
			out = append(out, d)
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			return out, nil
		}
		cursor = page.NextCursor
	}
}

// notFound reports whether err is the workflow API's KeyError: what
// capabilities.list answers for a source that does not exist.
func notFound(err error) bool {
	var e *mfrpc.Error
	if !errors.As(err, &e) || e.Code != mfrpc.OperationFailed {
		return false
	}
	switch d := e.Data.(type) {
	case mfrpc.ErrorData:
		return d.Code == "KeyError"
	case map[string]any: // decoded from the wire (mcpflow mcp)
		return d["code"] == "KeyError"
	}
	return false
}

// annotationsOf are a tool's annotations as the catalog has them (MCP's
// defaults filled in).
func annotationsOf(h *protocol.ToolHints) *mcp.ToolAnnotations {
	if h == nil {
		return nil
	}
	return &mcp.ToolAnnotations{ReadOnlyHint: h.ReadOnly, IdempotentHint: h.Idempotent, DestructiveHint: &h.Destructive, OpenWorldHint: &h.OpenWorld}
}

// gatewayEntries are the exposed tools s's principal sees (its token's
// mcp_connections). Under f.mu.
func (f *Face) gatewayEntries(s *served) []toolEntry {
	out := make([]toolEntry, 0, len(f.gateway))
	for _, g := range f.gateway {
		if s.who.SeesConnection(g.key.connection) {
			out = append(out, toolEntry{tool: g.tool, handler: f.gatewayHandler(s, g), methods: gatewayMethods})
		}
	}
	return out
}

// gatewayHandler answers a call of an exposed tool: it starts the
// pass-through run and follows it as a workflow tool's run, to its end
// (the upstream's result) or its interrupt (an upstream request asked of
// the client).
func (f *Face) gatewayHandler(s *served, g gatewayTool) mcp.ToolHandler {
	t := workflowTool{tool: g.tool, total: 1, answer: passthroughResult}
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.RequestState != "" {
			return f.answerInterrupt(ctx, s, req, t)
		}
		args := protocol.Object{}
		if raw := req.Params.Arguments; len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, &args); err != nil {
				return toolError("the arguments must be a JSON object: %v", err), nil
			}
		}
		no, sampling := false, samples(req)
		params := protocol.PassthroughParams{Connection: g.key.connection, Tool: g.key.tool, Arguments: args, Wait: &no}
		if sampling {
			params.ClientSampling = &sampling
		}
		if g.perClient {
			id := cmpOr(req.Session.ID(), f.lone) // "" for a stateless request: the token's own
			params.ClientSession = &id
			f.clients.watch(s, req.Session, id)
		}
		var started protocol.RunResult
		err := s.api.Call(ctx, protocol.MethodRunsPassthrough, params, &started)
		if refused, ok := invalidInput(err); ok {
			return toolError("%s", refused), nil // the model can correct its arguments
		}
		if err != nil {
			return nil, sdkError(err)
		}
		return f.followRun(ctx, s, req, t, deref(started.RunID), 0)
	}
}

// passthroughResult is the result of a pass-through run that ended: the
// upstream's result as the run's output holds it: its content blocks,
// of their own types, or its structured content (and the same JSON as
// text); a failed run is an error whose text is why. Other ends (a
// cancelled run) are the run's envelope.
func passthroughResult(r protocol.RunResult) *mcp.CallToolResult {
	switch r.Status {
	case store.RunCompleted:
		if blocks := outputBlocks(r.Output); blocks != nil {
			return &mcp.CallToolResult{Content: blocks}
		}
		raw, err := json.Marshal(r.Output)
		if err != nil { // an output of JSON values always encodes
			raw = []byte("{}")
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}, StructuredContent: json.RawMessage(raw)}
	case store.RunFailed:
		return toolError("%s", cmpOr(deref(r.Error), "the call failed"))
	}
	return result(envelopeOf(r), "")
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// refreshGateway reads the exposed tools again. An exposed connection
// whose tools cannot be read keeps the tools it was offered with.
func (f *Face) refreshGateway(ctx context.Context, exposed []config.MCPExpose) []gatewayTool {
	if len(exposed) == 0 {
		return nil
	}
	tools, failed := f.loadGateway(ctx, exposed)
	if len(failed) == 0 {
		return tools
	}
	f.mu.Lock()
	tools = keepOffered(tools, f.gateway, failed, func(g gatewayTool) string { return g.key.connection })
	f.mu.Unlock()
	slices.SortFunc(tools, func(a, b gatewayTool) int { return strings.Compare(a.tool.Name, b.tool.Name) })
	return tools
}

// keepOffered is found, read again, with the items of offered whose
// connection failed to be read: a connection that cannot be read keeps
// what it was offered with. Under f.mu.
func keepOffered[T any](found, offered []T, failed map[string]bool, connection func(T) string) []T {
	for _, o := range offered {
		if failed[connection(o)] {
			found = append(found, o)
		}
	}
	return found
}

// gatewayReserved are the names no deployment's tool may take: the
// face's own tools and the exposed tools.
func gatewayReserved(gateway []gatewayTool) func(string) bool {
	return func(name string) bool {
		return isOwnTool(name) || slices.ContainsFunc(gateway, func(g gatewayTool) bool { return g.tool.Name == name })
	}
}
