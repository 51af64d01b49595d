package session

import (
	"time"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/reply"
)

// CallTool asks the session actor of Connection to call one tool.
type CallTool struct {
	CorrelationID uint64
	Connection    string
	Tool          string
	Arguments     map[string]any
	// Deadline bounds the call, including any wait for the session to open.
	Deadline time.Time
	// Owner names who made the call (a run id), so that CancelCalls can
	// withdraw it; "" for none.
	Owner string
	Reply reply.To[ToolResult]
}

// ReadResource asks the session actor of Connection to read one resource.
// It is answered with a ToolResult whose Output is the MCP
// ReadResourceResult ({"contents": [...]}).
type ReadResource struct {
	CorrelationID uint64
	Connection    string
	URI           string
	Deadline      time.Time
	Owner         string
	Reply         reply.To[ToolResult]
}

// CancelCalls withdraws every call (and resource read) Owner made on
// Connection: queued calls
// fail with ErrCancelled at once; calls in flight have their context
// cancelled, which sends notifications/cancelled upstream, and fail when
// the upstream call returns.
type CancelCalls struct {
	Connection string
	Owner      string
}

// ToolResult answers a CallTool. Err is set when the call did not produce a
// tool result (session down, deadline, protocol error); a tool that reports
// an error is Outcome "error" with a nil Err.
type ToolResult struct {
	CorrelationID uint64
	Outcome       string
	Output        map[string]any
	Err           error
}

// ListCatalog asks the session actor for a fresh catalog snapshot.
type ListCatalog struct {
	Deadline time.Time
	Reply    reply.To[CatalogListed]
}

// CatalogListed answers a ListCatalog, and is also sent unasked to the
// parent when the server announces that its tools changed.
type CatalogListed struct {
	Snapshot catalog.Snapshot
	Err      error
}

// State is the life-cycle state of a session actor's upstream session.
type State string

// Session states.
const (
	StateIdle       State = "idle"       // no session yet, or closed; opens on next use
	StateConnecting State = "connecting" // connect and initialize in flight
	StateOpen       State = "open"       // session ready
	StateBackoff    State = "backoff"    // last connect failed; calls fail fast until retry
)

// Status is what a session actor reports to its parent whenever its state
// changes.
type Status struct {
	Connection     string
	State          State
	LastError      string
	SessionsOpened int
	CallsInFlight  int
	ChangedAt      time.Time
}
