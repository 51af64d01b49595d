package fakes

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// WithAsk gives s the tool ask {question, rounds?} → {action, answer,
// state}, which asks its client for input through multi round-trip
// requests (MCP 2026-07-28, SEP-2322) rounds times (1 when unset): each
// round it answers input_required with one elicitation request, id
// "confirm", whose message is the question and whose requested schema
// is {name: string} (required), and the requestState "round-N". The
// retry that answers the last round, or that declines or cancels, gets
// the result: the answer's action, its content ({} unless accepted), and the
// requestState the retry carried. A retry with a requestState this
// server did not give, or without the answer, is a tool error.
//
// To a client of the legacy era, go-sdk's server sends the same request
// as elicitation/create during the call and calls the tool again itself.
func WithAsk(s *mcp.Server) *mcp.Server {
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Ask the client a question (elicitation) rounds times, then answer with what it said."}, ask)
	return s
}

// NewStatelessHandler serves newServer's server (NewServer if nil) over
// streamable HTTP without sessions, as a server of the stateless era
// does: a client that asks for 2026-07-28 speaks it, and every request
// meets the same server.
func NewStatelessHandler(newServer func() *mcp.Server) http.Handler {
	if newServer == nil {
		newServer = NewServer
	}
	s := newServer()
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
}

type roundsIn struct {
	Question string `json:"question" jsonschema:"what to ask"`
	Rounds   int    `json:"rounds,omitempty" jsonschema:"how many times to ask (1 when unset)"`
}

type roundsOut struct {
	Action string         `json:"action"`
	Answer map[string]any `json:"answer"`
	State  string         `json:"state"`
}

// askSchema is what ask requests: a name.
var askSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"name": map[string]any{"type": "string"}},
	"required":   []any{"name"},
}

func ask(_ context.Context, req *mcp.CallToolRequest, in roundsIn) (*mcp.CallToolResult, *roundsOut, error) {
	rounds := max(in.Rounds, 1)
	round := 0 // the rounds answered so far
	if state := req.Params.RequestState; state != "" {
		done, ok := strings.CutPrefix(state, "round-")
		n, err := strconv.Atoi(done)
		if !ok || err != nil || n < 1 || n > rounds {
			return nil, nil, fmt.Errorf("ask: requestState %q is not one this server gave", state)
		}
		resp, ok := req.Params.InputResponses["confirm"].(*mcp.ElicitResult)
		if !ok {
			return nil, nil, fmt.Errorf("ask: the retry of round %d has no answer to input request \"confirm\"", n)
		}
		if resp.Action != "accept" || n == rounds {
			answer := resp.Content
			if answer == nil {
				answer = map[string]any{}
			}
			return nil, &roundsOut{Action: resp.Action, Answer: answer, State: state}, nil
		}
		round = n
	}
	// No output: a result that asks for input holds nothing else.
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Message: in.Question, RequestedSchema: askSchema}},
		RequestState:  "round-" + strconv.Itoa(round+1),
	}, nil, nil
}
