package mcpface

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/api/protocol"
)

// texts are the text blocks of a result.
func texts(res *mcp.CallToolResult) []string {
	var out []string
	for _, b := range res.Content {
		if t, ok := b.(*mcp.TextContent); ok {
			out = append(out, t.Text)
		}
	}
	return out
}

func completedWith(output protocol.Object) envelope {
	ok := "ok"
	return envelope{RunID: "run_1", Status: "completed", Outcome: &ok, Output: output}
}

// The envelope is the structured content, whole, whatever the text says.
func TestTheEnvelopeIsTheStructuredContent(t *testing.T) {
	is := is.New(t)
	res := result(completedWith(protocol.Object{"count": 2.0}), "")
	raw, err := json.Marshal(res.StructuredContent)
	is.NoErr(err)
	var env map[string]any
	is.NoErr(json.Unmarshal(raw, &env))
	is.Equal(env, map[string]any{"run_id": "run_1", "status": "completed", "outcome": "ok", "output": map[string]any{"count": 2.0}})
}

// A completed run whose output is a tool's content gives the blocks
// themselves, with their own types: the text as text, the image as an
// image (its base64 in no JSON), the resource link as a link.
func TestACompletedRunGivesItsContentBlocksBack(t *testing.T) {
	is := is.New(t)
	res := result(completedWith(protocol.Object{"content": []any{
		map[string]any{"type": "text", "text": "Here's the image you requested:"},
		map[string]any{"type": "image", "data": "iVBORw==", "mimeType": "image/png"},
		map[string]any{"type": "resource_link", "uri": "demo://resource/dynamic/text/2", "name": "Text Resource 2"},
		map[string]any{"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "demo://resource/static/1", "mimeType": "text/plain", "text": "one\ntwo"}},
	}}), "")
	is.True(!res.IsError)
	is.Equal(len(res.Content), 5) // the output's five blocks, and nothing else
	is.Equal(res.Content[0].(*mcp.TextContent).Text, "Here's the image you requested:")
	img, isImage := res.Content[1].(*mcp.ImageContent)
	is.True(isImage) // an image stays an image
	is.Equal(img.MIMEType, "image/png")
	is.Equal(img.Data, []byte{0x89, 'P', 'N', 'G'})
	link, isLink := res.Content[2].(*mcp.ResourceLink)
	is.True(isLink) // a resource link stays a resource link
	is.Equal(link.URI, "demo://resource/dynamic/text/2")
	audio, isAudio := res.Content[3].(*mcp.AudioContent)
	is.True(isAudio) // audio stays audio
	is.Equal(audio.Data, []byte("RIFF"))
	embedded, isEmbedded := res.Content[4].(*mcp.EmbeddedResource)
	is.True(isEmbedded) // an embedded resource stays one, its contents with it
	is.Equal(embedded.Resource.Text, "one\ntwo")
}

// The text of a run's output is the text itself: real newlines, and <, >
// and & as they are, never escaped into JSON.
func TestTextIsNeverEscaped(t *testing.T) {
	is := is.New(t)
	said := "line one\nline two -> <done> & \"quoted\""
	for _, out := range []protocol.Object{
		{"content": []any{map[string]any{"type": "text", "text": said}}}, // one text block
		{"summary": said}, // one string
	} {
		is.Equal(texts(result(completedWith(out), "")), []string{said})
	}
}

// Any other output is its JSON, indented, with nothing HTML-escaped.
func TestOtherOutputIsReadableJSON(t *testing.T) {
	is := is.New(t)
	got := texts(result(completedWith(protocol.Object{"count": 2.0, "rule": "a > b & c < d"}), ""))
	is.Equal(got, []string{"{\n  \"count\": 2,\n  \"rule\": \"a > b & c < d\"\n}"})
	// A content list that is not MCP content is data like any other.
	got = texts(result(completedWith(protocol.Object{"content": []any{map[string]any{"type": "hologram"}}}), ""))
	is.Equal(len(got), 1)
	is.True(strings.Contains(got[0], `"type": "hologram"`))
	// Fields beside MCP content come first, as JSON, then the blocks.
	res := result(completedWith(protocol.Object{"pages": 2.0, "content": []any{map[string]any{"type": "text", "text": "p1"}}}), "")
	is.Equal(texts(res), []string{"{\n  \"pages\": 2\n}", "p1"})
	// No output at all is said in words.
	is.Equal(texts(result(completedWith(nil), "")), []string{"The run completed with outcome ok and no output."})
}

// A failed run is an error result whose text is why, in the upstream's
// words.
func TestAFailedRunSaysWhy(t *testing.T) {
	is := is.New(t)
	why := `step "tool_error": get-resource-reference failed: Invalid resourceId: 0. Must be a finite positive integer.`
	res := result(envelope{RunID: "run_1", Status: "failed", Error: &why}, "")
	is.True(res.IsError)
	is.Equal(texts(res), []string{why})
}

// An interrupted run shows what it waits for, then the note.
func TestAnInterruptedRunShowsItsInterrupt(t *testing.T) {
	is := is.New(t)
	e := envelope{RunID: "run_1", Status: "interrupted", Interrupt: protocol.Object{"payload": map[string]any{"message": "Ship it?"}, "outcomes": []any{"approved", "rejected"}}}
	res := result(e, interruptedNote(e))
	is.True(!res.IsError)
	got := texts(res)
	is.Equal(len(got), 2)
	is.True(strings.Contains(got[0], `"message": "Ship it?"`)) // the interrupt, readable
	is.True(strings.Contains(got[1], "mcpflow_resume_run"))    // then what to do
}

// A cancelled or running run is said in words.
func TestOtherStatesAreSaidInWords(t *testing.T) {
	is := is.New(t)
	reason := "the MCP client cancelled the tool call"
	is.Equal(texts(result(envelope{RunID: "run_1", Status: "cancelled", Error: &reason}, "")), []string{"The run was cancelled: " + reason})
	is.Equal(texts(result(envelope{RunID: "run_1", Status: "cancelled"}, "")), []string{"The run was cancelled."})
	got := texts(result(envelope{RunID: "run_1", Status: "running"}, ""))
	is.True(strings.Contains(got[0], "mcpflow_get_run") && strings.Contains(got[0], "run_1"))
}

// An authoring tool's answer reads as indented JSON, its numbers as
// written.
func TestAnAPIAnswerIsReadable(t *testing.T) {
	is := is.New(t)
	is.Equal(readableRaw(json.RawMessage(`{"n":12345678901234567890,"hint":"a \u003e b"}`)), "{\n  \"hint\": \"a > b\",\n  \"n\": 12345678901234567890\n}")
	is.Equal(readableRaw(json.RawMessage(`not json`)), "not json")
}
