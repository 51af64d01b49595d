package protocol

// TraceEntry is one executed step of a run, as workflow.runs.inspect and
// workflow.runs.trace answer it.
type TraceEntry struct {
	FrameID       string `json:"frame_id"`
	NodeID        string `json:"node_id"`
	StepType      string `json:"step_type"`
	ResolvedInput Object `json:"resolved_input"`
	Outcome       string `json:"outcome"`
	NextNodeID    string `json:"next_node_id"`
	Output        Object `json:"output"`
	StateChanges  Object `json:"state_changes"`
	// Extensions to the reference's trace entry: attempts, the session's
	// generation and, in a cluster, the node that owned the session and
	// its lease epoch (docs/cluster.md).
	Attempts   int    `json:"attempts,omitempty"`
	Generation int64  `json:"session_generation,omitempty"`
	Node       string `json:"session_node,omitempty"`
	Epoch      int64  `json:"lease_epoch,omitempty"`
	// Error is why the step's call failed when it routed a failure
	// outcome (a tool's error result, a lost session), bounded.
	Error string `json:"error,omitempty"`
	// Upstream are the requests the server sent during the step's call
	// (elicitation, sampling), each with its answer.
	Upstream []Object `json:"upstream_requests,omitempty"`
	// TaskID is the upstream MCP task the step's call ran as.
	TaskID string `json:"task_id,omitempty"`
	// Content are the typed content blocks of a tool's result that its
	// structured output does not hold. The fields from Attempts on are
	// extensions, in workflow.TraceEntry's order (api/service converts
	// one to the other).
	Content []any `json:"content,omitempty"`
	// Replayed says that a forked run took the step's result from the
	// trace of its parent run, without executing it (workflow.runs.fork).
	Replayed bool `json:"replayed,omitempty"`
}
