package service

import (
	"encoding/json"

	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// languageBindings decodes binding params (protocol.InputBinding or
// OutputBinding, the language's JSON carried as given) with the workflow
// language's strict decoders; nil stays nil and empty empty. A malformed
// one is invalid params with the decoder's message, as when the params
// held the language's types.
func languageBindings[T workflow.InputBinding | workflow.OutputBinding](in []json.RawMessage, at string) ([]T, error) {
	if in == nil {
		return nil, nil
	}
	out := make([]T, len(in))
	for i, raw := range in {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			return nil, invalidParams("invalid params: %s%v", at, err)
		}
	}
	return out, nil
}

// languageInput decodes input binding params.
func languageInput(in []protocol.InputBinding) ([]workflow.InputBinding, error) {
	return languageBindings[workflow.InputBinding](in, "")
}

// languageOutput decodes output binding params.
func languageOutput(in []protocol.OutputBinding) ([]workflow.OutputBinding, error) {
	return languageBindings[workflow.OutputBinding](in, "")
}
