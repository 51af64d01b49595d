// Package workflow owns the workflow language: the authoring draft, the
// compiled plan, their validation, scaffolding a draft from a capability, and
// the evaluation of a plan as a deterministic state machine (frames, a ready
// queue, the calls it is waiting for). It is pure: no actors, no I/O, no
// clocks. The run actor drives it and performs the calls it asks for.
package workflow

import (
	"encoding/json"
	"strconv"
)

// Reserved step targets.
const (
	// End is the route target that finishes the current scope.
	End = "__end__"
	// OutcomeOK is the default outcome of a step and of a workflow.
	OutcomeOK = "ok"
	// OutcomeError is the outcome of a tool call whose result is an error.
	OutcomeError = "error"
	// OutcomeSessionLost is the outcome of an MCP tool call whose session
	// died while it was in flight (whether it ran is unknown), when the
	// step routes it; a step that does not fails with an error that
	// starts "session_lost:". Every MCP tool step may route it; none has
	// to. Like "error", it commits no output.
	OutcomeSessionLost = "session_lost"
	// OutcomeElicitationLost is the outcome of an MCP tool call that
	// waited on its server's request (elicitation, sampling) when
	// mcpflow's process stopped, and that is not safe to repeat: the
	// request died with the session, and whether the call went on is
	// unknown. A step that does not route it fails with an error that
	// starts "elicitation_lost:". Every MCP tool step may route it; none
	// has to. Like "session_lost", it commits no output.
	OutcomeElicitationLost = "elicitation_lost"
)

// lostOutcome reports whether outcome is one every MCP tool step may
// route without declaring it: its call's outcome is unknown.
func lostOutcome(outcome string) bool {
	return outcome == OutcomeSessionLost || outcome == OutcomeElicitationLost
}

// Object is a JSON object.
type Object = map[string]any

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

// Node types of a plan.
const (
	NodeCall      = "node"
	NodeCondition = "condition"
	NodeForeach   = "foreach"
	NodeJoin      = "join"
	NodeEnd       = "end"
	NodeInterrupt = "interrupt"
	NodeSubgraph  = "subgraph"
)

// Node is one step of a plan. Type selects which fields apply:
//   - node: Node (the capability), Input, Output, Retry, TimeoutSeconds;
//   - condition: Check, with outcomes "true" and "false";
//   - foreach: Over, As, Mode, ItemError, Concurrent, with outcomes "loop"
//     (the body), "done", and "completed_with_errors" when items may fail;
//   - join: outcome "done";
//   - end: Outcome, the workflow's outcome;
//   - interrupt: Kind, Request, Resume, Outcomes, RequestSchema, ResumeSchema;
//   - subgraph: Workflow, Input, Output, InputSchema, OutputSchema, Outcomes.
type Node struct {
	ID             string          `json:"id"`
	Type           string          `json:"type"`
	Node           string          `json:"node,omitempty"`
	Desc           *string         `json:"desc,omitempty"`
	Input          []InputBinding  `json:"input,omitempty"`
	Output         []OutputBinding `json:"output,omitempty"`
	Retry          *int            `json:"retry,omitempty"`
	TimeoutSeconds *int            `json:"timeout_seconds,omitempty"`

	Check *Condition `json:"check,omitempty"`

	Over       *GraphPath        `json:"over,omitempty"`
	As         string            `json:"as,omitempty"`
	Mode       string            `json:"mode,omitempty"`
	ItemError  *ItemErrorPolicy  `json:"item_error,omitempty"`
	Concurrent *ConcurrentPolicy `json:"concurrent,omitempty"`

	Outcome string `json:"outcome,omitempty"`

	Kind          string          `json:"kind,omitempty"`
	Request       []InputBinding  `json:"request,omitempty"`
	Resume        []OutputBinding `json:"resume,omitempty"`
	Outcomes      []string        `json:"outcomes,omitempty"`
	RequestSchema Object          `json:"request_schema,omitempty"`
	ResumeSchema  Object          `json:"resume_schema,omitempty"`

	Workflow     *WorkflowRef `json:"workflow,omitempty"`
	InputSchema  Object       `json:"input_schema,omitempty"`
	OutputSchema Object       `json:"output_schema,omitempty"`
}

// Edge routes one outcome of a node to the next node (or End).
type Edge struct {
	From    string `json:"from"`
	Outcome string `json:"outcome"`
	To      string `json:"to"`
}

// Foreach modes and item error actions.
const (
	ModeSerial     = "serial"
	ModeConcurrent = "concurrent"

	ItemFail    = "fail"
	ItemSkip    = "skip"
	ItemCollect = "collect"

	OutcomeLoop                = "loop"
	OutcomeDone                = "done"
	OutcomeCompletedWithErrors = "completed_with_errors"
	OutcomeTrue                = "true"
	OutcomeFalse               = "false"
	OutcomeSubmitted           = "submitted"
	OutcomeInterrupt           = "interrupt"
)

// ItemErrorPolicy says what a failing foreach item does to the loop.
type ItemErrorPolicy struct {
	Action    string     `json:"action,omitempty"` // fail (default) | skip | collect
	CollectTo *StatePath `json:"collect_to,omitempty"`
}

// action is the policy's action with its default.
func (p *ItemErrorPolicy) action() string {
	if p == nil || p.Action == "" {
		return ItemFail
	}
	return p.Action
}

// UnmarshalJSON accepts the object form and the bare action string.
func (p *ItemErrorPolicy) UnmarshalJSON(data []byte) error {
	var action string
	if err := json.Unmarshal(data, &action); err == nil {
		*p = ItemErrorPolicy{Action: action}
		return nil
	}
	type plain ItemErrorPolicy
	var v plain
	if err := strictDecode(data, &v); err != nil {
		return err
	}
	*p = ItemErrorPolicy(v)
	return nil
}

// ConcurrentPolicy bounds a concurrent foreach: at most MaxActive items
// running, and at most MaxOutstanding admitted and not yet finished (an
// item paused at an interrupt still counts). Finished items wait for the
// loop's barrier without holding a slot. MaxOutstanding below MaxActive
// is raised to it.
type ConcurrentPolicy struct {
	MaxActive      int    `json:"max_active,omitempty"`
	MaxOutstanding int    `json:"max_outstanding,omitempty"`
	Interrupt      string `json:"interrupt,omitempty"`
}

// Defaults of a concurrent foreach.
const (
	DefaultMaxActive      = 4
	DefaultMaxOutstanding = 20
)

func (p *ConcurrentPolicy) limits() (active, outstanding int) {
	active, outstanding = DefaultMaxActive, DefaultMaxOutstanding
	if p != nil && p.MaxActive > 0 {
		active = p.MaxActive
	}
	if p != nil && p.MaxOutstanding > 0 {
		outstanding = p.MaxOutstanding
	}
	return active, max(active, outstanding)
}

// WorkflowRef names a child workflow: a saved artifact by id and version,
// or a local name.
type WorkflowRef struct {
	ArtifactID *string `json:"artifact_id,omitempty"`
	Version    *int    `json:"version,omitempty"`
	Name       *string `json:"name,omitempty"`
}

// Key is the ref's identity, "artifact@version" or "name".
func (r WorkflowRef) Key() string {
	if r.ArtifactID != nil {
		v := 0
		if r.Version != nil {
			v = *r.Version
		}
		return *r.ArtifactID + "@" + strconv.Itoa(v)
	}
	if r.Name != nil {
		return *r.Name
	}
	return ""
}

// Diagnostic is one validation finding on a draft or plan.
type Diagnostic struct {
	Code       string  `json:"code"`
	Path       string  `json:"path"`
	Message    string  `json:"message"`
	StepID     *string `json:"step_id,omitempty"`
	RepairHint *string `json:"repair_hint,omitempty"`
	// Severity is "warning" for findings that do not block; empty means
	// an error.
	Severity string `json:"severity,omitempty"`
}

// IsError reports whether d blocks compiling and running.
func (d Diagnostic) IsError() bool { return d.Severity != SeverityWarning }

// SeverityWarning marks a diagnostic that does not block.
const SeverityWarning = "warning"

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
	// Extensions to the reference's trace entry.
	Attempts   int   `json:"attempts,omitempty"`
	Generation int64 `json:"session_generation,omitempty"`
	// Node and Epoch say, in a cluster, which node owned the session
	// and under which lease epoch (docs/cluster.md).
	Node  string `json:"session_node,omitempty"`
	Epoch int64  `json:"lease_epoch,omitempty"`
	// Error is why the step's call failed when it routed a failure
	// outcome: the text of a tool's error result (isError) or of a lost
	// session, bounded by catalog.MaxReasonBytes.
	Error string `json:"error,omitempty"`
	// Upstream are the requests the server sent during the step's call
	// (elicitation, sampling), each with its answer.
	Upstream []Object `json:"upstream_requests,omitempty"`
	// TaskID is the upstream MCP task the step's call ran as.
	TaskID string `json:"task_id,omitempty"`
	// Content are the typed MCP content blocks of a tool's result that
	// its structured output (Output) does not hold.
	Content []any `json:"content,omitempty"`
	// Replayed says that the step was not executed by this run: a fork
	// (Replay) took its result from the trace of the run it forked.
	Replayed bool `json:"replayed,omitempty"`
}
