package authoring

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// Remedy is the kind of edit that takes a draft further.
type Remedy int

// The remedies Advise names; the API maps each to its method.
const (
	RemedyPatch          Remedy = iota // fix the draft where the diagnostic points
	RemedySave                         // save the valid draft as an artifact
	RemedyAddStep                      // add a step from a capability
	RemedySetStart                     // set the step the workflow begins with
	RemedyBranch                       // route a step's outcome
	RemedyBind                         // wire a field by projecting a capability's schema
	RemedyFindCapability               // find an available capability
)

// Finding is the first error-severity diagnostic of a draft, as Advise
// reads it; the zero Finding when there is none.
type Finding struct {
	Code, Message, StepID string
}

// Advice is the edit that takes a draft further: its remedy, why, and an
// example of the call when one can be made.
type Advice struct {
	Remedy  Remedy
	Reason  string
	Example *Example
}

// Example is an example call of a remedy: what it does, and its params
// beyond the workspace id and revision.
type Example struct {
	Description string
	Params      map[string]any
}

// Advise advises the edit after which doc, valid or not, is closer to an
// artifact: a valid draft is saved as version 1 of an artifact named
// after it, with its outcomes (["ok"] when it declares none); a draft with
// no steps gets its first one; otherwise the remedy is the one that fixes
// first, and the reason starts with first's message.
func Advise(doc workflow.Object, valid bool, first Finding) Advice {
	if valid {
		name, _ := doc["name"].(string)
		outcomes, ok := doc["outcomes"].([]any)
		if !ok || len(outcomes) == 0 {
			outcomes = []any{workflow.OutcomeOK}
		}
		return Advice{Remedy: RemedySave, Reason: "The draft is valid: save it as an artifact, or keep editing.", Example: &Example{
			Description: "Save the draft as version 1 of an artifact.",
			Params:      map[string]any{"artifact_id": name, "version": 1, "title": name, "outcomes": outcomes},
		}}
	}
	steps, _ := doc["steps"].(map[string]any)
	if len(steps) == 0 {
		return Advice{Remedy: RemedyAddStep, Reason: "The draft has no steps yet: add one; the first step added becomes the start."}
	}
	advise := func(r Remedy, advice string, example *Example) Advice {
		return Advice{Remedy: r, Reason: strings.TrimSpace(first.Message + ". " + advice), Example: example}
	}
	switch first.Code {
	case "unknown_start":
		return advise(RemedySetStart, "Set the start to the step the workflow begins with.",
			&Example{Description: "Start at the first step.", Params: map[string]any{"step_id": slices.Sorted(maps.Keys(steps))[0]}})
	case "missing_outcome_edge":
		var example *Example
		if outcome, ok := quotedAfter(first.Message, "outcome "); ok && first.StepID != "" {
			example = &Example{Description: "Finish the workflow on that outcome.",
				Params: map[string]any{"step_id": first.StepID, "routes": map[string]any{outcome: workflow.End}}}
		}
		return advise(RemedyBranch, "Route the outcome with branch (or handle, for several at once).", example)
	case "unknown_edge_destination":
		return advise(RemedyAddStep, "Add the step the route names, or re-route it with branch.", nil)
	case "invalid_source_path", "invalid_destination_path", "invalid_node_input_field", "invalid_node_output_field", "invalid_workflow_output_field":
		return advise(RemedyBind, "bind declares the field it wires by projecting the capability's schema.", nil)
	case "unknown_node_def":
		return advise(RemedyFindCapability, "Find an available capability and use it instead.", nil)
	}
	return advise(RemedyPatch, "Fix the draft where the diagnostic points.", nil)
}

// quotedAfter reads the Go-quoted string that follows prefix in s.
func quotedAfter(s, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return "", false
	}
	q, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return "", false
	}
	v, err := strconv.Unquote(q)
	return v, err == nil
}
