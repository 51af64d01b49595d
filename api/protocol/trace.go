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
	// outcome (a tool's error result, a lost session), bounded; Content
	// are the typed content blocks of a tool's result that its
	// structured output does not hold. Both extensions.
	Error   string `json:"error,omitempty"`
	Content []any  `json:"content,omitempty"`
}
