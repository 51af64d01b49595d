package workflow

import (
	"sort"
	"strings"

	"github.com/mcpflow/mcpflow/actors/catalog"
)

// Step ids of a scaffolded workflow.
const (
	CallStep  = "call"
	ErrorStep = "tool_error"
)

// ContextPriorError is the path of why the frame's previous step failed,
// when it routed a failure outcome (Frame.PriorError).
const ContextPriorError = RootContext + ".prior_error"

// ScaffoldOptions override the defaults of Scaffold; zero values keep them.
type ScaffoldOptions struct {
	Name         string
	InputSchema  Object
	StateSchema  Object
	OutputSchema Object
	Input        []InputBinding
	Output       []OutputBinding
	InputMap     map[string]string // graph path -> local target
	OutputMap    map[string]string // local source -> state path
	// ErrorMessageSource is a graph path whose value becomes the error
	// message of the tool_error step; empty uses a literal message.
	ErrorMessageSource string
}

// Hints describe how confidently a capability could be wrapped, and what
// the author still has to decide. The JSON form is the manifest's
// WrapperAuthoringHintsPayload.
type Hints struct {
	CapabilityName           string             `json:"capability_name"`
	Confidence               string             `json:"confidence"`
	DeclaredOutcomes         []string           `json:"declared_outcomes"`
	SuggestedWrapperOutcomes []string           `json:"suggested_wrapper_outcomes"`
	OutcomePolicy            string             `json:"outcome_policy"`
	InputSchema              Object             `json:"input_schema"`
	StateSchema              Object             `json:"state_schema"`
	OutputSchema             Object             `json:"output_schema"`
	InputMap                 map[string]string  `json:"input_map"`
	OutputMap                map[string]string  `json:"output_map"`
	OutcomeCandidates        []OutcomeCandidate `json:"outcome_candidates"`
	MissingDecisions         []MissingDecision  `json:"missing_decisions"`
	Notes                    []string           `json:"notes"`
}

// OutcomeCandidate is a boolean output field that might become an outcome.
type OutcomeCandidate struct {
	Kind              string   `json:"kind"`
	Source            string   `json:"source"`
	CandidateOutcomes []string `json:"candidate_outcomes"`
	Confidence        string   `json:"confidence"`
	Automatic         bool     `json:"automatic"`
	Reason            string   `json:"reason"`
}

// MissingDecision is one choice the author still has to make.
type MissingDecision struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// controlFields are boolean output names that often mean an outcome.
var controlFields = map[string]bool{"success": true, "ok": true, "error": true, "done": true, "failed": true, "succeeded": true}

// HintsFor derives wrapper hints from a capability's contract.
func HintsFor(c catalog.Capability) Hints {
	h := Hints{
		CapabilityName:           c.Name,
		Confidence:               "high",
		DeclaredOutcomes:         append([]string(nil), c.Outcomes...),
		SuggestedWrapperOutcomes: append([]string(nil), c.Outcomes...),
		OutcomePolicy:            "preserve_declared",
		InputMap:                 map[string]string{},
		OutputMap:                map[string]string{},
		OutcomeCandidates:        []OutcomeCandidate{},
		MissingDecisions:         []MissingDecision{},
		Notes:                    []string{},
	}
	// Every input property becomes a workflow input, and the required
	// ones stay required: an optional input the caller leaves out is left
	// out of the call too.
	inProps, _ := c.InputSchema["properties"].(map[string]any)
	required := catalog.Required(c.InputSchema)
	sort.Strings(required)
	inputProps := Object{}
	for _, f := range SortedKeys(inProps) {
		h.InputMap[RootInput+"."+f] = f
		inputProps[f] = schemaOrAny(inProps[f])
	}
	h.InputSchema = Object{"type": "object", "properties": inputProps, "required": stringsToAny(required)}
	if closed, ok := c.InputSchema["additionalProperties"].(bool); ok && !closed {
		h.InputSchema["additionalProperties"] = false
	}

	outProps, _ := c.OutputSchema["properties"].(map[string]any)
	mapped := Object{}
	for _, f := range SortedKeys(outProps) {
		h.OutputMap[f] = RootState + "." + f
		mapped[f] = schemaOrAny(outProps[f])
		prop, _ := outProps[f].(map[string]any)
		if prop["type"] == "boolean" && controlFields[strings.ToLower(f)] {
			h.OutcomeCandidates = append(h.OutcomeCandidates, OutcomeCandidate{
				Kind: "boolean_control_field", Source: f, CandidateOutcomes: []string{OutcomeOK, OutcomeError},
				Confidence: "medium", Reason: "boolean field " + f + " may signal success or failure",
			})
		}
		if prop["type"] == "object" {
			h.MissingDecisions = append(h.MissingDecisions, MissingDecision{Kind: "review_nested_output", Message: "output field " + f + " is a nested object; choose what to keep"})
		}
	}
	h.StateSchema = Object{"type": "object", "properties": mapped}
	h.OutputSchema = Object{"type": "object", "properties": mapped}
	switch {
	case len(outProps) == 0:
		h.Confidence = "low"
		h.MissingDecisions = append(h.MissingDecisions, MissingDecision{Kind: "choose_output_fields", Message: "the capability declares no output fields; choose what the workflow returns"})
	case len(h.OutcomeCandidates) > 0:
		h.Confidence = "medium"
		h.OutcomePolicy = "manual_mapping_required"
		h.MissingDecisions = append(h.MissingDecisions, MissingDecision{Kind: "confirm_boolean_outcomes", Message: "boolean output fields may be outcomes; confirm the mapping"})
	case len(h.MissingDecisions) > 0:
		h.Confidence = "medium"
	}
	return h
}

// Scaffold builds the draft of a one-capability workflow: a call step routed
// ok to the end and, when the capability declares "error", to a tool_error
// step that fails the run with "<tool> failed: <what the tool said>" (the
// message, and context.prior_error as its details).
func Scaffold(c catalog.Capability, opts ScaffoldOptions) (Draft, Hints) {
	h := HintsFor(c)
	d := Draft{
		Name:         opts.Name,
		InputSchema:  firstObject(opts.InputSchema, h.InputSchema),
		StateSchema:  firstObject(opts.StateSchema, h.StateSchema),
		OutputSchema: firstObject(opts.OutputSchema, h.OutputSchema),
		Outcomes:     []string{OutcomeOK},
		Start:        CallStep,
		Steps:        map[string]DraftStep{},
		Routes:       map[string]map[string]string{},
	}
	if d.Name == "" {
		d.Name = strings.NewReplacer(".", "_", "-", "_").Replace(c.Name)
	}
	call := DraftStep{Use: c.Name, Input: opts.Input, Output: opts.Output}
	if call.Input == nil {
		call.Input = pathBindings(firstMap(opts.InputMap, h.InputMap))
	}
	if call.Output == nil {
		for _, src := range SortedKeys(firstMap(opts.OutputMap, h.OutputMap)) {
			call.Output = append(call.Output, OutputTo(src, firstMap(opts.OutputMap, h.OutputMap)[src]))
		}
	}
	for _, b := range call.Output {
		if parts := b.Target.Parts; b.Target.Err() == nil && len(parts) == 1 {
			d.Output = append(d.Output, PathBinding(parts[0], b.Target.String()))
		}
	}
	d.Steps[CallStep] = call
	d.Routes[CallStep] = map[string]string{OutcomeOK: End}
	for _, o := range c.Outcomes {
		if o != OutcomeError {
			continue
		}
		message := ValueBinding("message", c.LocalName+" failed")
		if opts.ErrorMessageSource != "" {
			message = PathBinding("message", opts.ErrorMessageSource)
		}
		// The tool's own words: its error result's text, bounded.
		reason := PathBinding("details", ContextPriorError)
		d.Steps[ErrorStep] = DraftStep{Use: RuntimeError, Input: []InputBinding{message, reason}}
		d.Routes[CallStep][OutcomeError] = ErrorStep
		d.Routes[ErrorStep] = map[string]string{OutcomeOK: End}
	}
	return d, h
}

func pathBindings(m map[string]string) []InputBinding {
	var out []InputBinding
	for _, path := range SortedKeys(m) {
		out = append(out, PathBinding(m[path], path))
	}
	return out
}

func schemaOrAny(v any) any {
	if v == nil {
		return Object{}
	}
	return v
}

func stringsToAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func firstObject(a, b Object) Object {
	if a != nil {
		return a
	}
	return b
}

func firstMap(a, b map[string]string) map[string]string {
	if a != nil {
		return a
	}
	return b
}
