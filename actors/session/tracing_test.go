package session_test

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

const (
	testTraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	testTraceState  = "mcpflow=1"
)

func TestTracingTheTraceContextOfACallReachesTheUpstreamInMeta(t *testing.T) {
	is := is.New(t)
	e, pid := spawn(t, fakes.NewInMemory(func() *mcp.Server { return fakes.WithMetaEcho(fakes.NewServer()) }), testOptions())

	w := expect[session.ToolResult](e)
	e.Send(pid, session.CallTool{
		Connection: connID, Tool: "meta", Deadline: time.Now().Add(2 * time.Second),
		TraceParent: testTraceParent, TraceState: testTraceState, Reply: w.To(),
	})
	r := await(t, w)
	is.NoErr(r.Error.Err())
	is.Equal(withoutToken(t, fakes.ToolOutput(t, r)["meta"]), map[string]any{"traceparent": testTraceParent, "tracestate": testTraceState}) // the tool saw it in _meta

	untraced := mustCall(t, e, pid, "meta", nil)
	is.Equal(withoutToken(t, untraced["meta"]), map[string]any{}) // no trace context: only the progress token in _meta
}

func TestTracingTheTraceContextOfAResourceReadReachesTheUpstreamInMeta(t *testing.T) {
	is := is.New(t)
	seen := make(chan map[string]any, 1)
	newServer := func() *mcp.Server {
		s := fakes.NewServer()
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "resources/read" {
					select {
					case seen <- req.GetParams().GetMeta():
					default:
					}
				}
				return next(ctx, method, req)
			}
		})
		return s
	}
	e, pid := spawn(t, fakes.NewInMemory(newServer), testOptions())

	w := expect[session.ToolResult](e)
	e.Send(pid, session.ReadResource{
		Connection: connID, URI: fakes.GreetingURI, Deadline: time.Now().Add(2 * time.Second),
		TraceParent: testTraceParent, Reply: w.To(),
	})
	r := await(t, w)
	is.NoErr(r.Error.Err())
	select {
	case meta := <-seen:
		is.Equal(withoutToken(t, meta), map[string]any{"traceparent": testTraceParent}) // no tracestate: none was given
	case <-time.After(patience):
		is.Fail() // the server saw the read
	}
}

// withoutToken returns the _meta of a request without its progressToken,
// which every call and read carries.
func withoutToken(t *testing.T, meta any) map[string]any {
	t.Helper()
	is := is.New(t)
	is.Helper()
	m, ok := meta.(map[string]any)
	is.True(ok) // _meta is an object
	token, _ := m["progressToken"].(string)
	is.True(strings.HasPrefix(token, "mcpflow-")) // the request's progress token
	out := maps.Clone(m)
	delete(out, "progressToken")
	return out
}
