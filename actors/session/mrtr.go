package session

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/metrics"
)

// Multi round-trip requests (MCP 2026-07-28, SEP-2322). A server of the
// stateless era does not send elicitation/create or
// sampling/createMessage during a call: it answers the tools/call with an
// input_required result (input requests by id, and an opaque
// requestState), and the client calls the tool again with its answers
// (inputResponses, by the same ids) and the requestState. go-sdk's client
// middleware would do that inside CallTool, waiting on the client's
// handlers; mcpflow turns it off (newClient) and hands the result to the
// caller instead: the call is over, nothing waits upstream, and the run
// keeps the input requests and the requestState in its checkpoint, so
// that its answer, after a restart or on another node, is the same call
// made again with CallTool.Input.

// UpstreamRoots is the kind of an input request for the client's roots,
// which the session answers itself with its client block's roots.
const UpstreamRoots = "roots"

// OutcomeInputRequired is the Outcome of a ToolResult whose server
// answered input_required: its Input holds the requests.
const OutcomeInputRequired = "input_required"

// InputRequired is a server's input_required answer to a tools/call.
type InputRequired struct {
	// RequestState is the server's opaque state, echoed on the retry.
	RequestState string `json:"request_state,omitempty"`
	// Requests are the server's input requests, ordered by id. None at
	// all is a server that sheds load: the call is to be made again.
	Requests []InputRequest `json:"requests"`
}

// InputRequest is one input request of an InputRequired.
type InputRequest struct {
	// ID is the server's id for it, the key of its answer.
	ID string `json:"id"`
	// Kind is UpstreamElicitation, UpstreamSampling or UpstreamRoots.
	Kind string `json:"kind"`
	// Params are the request's params (ElicitParams,
	// CreateMessageParams, ListRootsParams) as JSON.
	Params json.RawMessage `json:"params,omitempty"`
	// Answer is set for a request the session answered itself (roots):
	// the response to send back. The caller answers the others.
	Answer json.RawMessage `json:"answer,omitempty"`
}

// InputRetry makes a CallTool the retry of a call a server answered
// input_required: Responses are the answers by request id (an
// ElicitResult, a CreateMessageResult, a ListRootsResult, as JSON), and
// RequestState the state that answer carried.
type InputRetry struct {
	RequestState string                     `json:"request_state,omitempty"`
	Responses    map[string]json.RawMessage `json:"responses"`
}

// inputPolicy is what a session answers of a server's input requests:
// its client block's policies, and its roots.
type inputPolicy struct {
	conn    string
	block   *config.Client
	metrics *metrics.Metrics
}

func (a *Actor) inputPolicy() inputPolicy {
	return inputPolicy{conn: a.conn.ID, block: a.conn.Client, metrics: a.opts.Metrics}
}

// needsInput reports whether res is an input_required result.
func needsInput(res *mcp.CallToolResult) bool {
	return res.NeedsInput() || res.InputRequests != nil
}

// inputRequired is res, an input_required result, as the call's answer:
// roots requests answered, the others left for the caller. A request the
// client block refuses (as the legacy era's refuser does) fails the call,
// counted: the stateless era has no error answer to one input request.
func (p inputPolicy) inputRequired(res *mcp.CallToolResult) (*InputRequired, error) {
	out := &InputRequired{RequestState: res.RequestState, Requests: []InputRequest{}}
	for _, id := range slices.Sorted(maps.Keys(res.InputRequests)) {
		ir := res.InputRequests[id]
		params, err := json.Marshal(ir)
		if err != nil {
			return nil, fmt.Errorf("encode input request %q: %w", id, err)
		}
		r := InputRequest{ID: id, Params: params}
		switch ir.(type) {
		case *mcp.ElicitParams:
			r.Kind = UpstreamElicitation
		case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
			r.Kind = UpstreamSampling
		case *mcp.ListRootsParams:
			r.Kind = UpstreamRoots
			if r.Answer, err = p.roots(); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("the server asked for input of a kind mcpflow does not answer (%T)", ir)
		}
		if r.Kind != UpstreamRoots {
			policy := p.block.ElicitationPolicy()
			if r.Kind == UpstreamSampling {
				policy = p.block.SamplingPolicy()
			}
			if policy == config.PolicyRefuse {
				p.metrics.UpstreamRequest(p.conn, r.Kind, metrics.UpstreamRefusedPolicy)
				return nil, fmt.Errorf("the server answered input_required with a %s request (id %q): %s", r.Kind, id, refusal(r.Kind, p.conn))
			}
			p.metrics.UpstreamRequest(p.conn, r.Kind, metrics.UpstreamInterrupted)
		}
		out.Requests = append(out.Requests, r)
	}
	return out, nil
}

// roots is the answer to a roots request: the client block's roots.
func (p inputPolicy) roots() (json.RawMessage, error) {
	roots := []*mcp.Root{}
	for _, r := range p.block.RootList() {
		roots = append(roots, &mcp.Root{URI: r.URI, Name: r.Name})
	}
	data, err := json.Marshal(&mcp.ListRootsResult{Roots: roots})
	if err != nil {
		return nil, fmt.Errorf("encode the roots: %w", err)
	}
	return data, nil
}

// setRetry makes params the retry of in.
func setRetry(params *mcp.CallToolParams, in *InputRetry) error {
	if in == nil {
		return nil
	}
	data, err := json.Marshal(in.Responses)
	if err != nil {
		return fmt.Errorf("encode the input responses: %w", err)
	}
	var responses mcp.InputResponseMap
	if err := json.Unmarshal(data, &responses); err != nil {
		return fmt.Errorf("the input responses are not MCP results: %w", err)
	}
	params.InputResponses, params.RequestState = responses, in.RequestState
	return nil
}
