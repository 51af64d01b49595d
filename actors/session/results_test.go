package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

// resultServer is the fake server with tools that answer each kind of
// content block, a structured output with an image beside it, and a long
// JSON-RPC error.
func resultServer() *mcp.Server {
	s := fakes.NewServer()
	add := func(name string, res *mcp.CallToolResult, err error) {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return res, err })
	}
	add("kinds", &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "here"},
		&mcp.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
		&mcp.AudioContent{Data: []byte("RIFF"), MIMEType: "audio/wav"},
		&mcp.ResourceLink{URI: "demo://resource/1", Name: "one", MIMEType: "text/plain"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "demo://resource/2", MIMEType: "text/plain", Text: "two"}},
	}}, nil)
	add("structured", &mcp.CallToolResult{
		Content: []mcp.Content{
			&mcp.TextContent{Text: `{"temperature":33,"conditions":"Cloudy"}`},
			&mcp.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"},
		},
		StructuredContent: map[string]any{"temperature": 33, "conditions": "Cloudy"},
	}, nil)
	add("refuse", nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad arguments: " + strings.Repeat("x", 5000)})
	return s
}

// Every content block keeps its MCP type in the call's output: an image
// is an image (base64 data), a resource link a resource link, never text.
func TestContentBlocksKeepTheirKind(t *testing.T) {
	is := is.New(t)
	e, pid := spawn(t, fakes.NewInMemory(resultServer), testOptions())
	r := call(t, e, pid, "kinds", nil)
	is.NoErr(r.Error.Err())
	is.Equal(r.Outcome, "ok")
	is.Equal(r.Content, nil) // the output holds every block
	is.Equal(fakes.ToolOutput(t, r), map[string]any{"content": []any{
		map[string]any{"type": "text", "text": "here"},
		map[string]any{"type": "image", "data": "iVBORw==", "mimeType": "image/png"},
		map[string]any{"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
		map[string]any{"type": "resource_link", "uri": "demo://resource/1", "name": "one", "mimeType": "text/plain"},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "demo://resource/2", "mimeType": "text/plain", "text": "two"}},
	}})
}

// A structured result's output is its structured content; the blocks
// beside it that are not its JSON copy (an image) come with it.
func TestStructuredOutputKeepsTheBlocksBesideIt(t *testing.T) {
	is := is.New(t)
	e, pid := spawn(t, fakes.NewInMemory(resultServer), testOptions())
	r := call(t, e, pid, "structured", nil)
	is.NoErr(r.Error.Err())
	is.Equal(fakes.ToolOutput(t, r), map[string]any{"temperature": 33.0, "conditions": "Cloudy"})
	is.Equal(r.Content, []any{map[string]any{"type": "image", "data": "AQID", "mimeType": "image/png"}}) // the JSON copy left out, the image kept
}

// A JSON-RPC error's text reaches the call's failure, bounded and marked.
func TestAJSONRPCErrorSaysWhyBounded(t *testing.T) {
	is := is.New(t)
	e, pid := spawn(t, fakes.NewInMemory(resultServer), testOptions())
	r := call(t, e, pid, "refuse", nil)
	err := r.Error.Err()
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "bad arguments: xxx"))                       // the server's words
	is.True(strings.HasSuffix(err.Error(), "more bytes cut]"))                         // cut, and says so
	is.True(len(err.Error()) <= catalog.MaxReasonBytes+len("… [9999 more bytes cut]")) // bounded
	is.True(errors.Is(err, session.ErrProtocol))                                       // its code kept
}
