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

// ToolOutput returns the output of a ToolResult, failing t unless it has
// one (a JSON object).
func ToolOutput(t testing.TB, r session.ToolResult) map[string]any {
	t.Helper()
	is.New(t).True(r.Output != nil) // the result has an output object
	return r.Output
}
