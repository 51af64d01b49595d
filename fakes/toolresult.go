package fakes

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/session"
)

// CallArguments encodes a tool call's arguments as a CallTool carries
// them; nil stays nil.
func CallArguments(args map[string]any) json.RawMessage {
	if args == nil {
		return nil
	}
	data, err := json.Marshal(args)
	if err != nil {
		panic(err) // a test's arguments always encode
	}
	return data
}

// ToolOutput decodes the output of a ToolResult, failing t unless it is a
// JSON object.
func ToolOutput(t testing.TB, r session.ToolResult) map[string]any {
	t.Helper()
	var out map[string]any
	is.New(t).NoErr(json.Unmarshal(r.Output, &out)) // the output is a JSON object
	return out
}
