package mcpface

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/api/protocol"
)

// Gateway mode, completion: completion/complete of an argument of an
// exposed prompt or resource template goes to the upstream that offers
// it, through the connection's shared session
// (workflow.sources.complete): a prompt under its upstream name, a
// resource template under its URI template (the upstream's own). An
// upstream that does not complete answers no values, and so does the
// face where the principal may not call workflow.sources.complete. A
// prompt or resource template the face does not offer the principal is
// invalid params (-32602), as MCP asks.

// gatewayCompleteMethods are what forwarding a completion takes (the read
// scope).
var gatewayCompleteMethods = []string{protocol.MethodSourcesComplete}

// complete answers s's completion/complete.
func (f *Face) complete(ctx context.Context, s *served, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	if p == nil || p.Ref == nil {
		return nil, invalidParams(errors.New("completion/complete names a prompt or a resource template (ref)"))
	}
	connection, ref, ok := f.completionTarget(s, p.Ref)
	if !ok {
		return nil, invalidParams(fmt.Errorf("no prompt or resource template %q is offered", p.Ref.Name+p.Ref.URI))
	}
	out := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	if s.refusal(gatewayCompleteMethods) != nil {
		return out, nil
	}
	params := protocol.CompleteSourceParams{SourceID: connection, Ref: ref, Argument: protocol.CompletionArgument{Name: p.Argument.Name, Value: p.Argument.Value}}
	if p.Context != nil {
		params.Arguments = p.Context.Arguments
	}
	var got protocol.CompleteSourceResult
	if err := s.api.Call(ctx, protocol.MethodSourcesComplete, params, &got); err != nil {
		return nil, sdkError(err)
	}
	if got.Values != nil {
		out.Completion.Values = got.Values
	}
	out.Completion.HasMore, out.Completion.Total = got.HasMore, deref(got.Total)
	return out, nil
}

// completionTarget is the connection, and the reference as its upstream
// names it, of the prompt or resource template ref names among those s
// offers; ok is false for any other. It takes f.mu.
func (f *Face) completionTarget(s *served, ref *mcp.CompleteReference) (connection string, upstream protocol.CompletionRef, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch ref.Type {
	case protocol.CompletionRefPrompt:
		if _, offered := s.prompts[ref.Name]; !offered {
			return "", upstream, false
		}
		for _, p := range f.prompts {
			if p.prompt.Name == ref.Name {
				name := p.key.tool
				return p.key.connection, protocol.CompletionRef{Type: ref.Type, Name: &name}, true
			}
		}
	case protocol.CompletionRefResource:
		for _, r := range f.resources {
			if _, offered := s.resources[r.key()]; offered && r.tmpl != nil && r.tmpl.URITemplate == ref.URI {
				uri := ref.URI
				return r.connection, protocol.CompletionRef{Type: ref.Type, URI: &uri}, true
			}
		}
	}
	return "", upstream, false
}
