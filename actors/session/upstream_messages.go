package session

import (
	"encoding/json"
	"time"

	"github.com/mcpflow/mcpflow/actors/config"
)

// Kinds of the requests an upstream server sends mcpflow as its client,
// the Kind of an UpstreamRequest; they are the run interrupt kinds too.
const (
	UpstreamElicitation = "elicitation"
	UpstreamSampling    = "sampling"
)

// SetClient changes what a session actor answers its server as an MCP
// client (its connection's client block changed). The policies and the log
// level apply from the next session; a change of roots is told to the open
// session at once (notifications/roots/list_changed), which keeps it.
type SetClient struct {
	Client *config.Client
}

// UpstreamRequest is a request the server sent during a call
// (elicitation/create, sampling/createMessage), handed to whoever made the
// call: sent to the call's Reply address, with the call's correlation id.
// The server waits for its answer, an AnswerUpstream, as long as the call
// is in flight.
type UpstreamRequest struct {
	CorrelationID uint64
	// RequestID names the request among the session actor's others; the
	// AnswerUpstream carries it back.
	RequestID string
	// Connection and Scope name the session the call runs on, where the
	// answer goes (through the supervisor, as CancelCalls does).
	Connection string
	Scope      string
	// Kind is UpstreamElicitation or UpstreamSampling; Params are the
	// request's params as the server sent them (a JSON object).
	Kind   string
	Params json.RawMessage
	// Policy is what the source's client block says of Kind:
	// config.PolicyInterrupt, or config.PolicyClient for a sampling
	// request to forward to the MCP client that started the run.
	Policy string
	// Generation is the session's.
	Generation int64
	// Deadline is the call's: the request is moot once it passes.
	Deadline time.Time
}

// Correlation implements reply.Answer.
func (m UpstreamRequest) Correlation() uint64 { return m.CorrelationID }

// AnswerUpstream answers an UpstreamRequest: Result is the JSON result
// sent to the server (an ElicitResult, a CreateMessageResult), or Error
// the text of the JSON-RPC error it gets instead. It is routed through the
// supervisor to the session actor of Connection and Scope, as CancelCalls
// is; an answer to a request that is gone (its call ended) is dropped.
type AnswerUpstream struct {
	Connection string
	Scope      string
	RequestID  string
	Result     json.RawMessage
	Error      string
	// Hops counts the nodes that passed the message on, as CallTool's.
	Hops int
}

// UpstreamWithdrawn tells whoever was handed an UpstreamRequest that it
// needs no answer any more: the server cancelled it, or its session or
// call ended first (Reason says which).
type UpstreamWithdrawn struct {
	CorrelationID uint64
	RequestID     string
	Reason        string
}

// Correlation implements reply.Answer.
func (m UpstreamWithdrawn) Correlation() uint64 { return m.CorrelationID }
