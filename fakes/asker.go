package fakes

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Asker gives MCP test servers tools that ask their client during the
// call, as server-everything's trigger-elicitation-request and
// trigger-sampling-request do, and records what each request got back.
// One Asker may serve many servers (every session of an InMemory): it
// records them all. Safe for concurrent use.
//
// Its tools:
//
//   - ask {message} → {action, content}: sends elicitation/create (form
//     mode, requestedSchema {name: string, required}) and returns the
//     client's answer.
//   - sample {prompt} → {role, model, text}: sends sampling/createMessage
//     with the prompt as one user message, whether or not the client
//     declared sampling, and returns the model's message.
type Asker struct {
	mu      sync.Mutex
	got     []string
	changed chan struct{} // closed and replaced when got grows
	// last is the session of the last call of an asking tool.
	last *mcp.ServerSession
}

// What Asker records of a request, besides "accept <content>" for an
// accepted elicitation and "sampled <model>: <text>" for a sampling
// answer: the elicitation's action, "error: <message>" for a JSON-RPC
// error, and AskCancelled when the request ended with its call (the
// client cancelled the call, so the server's request was cancelled).
const (
	AskDecline   = "decline"
	AskCancel    = "cancel"
	AskCancelled = "cancelled"
)

// AskSchema is the requestedSchema of the ask tool's elicitation.
var AskSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"name": map[string]any{"type": "string"}},
	"required":   []any{"name"},
}

// NewAsker returns an Asker that recorded nothing yet.
func NewAsker() *Asker { return &Asker{changed: make(chan struct{})} }

// Serve adds the asking tools to s and returns s; use it as
// NewInMemory(func() *mcp.Server { return k.Serve(NewServer()) }).
func (k *Asker) Serve(s *mcp.Server) *mcp.Server {
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Ask the client for a name (elicitation) and return its answer."}, k.ask)
	mcp.AddTool(s, &mcp.Tool{Name: "sample", Description: "Ask the client's model (sampling) and return its message."}, k.sample)
	return s
}

// Got is what the requests got back, in order.
func (k *Asker) Got() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.got...)
}

// WaitForGot waits until n requests got an answer or ended, and reports
// whether they did within the duration given.
func (k *Asker) WaitForGot(n int, within time.Duration) bool {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		k.mu.Lock()
		have, changed := len(k.got), k.changed
		k.mu.Unlock()
		if have >= n {
			return true
		}
		select {
		case <-changed:
		case <-deadline.C:
			return false
		}
	}
}

// AskOutsideACall sends elicitation/create on the session of the last
// call of an asking tool, after that call ended, as a server that asks
// on its own would; it records what the request got and returns it.
func (k *Asker) AskOutsideACall(ctx context.Context) string {
	k.mu.Lock()
	ss := k.last
	k.mu.Unlock()
	if ss == nil {
		return "error: no session yet"
	}
	res, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: "unprompted", RequestedSchema: AskSchema})
	got := ""
	if err == nil {
		got = res.Action
	}
	return k.record(ctx, got, err)
}

func (k *Asker) saw(ss *mcp.ServerSession) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.last = ss
}

// record notes what a request got, and returns it as noted.
func (k *Asker) record(ctx context.Context, answer string, err error) string {
	switch {
	case err != nil && ctx.Err() != nil:
		answer = AskCancelled
	case err != nil:
		answer = "error: " + err.Error()
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.got = append(k.got, answer)
	close(k.changed)
	k.changed = make(chan struct{})
	return answer
}

type askOut struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content"` // {} unless accepted
}

func (k *Asker) ask(ctx context.Context, req *mcp.CallToolRequest, in message) (*mcp.CallToolResult, askOut, error) {
	k.saw(req.Session)
	res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: in.Message, RequestedSchema: AskSchema})
	if err != nil {
		k.record(ctx, "", err)
		return nil, askOut{}, err
	}
	got := res.Action
	if res.Action == "accept" {
		data, _ := json.Marshal(res.Content)
		got = "accept " + string(data)
	}
	k.record(ctx, got, nil)
	if res.Content == nil {
		res.Content = map[string]any{}
	}
	return nil, askOut{Action: res.Action, Content: res.Content}, nil
}

type sampleIn struct {
	Prompt string `json:"prompt"`
}

type sampleOut struct {
	Role  string `json:"role"`
	Model string `json:"model"`
	Text  string `json:"text"`
}

func (k *Asker) sample(ctx context.Context, req *mcp.CallToolRequest, in sampleIn) (*mcp.CallToolResult, sampleOut, error) {
	k.saw(req.Session)
	res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
		MaxTokens: 100,
		Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}},
	})
	if err != nil {
		k.record(ctx, "", err)
		return nil, sampleOut{}, err
	}
	var text string
	if t, ok := res.Content.(*mcp.TextContent); ok {
		text = t.Text
	}
	k.record(ctx, "sampled "+res.Model+": "+text, nil)
	return nil, sampleOut{Role: string(res.Role), Model: res.Model, Text: text}, nil
}
