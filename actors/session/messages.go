package session

import (
	"encoding/json"
	"time"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/reply"
)

// CallTool asks the session actor of Connection to call one tool. Reply
// is answered with a ToolResult.
type CallTool struct {
	Connection string
	Tool       string
	// Arguments are the tool's arguments, a JSON object; empty for none.
	Arguments json.RawMessage
	// Deadline bounds the call, including any wait for the session to open.
	Deadline time.Time
	// Owner names who made the call (a run id), so that CancelCalls can
	// withdraw it; "" for none.
	Owner string
	// Scope picks the upstream session on Connection: "" is the one
	// every caller shares; any other value (a deployment's or a run's,
	// see supervisor.DeploymentScope and supervisor.RunScope) a session of
	// its own, which the supervisor opens on first use.
	Scope string
	Reply reply.Address
	// TraceParent and TraceState are the W3C trace context of the step
	// that makes the call ("" for none), sent upstream in the request's
	// _meta (see package tracing).
	TraceParent, TraceState string
	// Hops counts the supervisors of other nodes that passed the message
	// on to the node that owns the connection (a cluster's).
	Hops int
	// Task, when set, makes the call an MCP task (see TaskCall); nil
	// calls the tool as an ordinary request.
	Task *TaskCall
	// Reports asks for what the upstream reports about the call while it
	// is in flight: CallProgress and CallLog messages to Reply's actor,
	// with Reply's correlation (reports.go). Only an actor may ask: a
	// router waits for one answer.
	Reports bool
	// Expect, when set, is the session the call must go to: the one the
	// caller's earlier calls went to. If another has replaced it by the
	// time the call would be sent, the call is not sent and fails with
	// ErrSessionReplaced (its result naming the session now open).
	Expect *Identity
	// ClientSampling says that the run that makes the call was started
	// by an MCP client that declared sampling: a sampling request during
	// the call, on a source whose client block forwards sampling to that
	// client (policy client), is handed on; without it, it is refused.
	ClientSampling bool
	// Input, when set, makes the call the retry of one its server
	// answered input_required (mrtr.go): the same tool and arguments,
	// with the answers to its input requests and its requestState.
	Input *InputRetry `json:",omitempty"`
}

// TaskCall makes a CallTool an MCP task: the tool is called with a task
// param, the session polls the task it creates (tasks/get at the
// server's pollInterval, bounded by MinTaskPoll and MaxTaskPoll) and
// fetches its result (tasks/result), which answers the call as an
// ordinary tool result would. Reply is told the task as soon as it is
// created (TaskCreated), before the answer. The call's deadline, and a
// CancelCalls of its owner, cancel the task upstream (tasks/cancel); the
// session actor's stop does not: the task outlives it.
type TaskCall struct {
	// Tell asks for TaskCreated, to Reply, once the task is created.
	Tell bool `json:",omitempty"`
	// Resume, when set, continues a task an earlier attempt created
	// (after a restart, the run's checkpoint keeps it) instead of calling
	// the tool again.
	Resume *TaskRef
}

// TaskRef names an upstream task: its id, and the session it was
// created on. It is what a run keeps in its checkpoint: it holds no
// secret (the upstream session id is sealed).
type TaskRef struct {
	// ID is the server's taskId.
	ID string `json:"id"`
	// Generation is the generation of the session that created it.
	Generation int64 `json:"session_generation,omitempty"`
	// Session names that session among every session of every mcpflow
	// process (a random key): a task of the session open now is polled
	// on it.
	Session string `json:"session,omitempty"`
	// Upstream is the streamable HTTP session id of that session, sealed
	// (Options.Sealer): a task of an HTTP session that mcpflow no longer
	// holds (it restarted) is polled under it. "" over stdio, whose tasks
	// end with the server's process.
	Upstream string `json:"upstream,omitempty"`
	// ProtocolVersion is the version that session negotiated.
	ProtocolVersion string `json:"protocol_version,omitempty"`
}

// TaskCreated tells a CallTool's Reply the task its call created, before
// the call is answered (a ToolResult, with the same CorrelationID).
type TaskCreated struct {
	CorrelationID uint64
	Task          TaskRef
}

// Correlation implements reply.Answer.
func (m TaskCreated) Correlation() uint64 { return m.CorrelationID }

// ReadResource asks the session actor of Connection to read one resource.
// Reply is answered with a ToolResult whose Output is the MCP
// ReadResourceResult ({"contents": [...]}).
type ReadResource struct {
	Connection string
	URI        string
	Deadline   time.Time
	Owner      string
	// Scope picks the session, as CallTool's does.
	Scope string
	Reply reply.Address
	// TraceParent and TraceState are the trace context, as CallTool's.
	TraceParent, TraceState string
	// Hops counts the nodes that passed the message on, as CallTool's.
	Hops int
	// Reports asks for the read's progress and logs, as CallTool's.
	Reports bool
	// Expect is the session the read must go to, as CallTool's.
	Expect *Identity
}

// GetPrompt asks the session actor of Connection to render one prompt
// (prompts/get). Reply is answered with a ToolResult whose Output is the
// MCP GetPromptResult ({"description", "messages": [...]}).
type GetPrompt struct {
	Connection string
	Name       string
	// Arguments are the prompt's arguments.
	Arguments map[string]string
	Deadline  time.Time
	Owner     string
	// Scope picks the session, as CallTool's does.
	Scope string
	Reply reply.Address
	// Hops counts the nodes that passed the message on, as CallTool's.
	Hops int
	// Expect is the session the request must go to, as CallTool's.
	Expect *Identity
}

// Complete asks the session actor of Connection to complete one argument
// of a prompt or a resource template (completion/complete). Reply is
// answered with a ToolResult whose Output is the MCP CompleteResult
// ({"completion": {"values": [...], "total", "hasMore"}}). An upstream
// that did not declare the completions capability is not asked: the
// answer has no values.
type Complete struct {
	Connection string
	// RefType is "ref/prompt" (RefName the prompt's name) or
	// "ref/resource" (RefURI the resource template's URI template).
	RefType, RefName, RefURI string
	// Argument is the argument's name, Value what the user typed so far.
	Argument, Value string
	// Context are the arguments resolved already.
	Context  map[string]string
	Deadline time.Time
	Owner    string
	// Scope picks the session, as CallTool's does.
	Scope string
	Reply reply.Address
	// Hops counts the nodes that passed the message on, as CallTool's.
	Hops int
	// Expect is the session the request must go to, as CallTool's.
	Expect *Identity
}

// CancelCalls withdraws every call (and resource read) Owner made on
// Connection: queued calls fail with ErrCancelled at once; calls in
// flight have their context cancelled, which sends
// notifications/cancelled upstream, and fail when the upstream call
// returns. A request the server made of such a call (an elicitation, a
// sampling) is answered only after that, so that the answer cannot let
// the tool end the cancelled call as a success.
type CancelCalls struct {
	Connection string
	Owner      string
	// KeepTasks leaves the upstream tasks of the calls running (their
	// owner halts for a shutdown, and a restart polls them again): the
	// calls end, their tasks are not cancelled.
	KeepTasks bool `json:",omitempty"`
	// Scope is the session the calls were made on, as CallTool's.
	Scope string
	// Hops counts the nodes that passed the message on, as CallTool's.
	Hops int
}

// ToolResult answers a CallTool or a ReadResource. Error is set when the
// call did not produce a tool result (session down, deadline, protocol
// error); a tool that reports an error is Outcome "error" with no Error.
// A call in flight when its session died fails with an Error whose Err
// wraps ErrSessionLost (code session_lost).
type ToolResult struct {
	CorrelationID uint64
	Outcome       string
	// Output is the result, a JSON object as encoding/json decodes one
	// (numbers float64, arrays []any): the tool's structured content as
	// go-sdk decoded it, else {"content": [...]}; a read's
	// ReadResourceResult. It is the receiver's: the session keeps no
	// reference to it. It crosses nodes as the object's JSON.
	Output map[string]any
	// Content are the typed MCP content blocks of a tool's result that
	// Output, its structured content, does not hold (see projectOutput);
	// nil when Output holds them all.
	Content []any
	Error   *reply.Failure
	// Generation is the generation of the session the call was sent on
	// (the last one, if it was replayed); 0 when it was never sent.
	Generation int64
	// Instance names the mcpflow process that opened that session on a
	// node alone ("" in a cluster): see Identity.
	Instance string
	// Node and Epoch name the tenure the session was opened under in a
	// cluster: the owning node and its lease's epoch ("" and 0 on one
	// node, or when the call was never sent).
	Node  string
	Epoch int64
	// TaskID is the upstream task the call ran as; "" for an ordinary
	// call.
	TaskID string `json:",omitempty"`
	// Input is set, with Outcome OutcomeInputRequired, when the server
	// answered the call input_required: the call is over, and its retry
	// (CallTool.Input) carries the answers (mrtr.go).
	Input *InputRequired `json:",omitempty"`
}

// Correlation implements reply.Answer.
func (r ToolResult) Correlation() uint64 { return r.CorrelationID }

// SetPolicy changes a session actor's supervision policy (its connection's
// config changed); it applies from the next failure on.
type SetPolicy struct {
	Policy Policy
}

// GetStatus asks a session actor for its live status; Reply is answered
// with a CurrentStatus.
type GetStatus struct {
	Reply reply.Address
}

// CurrentStatus answers GetStatus.
type CurrentStatus struct {
	CorrelationID uint64
	Status        Status
}

// Correlation implements reply.Answer.
func (m CurrentStatus) Correlation() uint64 { return m.CorrelationID }

// ListCatalog asks the session actor for a fresh catalog snapshot. Reply
// is answered with a CatalogListed; with the zero Address, a listing that
// succeeds goes to the session actor's parent, as one nobody asked for.
type ListCatalog struct {
	Deadline time.Time
	Reply    reply.Address
}

// CatalogListed answers a ListCatalog, and is also sent unasked (its
// CorrelationID 0) to the parent when the server announces that its tools
// changed.
type CatalogListed struct {
	CorrelationID uint64
	Snapshot      catalog.Snapshot
	Error         *reply.Failure
}

// Correlation implements reply.Answer.
func (m CatalogListed) Correlation() uint64 { return m.CorrelationID }

// State is the life-cycle state of a session actor's upstream session.
type State string

// Session states.
const (
	StateIdle       State = "idle"        // never used yet; opens on first use
	StateConnecting State = "connecting"  // connect and initialize in flight (or waiting for a connect slot)
	StateOpen       State = "open"        // session ready
	StateBackoff    State = "backoff"     // the session died or a connect failed; reconnects at NextAttemptAt, calls wait
	StateDegraded   State = "degraded"    // too many restarts: calls fail fast until a background probe connects
	StateNeedsLogin State = "needs_login" // the source needs `mcpflow sources login`: calls fail fast until a login replaces the session actor
	StateClosed     State = "closed"      // no session actor: stopped, removed or disabled (reported by the supervisor)
)

// Status is what a session actor reports to its parent whenever its state
// changes, and answers GetStatus with. LastError never holds a secret (see
// Redact).
type Status struct {
	Connection string
	State      State
	// Generation numbers the connection's sessions: each new session
	// increments it, across session actor restarts. It is the generation
	// of the open session, or of the last one.
	Generation int64
	// SessionsOpened counts the sessions opened, across session actor
	// restarts.
	SessionsOpened int
	// Restarts counts reconnects after a session died or a connect
	// failed, and session actor crashes.
	Restarts int
	// CallsInFlight are the calls and reads sent on the session now;
	// CallsQueued wait for the session or a free slot.
	CallsInFlight int
	CallsQueued   int
	// MissedPings counts the keepalive pings of the open session missed
	// in a row (no answer within the ping timeout); the session ends when
	// it reaches the limit (Options.PingFailures). 0 after an answer.
	MissedPings int
	LastError   string
	LastErrorAt time.Time
	// LoginHost is, in state needs_login, the host of the authorization
	// URL the login goes to ("" when discovery could not tell).
	LoginHost string
	// LastSuccessAt is when a session last opened or a call last got an
	// answer from the server.
	LastSuccessAt time.Time
	// NextAttemptAt is when the next reconnect (backoff) or probe
	// (degraded) is due; zero otherwise.
	NextAttemptAt time.Time
	ChangedAt     time.Time
	// RecentRestarts are the restart times within the policy's window,
	// carried to the next incarnation so the intensity limit survives a
	// crash.
	RecentRestarts []time.Time
	// Logs are the newest log messages (notifications/message) the
	// upstream sent that were no call's, oldest first: at most
	// MaxConnectionLogs.
	Logs []ConnectionLog
}

// Incarnation is what a session actor continues from when the supervisor
// replaces a predecessor that crashed (or starts a probe of a connection
// degraded by crashes).
type Incarnation struct {
	// Previous is the predecessor's last status: the generation, the
	// counters and the restart window continue from it.
	Previous Status
	// Restart asks the new actor to reopen the session after a backoff
	// (or to degrade the connection when the restart limit is reached),
	// for Cause.
	Restart bool
	Cause   string
	// Probe starts the actor degraded, probing at once.
	Probe bool
}
