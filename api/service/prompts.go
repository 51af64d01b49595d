package service

import (
	"context"

	"github.com/mcpflow/mcpflow/api/protocol"
)

// exposedPrompts refuses, as not found, a connection whose prompts the
// MCP face does not offer (server.mcp.expose[].prompts), so that the
// prompt methods reach exactly what the face lists.
func (s *Service) exposedPrompts(id string) error {
	if e, ok := s.exposed(id); !ok || !e.Prompts {
		return notFound("connection %q does not expose its prompts through the MCP face (server.mcp.expose[].prompts)", id)
	}
	return nil
}

// sourcePrompts lists the prompts of an exposed connection as its
// catalog holds them (none before its first listing).
func (s *Service) sourcePrompts(_ context.Context, p protocol.SourcePromptsParams) (protocol.SourcePromptsResult, error) {
	if err := s.exposedPrompts(p.SourceID); err != nil {
		return protocol.SourcePromptsResult{}, err
	}
	out := protocol.SourcePromptsResult{Prompts: []protocol.SourcePrompt{}}
	snap, ok := s.Catalogs.Get(p.SourceID)
	if !ok {
		return out, nil
	}
	for _, pr := range snap.Prompts {
		prompt := protocol.SourcePrompt{Name: pr.Name, Title: optional(pr.Title), Description: optional(pr.Description), Arguments: []protocol.SourcePromptArgument{}}
		for _, a := range pr.Arguments {
			prompt.Arguments = append(prompt.Arguments, protocol.SourcePromptArgument{Name: a.Name, Title: optional(a.Title), Description: optional(a.Description), Required: a.Required})
		}
		out.Prompts = append(out.Prompts, prompt)
	}
	return out, nil
}

// getSourcePrompt renders one prompt of an exposed connection through
// its shared session actor (the one its workflows use).
func (s *Service) getSourcePrompt(ctx context.Context, p protocol.GetSourcePromptParams) (protocol.GetSourcePromptResult, error) {
	if err := s.exposedPrompts(p.SourceID); err != nil {
		return protocol.GetSourcePromptResult{}, err
	}
	got, err := s.Runs.GetPrompt(ctx, p.SourceID, p.Name, p.Arguments)
	if err != nil {
		return protocol.GetSourcePromptResult{}, upstream("%v", err)
	}
	out := protocol.GetSourcePromptResult{Messages: []protocol.Object{}}
	if d, ok := got["description"].(string); ok && d != "" {
		out.Description = &d
	}
	messages, _ := got["messages"].([]any)
	for _, m := range messages {
		if o, ok := m.(map[string]any); ok {
			out.Messages = append(out.Messages, o)
		}
	}
	return out, nil
}
