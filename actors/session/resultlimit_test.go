package session_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

func TestAnHTTPAnswerOverTheLimitFailsItsCallOrReadAsTooLargeAndTheSessionGoesOn(t *testing.T) {
	is := is.New(t)
	upstream := httptest.NewServer(fakes.StreamHuge(fakes.NewHTTPHandler(func() *mcp.Server { return fakes.WithHuge(fakes.NewServer()) })))
	t.Cleanup(upstream.Close)
	conn := config.Connection{Kind: "mcp", ID: connID, MaxResultBytes: 1 << 20,
		Transport: config.Transport{Kind: config.TransportHTTP, URL: upstream.URL}}
	h := spawnConnWithParent(t, conn, session.HTTP{}, testOptions())

	for _, sse := range []bool{false, true} {
		r := call(t, h.engine, h.pid, fakes.HugeTool, map[string]any{"bytes": 8 << 20, "sse": sse})
		err := r.Error.Err()
		t.Logf("sse %v: %v", sse, err)
		is.True(errors.Is(err, session.ErrResultTooLarge)) // the call fails as too large
		is.Equal(r.Error.Code, "result_too_large")
		is.True(strings.Contains(err.Error(), `source "fake.one" passed its limit of 1048576 bytes`)) // names the source and the limit
		is.Equal(r.Generation, int64(1))                                                              // on the first session
	}
	read := expect[session.ToolResult](h.engine) // of a text 64 KiB over the limit
	h.engine.Send(h.pid, session.ReadResource{Connection: connID, URI: "fake://huge/1114112", Deadline: time.Now().Add(2 * time.Second), Reply: read.To()})
	r := await(t, read)
	is.Equal(r.Error.Code, "result_too_large") // a resource read over the limit fails the same way
	is.Equal(r.Generation, int64(1))

	small := mustCall(t, h.engine, h.pid, fakes.HugeTool, map[string]any{"bytes": 1000, "sse": true})
	is.Equal(len(small["content"].([]any)[0].(map[string]any)["text"].(string)), 1000) // an answer within the limit comes whole
	r = call(t, h.engine, h.pid, "counter", nil)
	is.NoErr(r.Error.Err())
	is.Equal(r.Generation, int64(1)) // the same session
}
