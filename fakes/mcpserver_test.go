package fakes_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/fakes"
)

// toolNames lists the tools of cs's server.
func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	is.NoErr(err) // list tools
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func TestAddToolRegistersAToolAndAnnouncesIt(t *testing.T) {
	is := is.New(t)
	server := fakes.WithAddTool(fakes.NewServer())
	serverTransport, clientTransport := mcp.NewInMemoryTransports()
	ss, err := server.Connect(t.Context(), serverTransport, nil)
	is.NoErr(err) // server connect
	t.Cleanup(func() { _ = ss.Close() })
	changed := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "fakes-test", Version: "v0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	cs, err := client.Connect(t.Context(), clientTransport, nil)
	is.NoErr(err) // client connect
	t.Cleanup(func() { _ = cs.Close() })
	is.Equal(len(toolNames(t, cs)), 8) // the seven tools and add_tool

	type added struct {
		Added string `json:"added"`
	}
	is.Equal(fakes.CallStructured[added](t, cs, "add_tool", map[string]any{"name": "shout"}).Added, "shout")
	select {
	case <-changed:
	case <-time.After(patience):
		is.Fail() // the server announces tools/list_changed
	}
	is.True(slices.Contains(toolNames(t, cs), "shout")) // listed
	type message struct {
		Message string `json:"message"`
	}
	is.Equal(fakes.CallStructured[message](t, cs, "shout", map[string]any{"message": "hi"}).Message, "hi") // and callable

	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "add_tool", Arguments: map[string]any{}})
	is.NoErr(err)        // a tool error is a result
	is.True(res.IsError) // add_tool needs a name
}

func TestHTTPHandlerGivesEachSessionItsOwnServer(t *testing.T) {
	is := is.New(t)
	srv := httptest.NewServer(fakes.NewHTTPHandler(nil))
	t.Cleanup(srv.Close)
	connect := func() *mcp.ClientSession {
		client := mcp.NewClient(&mcp.Implementation{Name: "fakes-test", Version: "v0"}, nil)
		cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
		is.NoErr(err) // connect over streamable HTTP
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	first, second := connect(), connect()
	is.True(first.ID() != "") // a stateful session, with an id
	is.True(first.ID() != second.ID())
	is.Equal(fakes.CallStructured[count](t, first, "counter", nil).Count, 1)
	is.Equal(fakes.CallStructured[count](t, first, "counter", nil).Count, 2)
	is.Equal(fakes.CallStructured[count](t, second, "counter", nil).Count, 1) // a server per session
	is.Equal(len(toolNames(t, second)), 7)
}
