package service

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// stepEdit is the shape of every step edit, over revise: the revision is
// checked before anything else (a stale one answers "conflict" whatever
// else is wrong); prepare then turns a copy of the document into the next
// one, or refuses the edit with an error, which changes nothing. The next
// document commits through edit, so the revision goes up by one even when
// the draft becomes invalid; an edit that changes nothing answers the
// workspace as it is, at the same revision.
func (s *Service) stepEdit(ctx context.Context, id string, revision int, prepare func(doc workflow.Object) error) (protocol.DraftEditResult, error) {
	var after workflow.Object
	r, err := s.revise(ctx, id, revision, func(doc workflow.Object) (workflow.Object, error) {
		before, err := toObject(doc)
		if err != nil {
			return nil, err
		}
		if err := prepare(doc); err != nil {
			return nil, err
		}
		after = doc
		if sameJSON(before, doc) {
			return nil, nil
		}
		return doc, nil
	})
	if err != nil {
		return protocol.DraftEditResult{}, err
	}
	return protocol.DraftEditResult{WorkspaceResult: r, NextActions: afterEdit(r, after)}, nil
}

// addStep adds one step of any kind, with its routes and a route into it.
func (s *Service) addStep(ctx context.Context, p protocol.AddStepParams) (protocol.DraftEditResult, error) {
	if p.StepID == "" {
		return protocol.DraftEditResult{}, invalidParams("invalid params: step_id must not be empty")
	}
	step, err := parseStep(p.StepID, p.Step)
	if err != nil {
		return protocol.DraftEditResult{}, invalidParams("invalid params: step: %v", err)
	}
	if p.Incoming != nil && p.Incoming.StepID == "" {
		return protocol.DraftEditResult{}, invalidParams("invalid params: incoming.step_id must not be empty")
	}
	find := s.findCapability
	return s.stepEdit(ctx, p.WorkspaceID, p.Revision, func(doc workflow.Object) error {
		steps, err := newStepSlot(doc, p.StepID)
		if err != nil {
			return err
		}
		if p.Routes != nil {
			declared := stepOutcomes(step, find)
			if declared == nil {
				return invalid("routes are not allowed for the %s step %q: it names its own targets", step.Kind(), p.StepID)
			}
			for _, o := range keysInOrder(p.Routes) {
				if !slices.Contains(declared, o) {
					return invalid("unknown route outcome %q for draft step %q (it declares %s)", o, p.StepID, strings.Join(declared, ", "))
				}
			}
		}
		var incoming string
		if p.Incoming != nil {
			incoming = p.Incoming.Outcome
			if incoming == "" {
				incoming = workflow.OutcomeOK
			}
			if err := checkRouteSource(doc, p.Incoming.StepID, incoming, find); err != nil {
				return err
			}
		}
		obj, err := stepObject(step)
		if err != nil {
			return err
		}
		steps[p.StepID] = obj
		if p.Routes != nil {
			if err := routesTo(doc, p.StepID, p.Routes); err != nil {
				return err
			}
		}
		if p.Incoming != nil {
			if err := routeTo(doc, p.Incoming.StepID, incoming, p.StepID); err != nil {
				return err
			}
		}
		startIfNone(doc, p.StepID)
		return nil
	})
}

// addStepFromCapability adds one use step of a capability in one revision:
// its inputs (projecting undeclared workflow fields from the capability's
// input schema), its outputs into state (projecting the state schema), its
// routes, which must cover exactly the declared outcomes, and a route into
// it.
func (s *Service) addStepFromCapability(ctx context.Context, p protocol.AddStepFromCapabilityParams) (protocol.DraftEditResult, error) {
	if p.StepID == "" || p.CapabilityName == "" {
		return protocol.DraftEditResult{}, invalidParams("invalid params: step_id and capability_name must not be empty")
	}
	if err := checkMetadata(p.Desc, p.Retry, p.TimeoutSeconds); err != nil {
		return protocol.DraftEditResult{}, err
	}
	from := ""
	if p.RouteFromStep != nil {
		from = *p.RouteFromStep
	}
	fromOutcome := workflow.OutcomeOK
	if p.RouteFromOutcome != nil {
		if *p.RouteFromOutcome == "" {
			return protocol.DraftEditResult{}, invalidParams("invalid params: route_from_outcome must not be empty")
		}
		fromOutcome = *p.RouteFromOutcome
	}
	bindings, outputs := p.InputBindings, []workflow.OutputBinding{}
	var err error
	if p.InputMap != nil && p.InputBindings == nil {
		if bindings, err = inputMap("input_map", p.InputMap); err != nil {
			return protocol.DraftEditResult{}, err
		}
	}
	if p.BindOutputs != nil {
		if outputs, err = outputMap("bind_outputs", p.BindOutputs); err != nil {
			return protocol.DraftEditResult{}, err
		}
	}
	find := s.findCapability
	return s.stepEdit(ctx, p.WorkspaceID, p.Revision, func(doc workflow.Object) error {
		steps, err := newStepSlot(doc, p.StepID)
		if err != nil {
			return err
		}
		if p.InputMap != nil && p.InputBindings != nil {
			return invalid("input_map and input_bindings are mutually exclusive")
		}
		c, ok := find(p.CapabilityName)
		if !ok {
			return notFound("unknown workflow capability %q", p.CapabilityName)
		}
		declared := c.Outcomes
		if len(declared) == 0 {
			declared = []string{workflow.OutcomeOK}
		}
		routes := p.Routes
		switch {
		case routes != nil:
			var missing, unknown []string
			for _, o := range declared {
				if _, ok := routes[o]; !ok {
					missing = append(missing, o)
				}
			}
			for _, o := range keysInOrder(routes) {
				if !slices.Contains(declared, o) {
					unknown = append(unknown, o)
				}
			}
			if len(missing)+len(unknown) > 0 {
				return invalid("capability %q declares outcomes [%s]: routes must cover exactly those; missing [%s], unknown [%s]",
					c.Name, strings.Join(declared, ", "), strings.Join(missing, ", "), strings.Join(unknown, ", "))
			}
		case len(declared) == 1:
			routes = map[string]string{declared[0]: workflow.End}
		default:
			return invalid("capability %q declares outcomes [%s]: give routes for each of them", c.Name, strings.Join(declared, ", "))
		}
		if from != "" {
			if err := checkRouteSource(doc, from, fromOutcome, find); err != nil {
				return err
			}
		}

		input, err := capabilityInputs(doc, c, bindings)
		if err != nil {
			return err
		}
		for _, b := range outputs {
			if _, err := capabilityOutput(doc, c, b); err != nil {
				return err
			}
		}
		output, err := jsonList(outputs)
		if err != nil {
			return err
		}
		obj := workflow.Object{"use": c.Name, "input": input, "output": output}
		if p.Desc != nil {
			obj["desc"] = *p.Desc
		}
		if p.Retry != nil {
			obj["retry"] = *p.Retry
		}
		if p.TimeoutSeconds != nil {
			obj["timeout_seconds"] = *p.TimeoutSeconds
		}
		steps[p.StepID] = obj
		if err := routesTo(doc, p.StepID, routes); err != nil {
			return err
		}
		if from != "" {
			if err := routeTo(doc, from, fromOutcome, p.StepID); err != nil {
				return err
			}
		}
		startIfNone(doc, p.StepID)
		return nil
	})
}

// branch sets routes of one step, keeping its other routes.
func (s *Service) branch(ctx context.Context, p protocol.BranchParams) (protocol.DraftEditResult, error) {
	if p.Routes == nil {
		return protocol.DraftEditResult{}, invalidParams("invalid params: routes is required")
	}
	if p.StepID == "" {
		return protocol.DraftEditResult{}, invalidParams("invalid params: step_id must not be empty")
	}
	return s.stepEdit(ctx, p.WorkspaceID, p.Revision, func(doc workflow.Object) error {
		if len(p.Routes) == 0 {
			return nil
		}
		return routesTo(doc, p.StepID, p.Routes)
	})
}

// handleRoutes points several (step, outcome) pairs at one target.
func (s *Service) handleRoutes(ctx context.Context, p protocol.HandleParams) (protocol.DraftEditResult, error) {
	if p.Branches == nil {
		return protocol.DraftEditResult{}, invalidParams("invalid params: branches is required")
	}
	for i, b := range p.Branches {
		if b.StepID == "" || b.Outcome == "" {
			return protocol.DraftEditResult{}, invalidParams("invalid params: branches[%d] needs a step_id and an outcome", i)
		}
	}
	if p.Target == "" {
		return protocol.DraftEditResult{}, invalidParams("invalid params: target must not be empty")
	}
	return s.stepEdit(ctx, p.WorkspaceID, p.Revision, func(doc workflow.Object) error {
		for _, b := range p.Branches {
			if err := routeTo(doc, b.StepID, b.Outcome, p.Target); err != nil {
				return err
			}
		}
		return nil
	})
}

// updateCapabilityStep patches one use step: a given desc, retry or
// timeout_seconds is set (or removed when null), a given input replaces the
// step's input bindings; the rest of the step stays as it is.
func (s *Service) updateCapabilityStep(ctx context.Context, p protocol.UpdateCapabilityStepParams) (protocol.DraftEditResult, error) {
	u := p.Update
	if !u.Desc.Set && !u.Retry.Set && !u.TimeoutSeconds.Set && !u.Input.Set {
		return protocol.DraftEditResult{}, invalidParams("invalid params: update needs at least one of desc, input, retry and timeout_seconds")
	}
	if u.Input.Set && u.Input.Value == nil {
		return protocol.DraftEditResult{}, invalidParams("invalid params: update.input must be a list ([] clears the inputs)")
	}
	if err := checkMetadata(u.Desc.Value, u.Retry.Value, u.TimeoutSeconds.Value); err != nil {
		return protocol.DraftEditResult{}, err
	}
	return s.stepEdit(ctx, p.WorkspaceID, p.Revision, func(doc workflow.Object) error {
		step, parsed, err := capabilityStep(doc, p.StepID)
		if err != nil {
			return err
		}
		patchField(step, "desc", u.Desc)
		patchField(step, "retry", u.Retry)
		patchField(step, "timeout_seconds", u.TimeoutSeconds)
		if u.Input.Set {
			c, err := s.capability(parsed.Use)
			if err != nil {
				return err
			}
			input, err := capabilityInputs(doc, c, *u.Input.Value)
			if err != nil {
				return err
			}
			step["input"] = input
			delete(step, "in")
			delete(step, "with")
		}
		return nil
	})
}

func patchField[T any](step workflow.Object, key string, f protocol.Field[T]) {
	switch {
	case !f.Set:
	case f.Value == nil:
		delete(step, key)
	default:
		step[key] = *f.Value
	}
}

// checkMetadata checks a use step's desc, retry and timeout_seconds.
func checkMetadata(desc *string, retry, timeout *int) error {
	switch {
	case desc != nil && *desc == "":
		return invalidParams("invalid params: desc must not be empty")
	case retry != nil && *retry < 0:
		return invalidParams("invalid params: retry must be 0 or more")
	case timeout != nil && *timeout <= 0:
		return invalidParams("invalid params: timeout_seconds must be more than 0")
	}
	return nil
}

// parseStep decodes one step strictly, as a draft holds it.
func parseStep(id string, raw any) (workflow.DraftStep, error) {
	d, diags := workflow.ParseDraft(workflow.Object{"steps": workflow.Object{id: raw}})
	if len(diags) > 0 {
		return workflow.DraftStep{}, errors.New(diags[0].Message)
	}
	step, ok := d.Steps[id]
	if !ok {
		return workflow.DraftStep{}, fmt.Errorf("step %q is missing", id)
	}
	return step, nil
}

// stepObject is the canonical JSON form of a step; a use step always has
// its input and output lists.
func stepObject(step workflow.DraftStep) (workflow.Object, error) {
	obj, err := toObject(step)
	if err != nil {
		return nil, err
	}
	if step.Kind() == workflow.KindUse {
		for _, key := range []string{"input", "output"} {
			if _, ok := obj[key]; !ok {
				obj[key] = []any{}
			}
		}
	}
	return obj, nil
}

// stepOutcomes are the outcomes a step is routed on, nil for the kinds
// that name their own targets (end, when, choose, match).
func stepOutcomes(step workflow.DraftStep, find workflow.Lookup) []string {
	switch step.Kind() {
	case workflow.KindUse:
		if c, ok := find(step.Use); ok && len(c.Outcomes) > 0 {
			return c.Outcomes
		}
		return []string{workflow.OutcomeOK}
	case workflow.KindForeach:
		return []string{workflow.OutcomeLoop, workflow.OutcomeDone, workflow.OutcomeCompletedWithErrors}
	case workflow.KindInterrupt:
		return outcomesOr(step.Interrupt.Outcomes, workflow.OutcomeSubmitted)
	case workflow.KindJoin:
		return []string{workflow.OutcomeDone}
	case workflow.KindSubgraph:
		return outcomesOr(step.Subgraph.Outcomes, workflow.OutcomeOK)
	}
	return nil
}

// outcomesOr is s, or def alone when s is empty.
func outcomesOr(s []string, def string) []string {
	if len(s) == 0 {
		return []string{def}
	}
	return s
}

// checkRouteSource checks that a route into a new step starts at an
// outcome an existing step declares.
func checkRouteSource(doc workflow.Object, from, outcome string, find workflow.Lookup) error {
	steps, _ := doc["steps"].(map[string]any)
	raw, ok := steps[from]
	if !ok {
		return invalid("unknown incoming source step %q", from)
	}
	step, err := parseStep(from, raw)
	if err != nil {
		return invalid("incoming source step %q is not a valid step: %v", from, err)
	}
	declared := stepOutcomes(step, find)
	if !slices.Contains(declared, outcome) {
		if declared == nil {
			return invalid("the %s step %q names its own targets: it has no outcome %q to route from", step.Kind(), from, outcome)
		}
		return invalid("unknown incoming route outcome %q for source step %q (it declares %s)", outcome, from, strings.Join(declared, ", "))
	}
	return nil
}

// newStepSlot returns the document's steps, checking that id is free.
func newStepSlot(doc workflow.Object, id string) (workflow.Object, error) {
	if id == workflow.End {
		return nil, invalid("step id %q is reserved for the end of the workflow", id)
	}
	steps, err := attachedObject(doc, "steps", "draft steps")
	if err != nil {
		return nil, err
	}
	if _, exists := steps[id]; exists {
		return nil, invalid("draft step %q already exists", id)
	}
	return steps, nil
}

// attachedObject returns the object under key in parent, creating it when
// absent; what names it in errors.
func attachedObject(parent workflow.Object, key, what string) (workflow.Object, error) {
	switch v := parent[key].(type) {
	case map[string]any:
		return v, nil
	case nil:
		obj := workflow.Object{}
		parent[key] = obj
		return obj, nil
	}
	return nil, invalid("%s must be an object", what)
}

// routeTo routes outcome of step from to target.
func routeTo(doc workflow.Object, from, outcome, target string) error {
	if target == "" {
		return invalid("the route %s.%s needs a target: a step id or %s", from, outcome, workflow.End)
	}
	routes, err := attachedObject(doc, "routes", "draft routes")
	if err != nil {
		return err
	}
	step, err := attachedObject(routes, from, fmt.Sprintf("routes of step %q", from))
	if err != nil {
		return err
	}
	step[outcome] = target
	return nil
}

// routesTo sets several routes of one step, in outcome order.
func routesTo(doc workflow.Object, from string, routes map[string]string) error {
	for _, o := range keysInOrder(routes) {
		if err := routeTo(doc, from, o, routes[o]); err != nil {
			return err
		}
	}
	return nil
}

// startIfNone makes id the start of a draft that has none yet.
func startIfNone(doc workflow.Object, id string) {
	switch start := doc["start"].(type) {
	case nil:
		doc["start"] = id
	case string:
		if start == "" {
			doc["start"] = id
		}
	}
}

// capabilityStep returns use step id of a document, as stored and as
// parsed: a missing step is a KeyError, a step of another kind or one that
// does not parse a ValueError.
func capabilityStep(doc workflow.Object, id string) (workflow.Object, workflow.DraftStep, error) {
	obj, err := stepOf(doc, id)
	if err != nil {
		return nil, workflow.DraftStep{}, err
	}
	if _, ok := obj[workflow.KindUse]; !ok {
		return nil, workflow.DraftStep{}, invalid("draft step %q is not capability-backed (a use step)", id)
	}
	step, err := parseStep(id, obj)
	if err != nil {
		return nil, workflow.DraftStep{}, invalid("draft step %q is not a valid step: %v", id, err)
	}
	return obj, step, nil
}

// afterEdit advises the next call after an edit, naming this API's
// methods.
func afterEdit(r protocol.WorkspaceResult, doc workflow.Object) protocol.NextActions {
	request := func(kv ...any) protocol.Object {
		o := protocol.Object{"workspace_id": r.WorkspaceID, "revision": r.Revision}
		for i := 0; i+1 < len(kv); i += 2 {
			o[kv[i].(string)] = kv[i+1]
		}
		return o
	}
	switch r.Status {
	case statusConflict:
		if len(r.Diagnostics) > 0 && r.Diagnostics[0].Code == "workspace_exists" {
			return nextActions(false, nil, nil, "The workspace already exists; choose another workspace_id or edit it.", nil)
		}
		return nextActions(true, nil, ptr(protocol.MethodWorkspaceGet),
			fmt.Sprintf("Nothing changed: the workspace is at revision %d. Read it, then repeat the edit at that revision.", r.Revision),
			[]protocol.PatchExample{{Description: "Read the current draft.", Tool: protocol.MethodWorkspaceGet,
				Request: protocol.Object{"workspace_id": r.WorkspaceID, "include_draft": true}}})
	case statusValid:
		name, _ := doc["name"].(string)
		outcomes, ok := doc["outcomes"].([]any)
		if !ok || len(outcomes) == 0 {
			outcomes = []any{workflow.OutcomeOK}
		}
		return nextActions(true, ptr(true), ptr(protocol.MethodWorkspaceCreateArtifact),
			"The draft is valid: save it as an artifact, or keep editing.",
			[]protocol.PatchExample{{Description: "Save the draft as version 1 of an artifact.", Tool: protocol.MethodWorkspaceCreateArtifact,
				Request: protocol.Object{"workspace_id": r.WorkspaceID, "artifact_id": name, "version": 1, "title": name, "outcomes": outcomes}}})
	}
	steps, _ := doc["steps"].(map[string]any)
	if len(steps) == 0 {
		return nextActions(true, ptr(false), ptr(protocol.MethodWorkspaceAddStepFromCapability),
			"The draft has no steps yet: add one; the first step added becomes the start.", nil)
	}
	var d workflow.Diagnostic
	if blocking := workflow.Blocking(r.Diagnostics); len(blocking) > 0 {
		d = blocking[0]
	}
	stepID := ""
	if d.StepID != nil {
		stepID = *d.StepID
	}
	advise := func(tool, advice string, examples ...protocol.PatchExample) protocol.NextActions {
		return nextActions(true, ptr(false), ptr(tool), strings.TrimSpace(d.Message+". "+advice), examples)
	}
	switch d.Code {
	case "unknown_start":
		return advise(protocol.MethodWorkspaceSetStart, "Set the start to the step the workflow begins with.",
			protocol.PatchExample{Description: "Start at the first step.", Tool: protocol.MethodWorkspaceSetStart,
				Request: request("step_id", keysInOrder(steps)[0])})
	case "missing_outcome_edge":
		var examples []protocol.PatchExample
		if outcome, ok := quotedAfter(d.Message, "outcome "); ok && stepID != "" {
			examples = append(examples, protocol.PatchExample{Description: "Finish the workflow on that outcome.", Tool: protocol.MethodWorkspaceBranch,
				Request: request("step_id", stepID, "routes", protocol.Object{outcome: workflow.End})})
		}
		return advise(protocol.MethodWorkspaceBranch, "Route the outcome with branch (or handle, for several at once).", examples...)
	case "unknown_edge_destination":
		return advise(protocol.MethodWorkspaceAddStepFromCapability, "Add the step the route names, or re-route it with branch.")
	case "invalid_source_path", "invalid_destination_path", "invalid_node_input_field", "invalid_node_output_field", "invalid_workflow_output_field":
		return advise(protocol.MethodWorkspaceBind, "bind declares the field it wires by projecting the capability's schema.")
	case "unknown_node_def":
		return advise(protocol.MethodCapabilitiesList, "Find an available capability and use it instead.")
	}
	return advise(protocol.MethodWorkspacePatch, "Fix the draft where the diagnostic points.")
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

// keysInOrder returns m's keys, sorted.
func keysInOrder[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
