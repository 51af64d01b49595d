package protocol

import "encoding/json"

// InputBinding is one input binding param of a draft edit (the manifest's
// StepInputBinding: a target and one of path, value or expression), and
// OutputBinding one output binding (OutputBinding: source and target).
// Both are the workflow language's JSON, carried as given: api/service
// decodes them with the language's strict decoders, first thing in the
// handler, so a malformed one is refused with the language's own message.
type (
	InputBinding  = json.RawMessage
	OutputBinding = json.RawMessage
)
