package fakes

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Connect serves server in-process over mcp.NewInMemoryTransports and
// returns a client session to it. Cleanup closes both sessions. Unlike
// InMemory's, these connections cannot be cut: NewServer's crash only
// reports a tool error over them.
func Connect(t testing.TB, server *mcp.Server) *mcp.ClientSession {
	t.Helper()
	is := is.New(t)
	is.Helper()
	serverTransport, clientTransport := mcp.NewInMemoryTransports()
	ss, err := server.Connect(t.Context(), serverTransport, nil)
	is.NoErr(err) // server connect
	t.Cleanup(func() { _ = ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "fakes-client", Version: "v0"}, nil)
	cs, err := client.Connect(t.Context(), clientTransport, nil)
	is.NoErr(err) // client connect
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// CallStructured calls the tool name, which must succeed, and decodes its
// structured content into Out.
func CallStructured[Out any](t testing.TB, cs *mcp.ClientSession, name string, args any) Out {
	t.Helper()
	is := is.New(t)
	is.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Logf("call %s: %v", name, err)
	}
	is.NoErr(err) // call the tool
	if res.IsError {
		content, _ := json.Marshal(res.Content)
		t.Logf("call %s: tool error: %s", name, content)
		is.Fail() // the tool succeeds
	}
	data, err := json.Marshal(res.StructuredContent)
	is.NoErr(err) // encode the structured content
	var out Out
	err = json.Unmarshal(data, &out)
	if err != nil {
		t.Logf("call %s: decode %s: %v", name, data, err)
	}
	is.NoErr(err) // decode the structured content
	return out
}
