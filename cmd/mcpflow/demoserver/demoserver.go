// Package demoserver is the small real MCP server that `mcpflow demo-server`
// runs over stdio, with session-local tools, so a newcomer can run a workflow
// at once.
package demoserver

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// version is the version the server reports in its Implementation.
const version = "0.1.0"

// Run serves a fresh demo server over stdin/stdout until stdin reaches EOF
// (it then returns nil) or ctx is done (it then returns ctx.Err()).
func Run(ctx context.Context) error {
	return New().Run(ctx, &mcp.StdioTransport{})
}

// New returns a demo server with its own state. Over stdio one process serves
// one session, so the state is session-local; connect each instance once.
func New() *mcp.Server {
	d := &demo{kv: make(map[string]string)}
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpflow-demo", Version: version}, nil)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "counter",
		Description: "Increment this session's counter and return its new value (1 on the first call).",
	}, d.counter)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "kv_set",
		Description: "Store a string value under a key in this session's key-value store.",
	}, d.kvSet)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "kv_get",
		Description: "Read the value stored under a key in this session's key-value store; found is false if the key was never set.",
	}, d.kvGet)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "echo",
		Description: "Return the message unchanged.",
	}, echo)
	return s
}

// demo is the state of one server instance. The SDK handles calls
// concurrently, so mu guards every field.
type demo struct {
	mu    sync.Mutex
	count int
	kv    map[string]string
}

// counterOut is the result of the counter tool.
type counterOut struct {
	Count int `json:"count" jsonschema:"the counter value after this call"`
}

func (d *demo) counter(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, counterOut, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.count++
	return nil, counterOut{Count: d.count}, nil
}

// kvSetIn is the input of the kv_set tool.
type kvSetIn struct {
	Key   string `json:"key" jsonschema:"the key to set"`
	Value string `json:"value,omitempty" jsonschema:"the value to store (empty if omitted)"`
}

// kvSetOut is the result of the kv_set tool.
type kvSetOut struct {
	Key   string `json:"key" jsonschema:"the key that was set"`
	Value string `json:"value" jsonschema:"the value now stored"`
}

func (d *demo) kvSet(_ context.Context, _ *mcp.CallToolRequest, in kvSetIn) (*mcp.CallToolResult, kvSetOut, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.kv[in.Key] = in.Value
	return nil, kvSetOut{Key: in.Key, Value: in.Value}, nil
}

// kvGetIn is the input of the kv_get tool.
type kvGetIn struct {
	Key string `json:"key" jsonschema:"the key to read"`
}

// kvGetOut is the result of the kv_get tool.
type kvGetOut struct {
	Key   string `json:"key" jsonschema:"the key that was read"`
	Value string `json:"value" jsonschema:"the stored value (empty if not found)"`
	Found bool   `json:"found" jsonschema:"whether the key was set in this session"`
}

func (d *demo) kvGet(_ context.Context, _ *mcp.CallToolRequest, in kvGetIn) (*mcp.CallToolResult, kvGetOut, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	value, found := d.kv[in.Key]
	return nil, kvGetOut{Key: in.Key, Value: value, Found: found}, nil
}

// echoArgs is both the input and the result of the echo tool.
type echoArgs struct {
	Message string `json:"message" jsonschema:"the message to echo"`
}

func echo(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, echoArgs, error) {
	return nil, in, nil
}
