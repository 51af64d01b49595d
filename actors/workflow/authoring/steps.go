package authoring

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// RouteSource is one outcome of one step: where a route starts. Outcome
// is "ok" when empty.
type RouteSource struct {
	StepID  string
	Outcome string
}

// AddStepParams are the params of add_step: Step is one draft step of any
// of the nine kinds, as JSON; Routes are its own routes, Incoming a route
// into it.
type AddStepParams struct {
	StepID   string
	Step     json.RawMessage
	Incoming *RouteSource
	Routes   map[string]string
}

func (p AddStepParams) Check() error {
	_, err := p.parse()
	return err
}

// parse checks the params and decodes the step.
func (p AddStepParams) parse() (workflow.DraftStep, error) {
	if p.StepID == "" {
		return workflow.DraftStep{}, malformed("step_id must not be empty")
	}
	step, err := parseStep(p.StepID, p.Step)
	if err != nil {
		return workflow.DraftStep{}, malformed("step: %v", err)
	}
	if p.Incoming != nil && p.Incoming.StepID == "" {
		return workflow.DraftStep{}, malformed("incoming.step_id must not be empty")
	}
	return step, nil
}

// AddStep adds one step of any kind, with its routes, which must be
// outcomes the step declares, and a route into it from an outcome an
// existing step declares. The first step of a draft becomes its start.
func AddStep(doc workflow.Object, p AddStepParams, find workflow.Lookup) (workflow.Object, error) {
	step, err := p.parse()
	return edit(doc, err, func(doc workflow.Object) error {
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

// AddStepFromCapabilityParams are the params of add_step_from_capability.
// InputMap (graph path to local target) and InputBindings are
// alternatives; BindOutputs maps a local output field to a state path.
// RouteFromOutcome is "ok" when nil.
type AddStepFromCapabilityParams struct {
	StepID           string
	CapabilityName   string
	RouteFromStep    *string
	RouteFromOutcome *string
	Routes           map[string]string
	InputMap         map[string]string
	InputBindings    []workflow.InputBinding
	BindOutputs      map[string]string
	Desc             *string
	Retry            *int
	TimeoutSeconds   *int
}

func (p AddStepFromCapabilityParams) Check() error {
	_, err := p.parse()
	return err
}

// capabilityStepParams are add_step_from_capability's params as the edit
// uses them.
type capabilityStepParams struct {
	from, fromOutcome string
	bindings          []workflow.InputBinding
	outputs           []workflow.OutputBinding
}

// parse checks the params and reads the route into the step and its
// bindings from them.
func (p AddStepFromCapabilityParams) parse() (capabilityStepParams, error) {
	if p.StepID == "" || p.CapabilityName == "" {
		return capabilityStepParams{}, malformed("step_id and capability_name must not be empty")
	}
	if err := checkMetadata(p.Desc, p.Retry, p.TimeoutSeconds); err != nil {
		return capabilityStepParams{}, err
	}
	c := capabilityStepParams{fromOutcome: workflow.OutcomeOK, bindings: p.InputBindings, outputs: []workflow.OutputBinding{}}
	if p.RouteFromStep != nil {
		c.from = *p.RouteFromStep
	}
	if p.RouteFromOutcome != nil {
		if *p.RouteFromOutcome == "" {
			return capabilityStepParams{}, malformed("route_from_outcome must not be empty")
		}
		c.fromOutcome = *p.RouteFromOutcome
	}
	var err error
	if p.InputMap != nil && p.InputBindings == nil {
		if c.bindings, err = inputMap("input_map", p.InputMap); err != nil {
			return capabilityStepParams{}, err
		}
	}
	if p.BindOutputs != nil {
		if c.outputs, err = outputMap("bind_outputs", p.BindOutputs); err != nil {
			return capabilityStepParams{}, err
		}
	}
	return c, nil
}

// AddStepFromCapability adds one use step of a capability: its inputs
// (projecting undeclared workflow fields from the capability's input
// schema), its outputs into state (projecting the state schema), its
// routes, which must cover exactly the capability's declared outcomes
// (one declared outcome may go unrouted: it ends the workflow), and a
// route into it.
func AddStepFromCapability(doc workflow.Object, p AddStepFromCapabilityParams, find workflow.Lookup) (workflow.Object, error) {
	cp, err := p.parse()
	return edit(doc, err, func(doc workflow.Object) error {
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
		routes, err := coveringRoutes(c.Name, c.Outcomes, p.Routes)
		if err != nil {
			return err
		}
		if cp.from != "" {
			if err := checkRouteSource(doc, cp.from, cp.fromOutcome, find); err != nil {
				return err
			}
		}
		input, err := capabilityInputs(doc, c, cp.bindings)
		if err != nil {
			return err
		}
		for _, b := range cp.outputs {
			if _, err := capabilityOutput(doc, c, b); err != nil {
				return err
			}
		}
		output, err := jsonList(cp.outputs)
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
		if cp.from != "" {
			if err := routeTo(doc, cp.from, cp.fromOutcome, p.StepID); err != nil {
				return err
			}
		}
		startIfNone(doc, p.StepID)
		return nil
	})
}

// coveringRoutes are the routes of a new use step of capability name,
// which declares outcomes (none means "ok" alone): given routes must cover
// exactly those; without any, a single outcome ends the workflow and
// several are refused.
func coveringRoutes(name string, outcomes []string, routes map[string]string) (map[string]string, error) {
	declared := outcomes
	if len(declared) == 0 {
		declared = []string{workflow.OutcomeOK}
	}
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
			return nil, invalid("capability %q declares outcomes [%s]: routes must cover exactly those; missing [%s], unknown [%s]",
				name, strings.Join(declared, ", "), strings.Join(missing, ", "), strings.Join(unknown, ", "))
		}
		return routes, nil
	case len(declared) == 1:
		return map[string]string{declared[0]: workflow.End}, nil
	}
	return nil, invalid("capability %q declares outcomes [%s]: give routes for each of them", name, strings.Join(declared, ", "))
}

// Field is one field of a presence-aware patch: Set when the field was
// given, with Value nil when it was given as null (which clears it).
type Field[T any] struct {
	Set   bool
	Value *T
}

// UpdateCapabilityStepParams are the params of update_capability_step: a
// presence-aware patch of one use step.
type UpdateCapabilityStepParams struct {
	StepID         string
	Desc           Field[string]
	Retry          Field[int]
	TimeoutSeconds Field[int]
	Input          Field[[]workflow.InputBinding]
}

func (p UpdateCapabilityStepParams) Check() error {
	if !p.Desc.Set && !p.Retry.Set && !p.TimeoutSeconds.Set && !p.Input.Set {
		return malformed("update needs at least one of desc, input, retry and timeout_seconds")
	}
	if p.Input.Set && p.Input.Value == nil {
		return malformed("update.input must be a list ([] clears the inputs)")
	}
	return checkMetadata(p.Desc.Value, p.Retry.Value, p.TimeoutSeconds.Value)
}

// UpdateCapabilityStep patches one use step: a given desc, retry or
// timeout_seconds is set (or removed when null), a given input replaces
// the step's input bindings, checked as SetStepInputBindings checks them;
// the rest of the step stays as it is.
func UpdateCapabilityStep(doc workflow.Object, p UpdateCapabilityStepParams, find workflow.Lookup) (workflow.Object, error) {
	return edit(doc, p.Check(), func(doc workflow.Object) error {
		step, parsed, err := capabilityStep(doc, p.StepID)
		if err != nil {
			return err
		}
		patchField(step, "desc", p.Desc)
		patchField(step, "retry", p.Retry)
		patchField(step, "timeout_seconds", p.TimeoutSeconds)
		if p.Input.Set {
			c, err := capabilityOf(find, parsed.Use)
			if err != nil {
				return err
			}
			return setCapabilityInputs(doc, step, c, *p.Input.Value)
		}
		return nil
	})
}

func patchField[T any](step workflow.Object, key string, f Field[T]) {
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
		return malformed("desc must not be empty")
	case retry != nil && *retry < 0:
		return malformed("retry must be 0 or more")
	case timeout != nil && *timeout <= 0:
		return malformed("timeout_seconds must be more than 0")
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
	obj, err := workflow.ObjectOf(step)
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
