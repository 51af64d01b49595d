package service

import (
	"context"
	"encoding/json"

	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// completeSource completes one argument of a prompt or a resource
// template of an exposed connection through its shared session actor:
// a prompt's where the connection exposes its prompts, a resource
// template's where it exposes its resources (else not found, as the
// other methods of the face's gateway mode). An upstream that does not
// complete answers no values.
func (s *Service) completeSource(ctx context.Context, p protocol.CompleteSourceParams) (protocol.CompleteSourceResult, error) {
	req := session.Complete{Connection: p.SourceID, RefType: p.Ref.Type, Argument: p.Argument.Name, Value: p.Argument.Value, Context: p.Arguments}
	switch p.Ref.Type {
	case protocol.CompletionRefPrompt:
		if p.Ref.Name == nil || p.Ref.URI != nil {
			return protocol.CompleteSourceResult{}, invalidParams("a ref/prompt names a prompt (ref.name) and no uri")
		}
		if err := s.exposedPrompts(p.SourceID); err != nil {
			return protocol.CompleteSourceResult{}, err
		}
		req.RefName = *p.Ref.Name
	default: // ref/resource: the contract admits no other
		if p.Ref.URI == nil || p.Ref.Name != nil {
			return protocol.CompleteSourceResult{}, invalidParams("a ref/resource names a resource template (ref.uri) and no name")
		}
		if _, err := s.exposedResources(p.SourceID); err != nil {
			return protocol.CompleteSourceResult{}, err
		}
		req.RefURI = *p.Ref.URI
	}
	got, err := s.Runs.Complete(ctx, req)
	if err != nil {
		return protocol.CompleteSourceResult{}, upstream("%v", err)
	}
	var answer struct {
		Completion struct {
			Values  []string `json:"values"`
			Total   int      `json:"total"`
			HasMore bool     `json:"hasMore"`
		} `json:"completion"`
	}
	raw, err := json.Marshal(got)
	if err == nil {
		err = json.Unmarshal(raw, &answer)
	}
	if err != nil {
		return protocol.CompleteSourceResult{}, upstream("the completion of %s: %v", p.Argument.Name, err)
	}
	c := answer.Completion
	out := protocol.CompleteSourceResult{Values: c.Values, HasMore: c.HasMore}
	if out.Values == nil {
		out.Values = []string{}
	}
	if c.Total > 0 {
		out.Total = &c.Total
	}
	return out, nil
}
