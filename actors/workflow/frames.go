package workflow

// Frame statuses.
const (
	FrameReady       = "ready"       // in the ready queue
	FrameWaiting     = "waiting"     // a call is out for its current node
	FrameBlocked     = "blocked"     // its foreach or subgraph has children running
	FrameInterrupted = "interrupted" // paused at an interrupt node
	FrameDone        = "done"
)

// Run statuses of an execution.
const (
	StatusRunning     = "running"
	StatusCompleted   = "completed"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
	StatusCancelled   = "cancelled"
)

// Snapshot is the whole state of an execution: what a checkpoint stores
// and Restore takes back. It is plain JSON data.
type Snapshot struct {
	Status  string            `json:"status"`
	Outcome string            `json:"outcome,omitempty"`
	Error   string            `json:"error,omitempty"`
	Output  Object            `json:"output,omitempty"`
	Scopes  map[string]*Scope `json:"scopes"`
	Frames  map[string]*Frame `json:"frames"`
	// Ready is the FIFO queue of frames to run.
	Ready []string `json:"ready"`
	// Calls are the calls handed out and not yet completed, by id.
	Calls map[string]Call `json:"calls"`
	// Steps counts the steps executed, for the step budget.
	Steps    int `json:"steps"`
	NextCall int `json:"next_call"`
}

// Scope is one workflow instance: the root workflow, or a subgraph's child.
type Scope struct {
	ID string `json:"id"`
	// Plan is "" for the root plan, else the child's WorkflowRef key.
	Plan  string `json:"plan"`
	Input Object `json:"input"`
	State Object `json:"state"`
	// Caller is the parent frame blocked on this child scope ("" for root).
	Caller string `json:"caller,omitempty"`
	// Outcome is set once the scope ends.
	Outcome string `json:"outcome,omitempty"`
}

// Frame is one line of execution inside a scope: the scope's main frame,
// or one foreach item.
type Frame struct {
	ID     string `json:"id"`
	Scope  string `json:"scope"`
	Node   string `json:"node"`
	Status string `json:"status"`
	// Parent is the frame blocked on this one (a foreach item's loop
	// frame), "" for a scope's main frame.
	Parent  string `json:"parent,omitempty"`
	Lineage string `json:"lineage"`
	// Item is the foreach item this frame runs, when Parent is set.
	Item *ItemContext `json:"item,omitempty"`
	// Prior is the outcome of the frame's previous step, and Edge that
	// step's id.
	Prior string `json:"prior_outcome,omitempty"`
	Edge  string `json:"activated_incoming_edge,omitempty"`
	// PriorError is why that step failed when it routed a failure
	// outcome (a tool's error, session_lost): the step's error, bounded.
	PriorError string `json:"prior_error,omitempty"`
	Attempt    int    `json:"attempt,omitempty"`
	// Overlay buffers the writes of a concurrent foreach item until the
	// loop's barrier commits them in item order.
	Overlay []Write `json:"overlay,omitempty"`
	// Loop is the foreach this frame is blocked in.
	Loop *Loop `json:"loop,omitempty"`
	// Interrupt is the pause this frame waits in; PausedAt is the step
	// count when it paused, so that pauses are resumed in the order they
	// happened.
	Interrupt *Interrupt `json:"interrupt,omitempty"`
	PausedAt  int        `json:"paused_at,omitempty"`
}

// ItemContext is what a foreach item frame sees as context.loop_item,
// context.loop_index and context.<as>.
type ItemContext struct {
	Loop  string `json:"loop"`
	Index int    `json:"index"`
	Value any    `json:"value"`
	As    string `json:"as,omitempty"`
	// Buffered is set for concurrent items, whose writes wait for the
	// barrier.
	Buffered bool `json:"buffered,omitempty"`
}

// Loop is the bookkeeping of one running foreach.
type Loop struct {
	Node   string `json:"node"`
	Items  []any  `json:"items"`
	Next   int    `json:"next"`
	Active int    `json:"active"`
	// Finished item frames of a concurrent loop wait here, by index, for
	// the barrier.
	Finished map[int]*Frame `json:"finished,omitempty"`
	// Errors are the failed items' records.
	Errors []Object `json:"errors,omitempty"`
}

// Write is one buffered state write.
type Write struct {
	Path  []string `json:"path"`
	Value any      `json:"value"`
}

// Interrupt is a pause waiting for a resume; its JSON form is the
// manifest's InterruptPayload.
type Interrupt struct {
	ID            string          `json:"id"`
	FrameID       string          `json:"frame_id"`
	NodeID        string          `json:"node_id"`
	Kind          string          `json:"kind"`
	Payload       Object          `json:"payload"`
	Resumable     bool            `json:"resumable"`
	Route         *InterruptRoute `json:"route"`
	Outcomes      []string        `json:"outcomes"`
	RequestSchema Object          `json:"request_schema"`
	ResumeSchema  Object          `json:"resume_schema"`
	Typed         bool            `json:"typed"`
}

// InterruptRoute locates an interrupt inside a child workflow.
type InterruptRoute struct {
	FrameID       string      `json:"frame_id"`
	NodeID        string      `json:"node_id"`
	ScopeID       string      `json:"scope_id"`
	LineageID     string      `json:"lineage_id"`
	ParentFrameID string      `json:"parent_frame_id"`
	WorkflowRef   WorkflowRef `json:"workflow_ref"`
}

// Call is a step the execution waits on: invoke one capability with a
// resolved input. Its ID is unique within the run.
type Call struct {
	ID         string `json:"id"`
	FrameID    string `json:"frame_id"`
	NodeID     string `json:"node_id"`
	Capability string `json:"capability"`
	Input      Object `json:"input"`
	// Retry is how many more attempts a failure may take; TimeoutSeconds
	// bounds each attempt. Both are the step's own, when it declares them.
	Retry          *int `json:"retry,omitempty"`
	TimeoutSeconds *int `json:"timeout_seconds,omitempty"`
	// Task is the upstream MCP task the call runs as, once its session
	// created it (SetTask): a run recovered after a restart polls it
	// rather than call the tool again.
	Task *Task `json:"task,omitempty"`
	// Asked is what the upstream asked for when it last answered the
	// call input_required (MCP 2026-07-28 multi round-trip requests):
	// the run is interrupted with its requests, and, once each is
	// answered, makes the call again with the answers and the
	// requestState (SetInput).
	Asked *InputRound `json:"input_required,omitempty"`
}

// InputRound is one input_required answer to a call: the upstream's
// input requests and its opaque requestState, echoed on the retry.
type InputRound struct {
	RequestState string         `json:"request_state,omitempty"`
	Requests     []InputRequest `json:"requests"`
	// Round counts the call's input_required answers, from 1.
	Round int `json:"round"`
	// Exchanges are the trace's record of the earlier rounds' requests
	// and their answers.
	Exchanges []Object `json:"exchanges,omitempty"`
}

// InputRequest is one input request of an InputRound, by the
// upstream's id: its kind (elicitation, sampling, roots) and params,
// and once answered the outcome and the answer sent back.
type InputRequest struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Params  Object `json:"params,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	Answer  Object `json:"answer,omitempty"`
}

// AwaitsInput reports whether c waits on an answer to one of its input
// requests: it is not to be sent until then.
func (c Call) AwaitsInput() bool {
	if c.Asked == nil {
		return false
	}
	for _, r := range c.Asked.Requests {
		if r.Answer == nil {
			return true
		}
	}
	return false
}

// Task names an upstream MCP task as the session that created it
// describes it (session.TaskRef): its id, and that session, whose HTTP
// session id is sealed. It holds no secret.
type Task struct {
	ID              string `json:"id"`
	Generation      int64  `json:"session_generation,omitempty"`
	Session         string `json:"session,omitempty"`
	Upstream        string `json:"upstream,omitempty"`
	ProtocolVersion string `json:"protocol_version,omitempty"`
}

// Result is how a call ended: an outcome and output, or an error that
// fails the step.
type Result struct {
	Outcome string
	Output  Object
	Err     error
	// Content are the result's content blocks that Output, a tool's
	// structured content, does not hold (a tool's image beside its
	// structured output): kept in the trace entry.
	Content []any
	// Attempts, Generation, Node and Epoch are recorded in the trace
	// entry: the session's generation, and in a cluster the node that
	// owned it and its lease's epoch.
	Attempts   int
	Generation int64
	Node       string
	Epoch      int64
	// Upstream are the requests the server sent during the call, with
	// their answers, for the trace entry.
	Upstream []Object
	// TaskID is the upstream task the call ran as, "" for none.
	TaskID string
}

// rootScope and rootFrame name the top-level workflow's scope and frame.
const (
	rootScope = "root"
	rootFrame = "root"
)

// context is what "context.*" paths read in frame f.
func (f *Frame) context(parentLineage string) Object {
	ctx := Object{"scope_id": f.Scope, "lineage_id": f.Lineage, "parent_lineage_id": nil, "prior_outcome": nil, "prior_error": nil, "activated_incoming_edge": nil}
	if parentLineage != "" {
		ctx["parent_lineage_id"] = parentLineage
	}
	if f.Prior != "" {
		ctx["prior_outcome"] = f.Prior
	}
	if f.PriorError != "" {
		ctx["prior_error"] = f.PriorError
	}
	if f.Edge != "" {
		ctx["activated_incoming_edge"] = f.Edge
	}
	if it := f.Item; it != nil {
		ctx["loop_item"] = it.Value
		ctx["loop_index"] = float64(it.Index)
		if it.As != "" {
			ctx[it.As] = it.Value
		}
	}
	return ctx
}
