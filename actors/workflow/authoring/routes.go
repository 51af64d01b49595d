package authoring

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// BranchParams are the params of branch: routes of one step, by outcome.
type BranchParams struct {
	StepID string
	Routes map[string]string
}

func (p BranchParams) Check() error {
	if p.Routes == nil {
		return malformed("routes is required")
	}
	if p.StepID == "" {
		return malformed("step_id must not be empty")
	}
	return nil
}

// Branch sets routes of one step, keeping its other routes.
func Branch(doc workflow.Object, p BranchParams, _ workflow.Lookup) (workflow.Object, error) {
	return edit(doc, p.Check(), func(doc workflow.Object) error {
		if len(p.Routes) == 0 {
			return nil
		}
		return routesTo(doc, p.StepID, p.Routes)
	})
}

// HandleParams are the params of handle: several (step, outcome) pairs
// and the one target they all go to.
type HandleParams struct {
	Branches []RouteSource
	Target   string
}

func (p HandleParams) Check() error {
	if p.Branches == nil {
		return malformed("branches is required")
	}
	for i, b := range p.Branches {
		if b.StepID == "" || b.Outcome == "" {
			return malformed("branches[%d] needs a step_id and an outcome", i)
		}
	}
	if p.Target == "" {
		return malformed("target must not be empty")
	}
	return nil
}

// Handle points several (step, outcome) pairs at one target.
func Handle(doc workflow.Object, p HandleParams, _ workflow.Lookup) (workflow.Object, error) {
	return edit(doc, p.Check(), func(doc workflow.Object) error {
		for _, b := range p.Branches {
			if err := routeTo(doc, b.StepID, b.Outcome, p.Target); err != nil {
				return err
			}
		}
		return nil
	})
}

// SetRouteParams are the params of set_route: one route, which need not
// lead anywhere yet.
type SetRouteParams struct {
	StepID, Outcome, Target string
}

func (SetRouteParams) Check() error { return nil }

// SetRoute routes one outcome of one step to a target, creating the
// routes objects it needs and checking nothing else: the draft's
// diagnostics say what is wrong.
func SetRoute(doc workflow.Object, p SetRouteParams, _ workflow.Lookup) (workflow.Object, error) {
	return edit(doc, p.Check(), func(doc workflow.Object) error {
		routes, _ := doc["routes"].(map[string]any)
		if routes == nil {
			routes = workflow.Object{}
			doc["routes"] = routes
		}
		step, _ := routes[p.StepID].(map[string]any)
		if step == nil {
			step = workflow.Object{}
			routes[p.StepID] = step
		}
		step[p.Outcome] = p.Target
		return nil
	})
}

// RemoveRouteParams are the params of remove_route.
type RemoveRouteParams struct {
	StepID, Outcome string
}

func (RemoveRouteParams) Check() error { return nil }

// RemoveRoute removes one route; removing one that does not exist
// changes nothing.
func RemoveRoute(doc workflow.Object, p RemoveRouteParams, _ workflow.Lookup) (workflow.Object, error) {
	return edit(doc, p.Check(), func(doc workflow.Object) error {
		routes, err := objectAt(doc, "routes", "draft routes")
		if err != nil {
			return err
		}
		stepRoutes, err := objectAt(routes, p.StepID, fmt.Sprintf("routes of step %q", p.StepID))
		if err != nil {
			return err
		}
		delete(stepRoutes, p.Outcome)
		return nil
	})
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
