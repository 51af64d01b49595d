package fakes

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// GreetingURI is the one resource of the test server, whose text is
// Greeting.
const (
	GreetingURI = "fake://greeting"
	Greeting    = "hello from the fake server"
)

// NewServer returns an MCP test server with its own state. Connect each
// instance once (InMemory does) and the state is session-local. Its tools:
//
//   - counter {} → {count}: increments and returns the session's counter.
//   - echo {message} → {message}.
//   - sleep {ms} → {slept_ms}: waits ms milliseconds; a cancelled call ends at
//     once with ctx.Err().
//   - idle {ms} → {slept_ms}: sleep, annotated idempotentHint (safe to
//     repeat).
//   - overlap {ms} → {in_flight}: waits ms milliseconds and reports how many
//     overlap calls of this server were running when it started (itself
//     included), so a test can see calls run at once.
//   - fail {message?} → a tool error (CallToolResult.IsError).
//   - crash {}: the upstream dies mid-call: the connection is cut, so the
//     call fails and ClientSession.Wait returns. Only InMemory can cut its
//     connections; served otherwise, crash just reports a tool error.
func NewServer() *mcp.Server { return newServer(nil) }

// newServer is NewServer with opts.
func newServer(opts *mcp.ServerOptions) *mcp.Server {
	f := &fakeServer{}
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpflow-fake", Version: "v0"}, opts)
	mcp.AddTool(s, &mcp.Tool{Name: "counter", Description: "Increment and return the session counter."}, f.counter)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Return the message unchanged.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, echo)
	mcp.AddTool(s, &mcp.Tool{Name: "sleep", Description: "Wait ms milliseconds, or until the call is cancelled."}, sleep)
	mcp.AddTool(s, &mcp.Tool{Name: "idle", Description: "Wait ms milliseconds; safe to repeat.", Annotations: &mcp.ToolAnnotations{IdempotentHint: true}}, sleep)
	mcp.AddTool(s, &mcp.Tool{Name: "overlap", Description: "Wait ms milliseconds; report the overlap calls running at the start."}, f.overlap)
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fail with a tool error."}, fail)
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Kill the connection mid-call, as a dying upstream would."}, crash)
	s.AddResource(&mcp.Resource{URI: GreetingURI, Name: "greeting", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: Greeting}}}, nil
		})
	return s
}

type fakeServer struct {
	mu       sync.Mutex
	count    int
	inFlight int
}

type overlapOut struct {
	InFlight int `json:"in_flight"`
}

func (f *fakeServer) overlap(ctx context.Context, req *mcp.CallToolRequest, in sleepIn) (*mcp.CallToolResult, overlapOut, error) {
	f.mu.Lock()
	f.inFlight++
	seen := f.inFlight
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()
	if _, _, err := sleep(ctx, req, in); err != nil {
		return nil, overlapOut{}, err
	}
	return nil, overlapOut{InFlight: seen}, nil
}

type countOut struct {
	Count int `json:"count"`
}

func (f *fakeServer) counter(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, countOut, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.count++
	return nil, countOut{Count: f.count}, nil
}

type message struct {
	Message string `json:"message"`
}

func echo(_ context.Context, _ *mcp.CallToolRequest, in message) (*mcp.CallToolResult, message, error) {
	return nil, in, nil
}

type sleepIn struct {
	MS int `json:"ms" jsonschema:"milliseconds to wait"`
}

type sleepOut struct {
	SleptMS int `json:"slept_ms"`
}

func sleep(ctx context.Context, _ *mcp.CallToolRequest, in sleepIn) (*mcp.CallToolResult, sleepOut, error) {
	timer := time.NewTimer(time.Duration(in.MS) * time.Millisecond)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil, sleepOut{SleptMS: in.MS}, nil
	case <-ctx.Done():
		return nil, sleepOut{}, ctx.Err()
	}
}

type failIn struct {
	Message string `json:"message,omitempty" jsonschema:"the error text (default \"fake failure\")"`
}

func fail(_ context.Context, _ *mcp.CallToolRequest, in failIn) (*mcp.CallToolResult, any, error) {
	if in.Message == "" {
		in.Message = "fake failure"
	}
	return nil, nil, errors.New(in.Message)
}

// crash cuts the connection it is called on. It cannot close the session
// gracefully instead: ServerSession.Close waits for this very handler.
func crash(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	cut, ok := ctx.Value(cutKey{}).(func())
	if !ok {
		return nil, nil, errors.New("crash: this connection cannot be cut; serve the server with fakes.InMemory")
	}
	cut() // the response can no longer be written
	return nil, nil, errors.New("crashed")
}

// cutKey carries, in the context given to Server.Connect, a func that cuts
// the server's connection at once. Handler contexts inherit its values.
type cutKey struct{}

// WithPrompt gives s the prompt greet {who}, which renders one user
// message: "Say hello to <who>.".
func WithPrompt(s *mcp.Server) *mcp.Server {
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greet someone.", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "A greeting.", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Say hello to " + req.Params.Arguments["who"] + "."}},
			}}, nil
		})
	return s
}

// Completions are what NewCompletingServer completes greet's who from.
var Completions = []string{"Ada", "Alan", "Grace"}

// NewCompletingServer is WithPrompt(NewServer()) declaring the
// completions capability: completion/complete of the argument who of
// ref/prompt greet answers the Completions that start with the value
// typed (total, their count); any other argument none.
func NewCompletingServer() *mcp.Server {
	return WithPrompt(newServer(&mcp.ServerOptions{CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		values := []string{}
		if p := req.Params; p.Ref != nil && p.Ref.Type == "ref/prompt" && p.Ref.Name == "greet" && p.Argument.Name == "who" {
			for _, v := range Completions {
				if strings.HasPrefix(v, p.Argument.Value) {
					values = append(values, v)
				}
			}
		}
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
	}}))
}

// WithAddTool gives s the tool add_tool {name} → {added}, which registers
// a new tool called name on s at runtime: an echo ({message} →
// {message}). Adding a tool makes s send notifications/tools/list_changed
// to its sessions, as a server whose tools change while it runs does.
// Adding an existing name replaces that tool. It returns s.
func WithAddTool(s *mcp.Server) *mcp.Server {
	mcp.AddTool(s, &mcp.Tool{Name: "add_tool", Description: "Register a new echo tool called name on this server."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addToolIn) (*mcp.CallToolResult, addToolOut, error) {
			if in.Name == "" {
				return nil, addToolOut{}, errors.New("add_tool: name is required")
			}
			mcp.AddTool(s, &mcp.Tool{Name: in.Name, Description: "Return the message unchanged; added at runtime."}, echo)
			return nil, addToolOut{Added: in.Name}, nil
		})
	return s
}

type addToolIn struct {
	Name string `json:"name" jsonschema:"the name of the tool to add"`
}

type addToolOut struct {
	Added string `json:"added"`
}

// WithMetaEcho gives s the tool meta {} → {"meta": {...}}, which returns
// the _meta of its own request ({} when it had none), so that a test sees
// what a client sent alongside the call, such as a W3C traceparent. It
// returns s.
func WithMetaEcho(s *mcp.Server) *mcp.Server {
	mcp.AddTool(s, &mcp.Tool{Name: "meta", Description: "Return the _meta of this request.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, metaOut, error) {
			meta := req.Params.GetMeta()
			if meta == nil {
				meta = map[string]any{}
			}
			return nil, metaOut{Meta: meta}, nil
		})
	return s
}

type metaOut struct {
	Meta map[string]any `json:"meta"`
}

// NewHTTPHandler serves MCP over streamable HTTP, statefully: each MCP
// session (each initialize) gets its own server from newServer (NewServer
// if nil), so state such as the counter is per session, as it is per
// process over stdio.
func NewHTTPHandler(newServer func() *mcp.Server) http.Handler {
	if newServer == nil {
		newServer = NewServer
	}
	// go-sdk asks for a server on every request, but uses the one it gets
	// for a new session only when the request has no session id; for the
	// others it only reads the protocol versions, which any server has.
	var once sync.Once
	var shared *mcp.Server
	return mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if r.Header.Get("Mcp-Session-Id") == "" {
			return newServer()
		}
		once.Do(func() { shared = newServer() })
		return shared
	}, nil)
}
