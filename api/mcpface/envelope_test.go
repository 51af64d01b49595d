package mcpface

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/api/protocol"
)

// A completed run whose output is a tool's content gives the blocks back
// as content of their own types, after the envelope's JSON.
func TestACompletedRunGivesItsContentBlocksBack(t *testing.T) {
	is := is.New(t)
	ok := "ok"
	e := envelope{RunID: "run_1", Status: "completed", Outcome: &ok, Output: protocol.Object{"content": []any{
		map[string]any{"type": "text", "text": "Here's the image you requested:"},
		map[string]any{"type": "image", "data": "iVBORw==", "mimeType": "image/png"},
		map[string]any{"type": "resource_link", "uri": "demo://resource/dynamic/text/2", "name": "Text Resource 2"},
	}}}
	res := result(e, "")
	is.True(!res.IsError)
	is.Equal(len(res.Content), 4) // the envelope, then the output's three blocks
	var env map[string]any
	is.NoErr(json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env))
	is.Equal(env["run_id"], "run_1") // the envelope's JSON first
	is.Equal(res.Content[1].(*mcp.TextContent).Text, "Here's the image you requested:")
	img, isImage := res.Content[2].(*mcp.ImageContent)
	is.True(isImage) // an image stays an image
	is.Equal(img.MIMEType, "image/png")
	is.Equal(img.Data, []byte{0x89, 'P', 'N', 'G'})
	link, isLink := res.Content[3].(*mcp.ResourceLink)
	is.True(isLink) // a resource link stays a resource link
	is.Equal(link.URI, "demo://resource/dynamic/text/2")
}

// An output that is not MCP content stays in the envelope alone.
func TestAnOutputOfOtherDataAddsNoBlock(t *testing.T) {
	is := is.New(t)
	ok := "ok"
	for _, out := range []protocol.Object{{"count": 2.0}, {"content": []any{map[string]any{"type": "hologram"}}}, {"content": "text"}} {
		res := result(envelope{RunID: "run_1", Status: "completed", Outcome: &ok, Output: out}, "")
		is.Equal(len(res.Content), 1) // the envelope only
	}
}

// A failed run is an error result that says why, in a text of its own.
func TestAFailedRunSaysWhy(t *testing.T) {
	is := is.New(t)
	why := `step "tool_error": get-resource-reference failed: Invalid resourceId: 0. Must be a finite positive integer.`
	res := result(envelope{RunID: "run_1", Status: "failed", Error: &why}, "")
	is.True(res.IsError)
	is.Equal(len(res.Content), 2)
	is.Equal(res.Content[1].(*mcp.TextContent).Text, "The run failed: "+why)
}
