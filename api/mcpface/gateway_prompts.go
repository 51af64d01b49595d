package mcpface

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// Gateway mode, prompts: the prompts of the connections whose expose
// entry says "prompts": true are offered beside the tools, named as
// exposed tools are ("<prefix>_<prompt>", gatewayNames), each rendered
// through the connection's shared session (workflow.sources.get_prompt).
// Their arguments complete through it too (gateway_completion.go).

// gatewayPrompt is one upstream prompt offered by the face.
type gatewayPrompt struct {
	key    gatewayKey // its connection and upstream name
	prompt *mcp.Prompt
}

// gatewayPromptMethods are what listing and rendering an exposed
// connection's prompts take (the read scope).
var gatewayPromptMethods = []string{protocol.MethodSourcesPrompts, protocol.MethodSourcesGetPrompt}

// loadGatewayPrompts lists the prompts of each connection exposed with
// prompts. A connection whose prompts cannot be read is logged and named
// in failed.
func (f *Face) loadGatewayPrompts(ctx context.Context, exposed []config.MCPExpose) ([]gatewayPrompt, map[string]bool) {
	failed := map[string]bool{}
	var (
		keys     []gatewayKey
		listed   = map[gatewayKey]protocol.SourcePrompt{}
		prefixes = map[string]string{}
	)
	for _, e := range exposed {
		if !e.Prompts {
			continue
		}
		prefixes[e.Connection] = e.DefaultPrefix()
		var found protocol.SourcePromptsResult
		err := f.watch.Call(ctx, protocol.MethodSourcesPrompts, protocol.SourcePromptsParams{SourceID: e.Connection}, &found)
		if notFound(err) {
			continue // no longer a source, or no longer exposed: it offers nothing
		}
		if err != nil {
			f.log.Warn("mcp face: an exposed connection's prompts are not read again", "connection", e.Connection, "err", err)
			failed[e.Connection] = true
			continue
		}
		for _, p := range found.Prompts {
			k := gatewayKey{e.Connection, p.Name}
			keys, listed[k] = append(keys, k), p
		}
	}
	names := gatewayNames(keys, func(c string) string { return prefixes[c] }, func(string) bool { return false })
	out := make([]gatewayPrompt, 0, len(keys))
	for _, k := range keys {
		p := listed[k]
		prompt := &mcp.Prompt{Name: names[k], Title: cmpOr(deref(p.Title), p.Name), Description: deref(p.Description)}
		for _, a := range p.Arguments {
			prompt.Arguments = append(prompt.Arguments, &mcp.PromptArgument{Name: a.Name, Title: deref(a.Title), Description: deref(a.Description), Required: a.Required})
		}
		out = append(out, gatewayPrompt{key: k, prompt: prompt})
	}
	return out, failed
}

// refreshGatewayPrompts reads the exposed prompts again; a connection
// whose prompts cannot be read keeps those it was offered with.
func (f *Face) refreshGatewayPrompts(ctx context.Context, exposed []config.MCPExpose) []gatewayPrompt {
	if !exposesPrompts(exposed) {
		return nil
	}
	found, failed := f.loadGatewayPrompts(ctx, exposed)
	if len(failed) == 0 {
		return found
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return keepOffered(found, f.prompts, failed, func(p gatewayPrompt) string { return p.key.connection })
}

// offerPrompts brings s's prompts in line with f.prompts (those of the
// connections s's principal sees, when it may list and render them);
// go-sdk tells the session's client of each change
// (notifications/prompts/list_changed). Under f.mu.
func (f *Face) offerPrompts(s *served) {
	want := map[string]gatewayPrompt{}
	if s.refusal(gatewayPromptMethods) == nil {
		for _, p := range f.prompts {
			if s.who.SeesConnection(p.key.connection) {
				want[p.prompt.Name] = p
			}
		}
	}
	syncOffers(s.prompts, want,
		func(p gatewayPrompt) any { return []any{p.key.connection, p.key.tool, p.prompt} },
		func(gone []string) { s.srv.RemovePrompts(gone...) },
		func(p gatewayPrompt) { s.srv.AddPrompt(p.prompt, f.promptHandler(s, p.key)) })
}

// promptHandler renders the upstream prompt k through the workflow API
// as s's principal: the upstream's messages, unchanged.
func (f *Face) promptHandler(s *served, k gatewayKey) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		var got protocol.GetSourcePromptResult
		err := s.api.Call(ctx, protocol.MethodSourcesGetPrompt, protocol.GetSourcePromptParams{SourceID: k.connection, Name: k.tool, Arguments: req.Params.Arguments}, &got)
		if err != nil {
			return nil, sdkError(err)
		}
		raw, err := json.Marshal(got)
		if err != nil {
			return nil, fmt.Errorf("encode the prompt %s: %w", req.Params.Name, err)
		}
		var out mcp.GetPromptResult
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, fmt.Errorf("the prompt %s: %w", req.Params.Name, err)
		}
		return &out, nil
	}
}

// syncOffers brings what a server offers in line with want (by key):
// the keys offered and no longer wanted are removed, and those new or
// whose definition (def, as JSON) changed are added. offered maps each
// key offered to its definition.
func syncOffers[T any](offered map[string]string, want map[string]T, def func(T) any, remove func([]string), add func(T)) {
	var gone []string
	for k := range offered {
		if _, ok := want[k]; !ok {
			gone = append(gone, k)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		remove(gone)
		for _, k := range gone {
			delete(offered, k)
		}
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	}) {
		d, err := json.Marshal(def(want[k]))
		if err != nil || offered[k] == string(d) {
			continue
		}
		add(want[k])
		offered[k] = string(d)
	}
}
