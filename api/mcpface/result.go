package mcpface

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/api/protocol"
)

// result is the tool result of a run, for a model to read. The envelope
// is the structuredContent, whole; the content is what the run says:
//   - a completed run: its output, as the text it is (the output's one
//     string, or the text blocks of its MCP content) or as indented JSON,
//     and its MCP content blocks (images, audio, resource links, embedded
//     resources) as blocks of their own types, never as base64 in JSON;
//   - a failed run: its error, which carries the upstream's reason, with
//     isError;
//   - an interrupted run: what its interrupt asks, as indented JSON;
//   - a cancelled or still running run: a sentence saying so;
//
// then note, if any, for the model.
func result(e envelope, note string) *mcp.CallToolResult {
	raw, err := json.Marshal(e)
	if err != nil { // an envelope of JSON values always encodes
		raw = fmt.Appendf(nil, `{"run_id":%q,"status":%q}`, e.RunID, e.Status)
	}
	content := runContent(e)
	if note != "" {
		content = append(content, &mcp.TextContent{Text: note})
	}
	return &mcp.CallToolResult{Content: content, StructuredContent: json.RawMessage(raw), IsError: e.Status == "failed"}
}

// runContent is the content of a run's result, before any note.
func runContent(e envelope) []mcp.Content {
	switch e.Status {
	case "completed":
		return outputContent(e)
	case "failed":
		if e.Error != nil && *e.Error != "" {
			return []mcp.Content{textBlock(*e.Error)}
		}
		return []mcp.Content{textBlock("The run failed.")}
	case "interrupted":
		return []mcp.Content{textBlock(readable(e.Interrupt))}
	case "cancelled":
		if e.Error != nil && *e.Error != "" {
			return []mcp.Content{textBlock("The run was cancelled: " + *e.Error)}
		}
		return []mcp.Content{textBlock("The run was cancelled.")}
	}
	return []mcp.Content{textBlock(fmt.Sprintf("The run %s is %s: call mcpflow_get_run with run_id %q for its result.", e.RunID, e.Status, e.RunID))}
}

// outputContent is a completed run's output as content. An output whose
// "content" is a list of MCP content blocks (a workflow that returns a
// tool's content, as a scaffold does) gives those blocks, the rest of the
// output, if any, before them as JSON. An output of one string property
// is that string; any other output is its indented JSON.
func outputContent(e envelope) []mcp.Content {
	if e.Output == nil {
		return []mcp.Content{textBlock(fmt.Sprintf("The run completed with outcome %s and no output.", orNone(e.Outcome)))}
	}
	if blocks := outputBlocks(e.Output); len(blocks) > 0 {
		rest := protocol.Object{}
		for k, v := range e.Output {
			if k != "content" {
				rest[k] = v
			}
		}
		if len(rest) == 0 {
			return blocks
		}
		return append([]mcp.Content{textBlock(readable(rest))}, blocks...)
	}
	if len(e.Output) == 1 {
		for _, v := range e.Output {
			if s, ok := v.(string); ok {
				return []mcp.Content{textBlock(s)}
			}
		}
	}
	return []mcp.Content{textBlock(readable(e.Output))}
}

// outputBlocks are the MCP content blocks a run's output holds as its
// "content" list, decoded as MCP content of their own types; none when
// the list is not all MCP content blocks (then it is data like any other).
func outputBlocks(output protocol.Object) []mcp.Content {
	blocks, ok := output["content"].([]any)
	if !ok || len(blocks) == 0 {
		return nil
	}
	raw, err := json.Marshal(map[string]any{"content": blocks})
	if err != nil {
		return nil
	}
	var decoded mcp.CallToolResult
	if err := json.Unmarshal(raw, &decoded); err != nil {
		return nil // not MCP content: the output's JSON carries it
	}
	return decoded.Content
}

// readable is v as JSON a person or a model reads: indented, with <, >
// and & as themselves rather than \u003c, \u003e and \u0026.
func readable(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil { // JSON values always encode
		return fmt.Sprint(v)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// readableRaw is a JSON document as readable gives it, its numbers
// exactly as written; the document itself when it does not decode.
func readableRaw(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	return readable(v)
}

func textBlock(s string) *mcp.TextContent { return &mcp.TextContent{Text: s} }

func orNone(s *string) string {
	if s == nil {
		return "none"
	}
	return *s
}
