// Package workflow owns the workflow language: the authoring draft, the
// compiled plan, their validation, scaffolding a draft from a capability, and
// the step-by-step evaluation of a plan. It is pure: no actors, no I/O, no
// clocks. The run actor drives it and performs the calls it asks for.
package workflow

import "encoding/json"

// Reserved step targets.
const (
	// End is the route target that finishes the workflow.
	End = "__end__"
	// OutcomeOK is the default outcome of a step and of a workflow.
	OutcomeOK = "ok"
	// OutcomeError is the outcome of a tool call whose result is an error.
	OutcomeError = "error"
)

// Object is a JSON object.
type Object = map[string]any

// Draft is the authoring document of a workflow: named steps and the routes
// between their outcomes.
type Draft struct {
	Name         string                       `json:"name"`
	InputSchema  Object                       `json:"input_schema"`
	StateSchema  Object                       `json:"state_schema"`
	OutputSchema Object                       `json:"output_schema"`
	Outcomes     []string                     `json:"outcomes"`
	Output       []InputBinding               `json:"output"`
	Start        string                       `json:"start"`
	Steps        map[string]DraftStep         `json:"steps"`
	Routes       map[string]map[string]string `json:"routes"`
}

// DraftStep is one step of a draft. Exactly one kind key is set; this
// version of the language executes "use" (a capability call) and "end".
type DraftStep struct {
	Use            string          `json:"use,omitempty"`
	Input          []InputBinding  `json:"input,omitempty"`
	Output         []OutputBinding `json:"output,omitempty"`
	Desc           string          `json:"desc,omitempty"`
	Retry          *int            `json:"retry,omitempty"`
	TimeoutSeconds *int            `json:"timeout_seconds,omitempty"`
	End            *EndStep        `json:"end,omitempty"`
}

// EndStep finishes the workflow with an outcome.
type EndStep struct {
	Outcome string `json:"outcome,omitempty"`
}

// InputBinding fills one node-local target of a step's input, either from a
// graph path ("input.x", "state.y") or from a literal JSON value.
type InputBinding struct {
	Target string          `json:"target"`
	Path   string          `json:"path,omitempty"`
	Value  json.RawMessage `json:"value,omitempty"`
}

// OutputBinding copies a node-local output field into a state path.
type OutputBinding struct {
	Source string `json:"source"`
	Target string `json:"target"`
}

// Plan is the compiled, executable form of a workflow ("raw plan").
type Plan struct {
	Name         string         `json:"name"`
	InputSchema  Object         `json:"input_schema"`
	StateSchema  Object         `json:"state_schema"`
	OutputSchema Object         `json:"output_schema"`
	Outcomes     []string       `json:"outcomes"`
	Output       []InputBinding `json:"output"`
	Start        string         `json:"start"`
	Nodes        []Node         `json:"nodes"`
	Edges        []Edge         `json:"edges"`
}

// Node is one executable step of a plan.
type Node struct {
	ID             string          `json:"id"`
	Type           string          `json:"type"` // "node" | "end"
	Node           string          `json:"node,omitempty"`
	Desc           string          `json:"desc,omitempty"`
	Input          []InputBinding  `json:"input,omitempty"`
	Output         []OutputBinding `json:"output,omitempty"`
	Outcome        string          `json:"outcome,omitempty"`
	Retry          *int            `json:"retry,omitempty"`
	TimeoutSeconds *int            `json:"timeout_seconds,omitempty"`
}

// Node types.
const (
	NodeCall = "node"
	NodeEnd  = "end"
)

// Edge routes one outcome of a node to the next node (or End).
type Edge struct {
	From    string `json:"from"`
	Outcome string `json:"outcome"`
	To      string `json:"to"`
}

// Diagnostic is one validation finding on a draft or plan.
type Diagnostic struct {
	Code       string  `json:"code"`
	Path       string  `json:"path"`
	Message    string  `json:"message"`
	StepID     *string `json:"step_id,omitempty"`
	RepairHint *string `json:"repair_hint,omitempty"`
}

// TraceEntry records one executed step of a run.
type TraceEntry struct {
	FrameID       string `json:"frame_id"`
	NodeID        string `json:"node_id"`
	StepType      string `json:"step_type"`
	ResolvedInput Object `json:"resolved_input"`
	Outcome       string `json:"outcome"`
	NextNodeID    string `json:"next_node_id"`
	Output        Object `json:"output"`
	StateChanges  Object `json:"state_changes"`
}
