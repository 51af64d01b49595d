package session_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

// reportsServerEnv, set, makes this test binary the stdio server of the
// report tools (see TestMain): a real process, read through the stdio
// transport's reader.
const reportsServerEnv = "MCPFLOW_TEST_REPORTS_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(reportsServerEnv) != "" {
		if err := fakes.WithReports(fakes.NewServer()).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "reports server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The report tool answers right after its last report. go-sdk hands a
// notification to its handler and a call's answer to its caller on
// goroutines of their own; the session reads them in order instead
// (noticeread.go), so that each time, over every transport, the last
// progress and both log messages are the call's and come before its
// result. Run with -count=50 to see it hold.

func TestAReportSentRightBeforeTheAnswerIsTheCallsEveryTime(t *testing.T) {
	stdio := testConn()
	stdio.Transport = config.Transport{Kind: config.TransportStdio, Command: os.Args[0], Env: map[string]string{reportsServerEnv: "1"}}
	upstream := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fakes.WithReports(fakes.NewServer()) }, nil))
	t.Cleanup(upstream.Close)
	web := testConn()
	web.Transport = config.Transport{Kind: config.TransportHTTP, URL: upstream.URL}
	for _, c := range []struct {
		name    string
		conn    config.Connection
		factory session.TransportFactory
	}{
		{"in memory", testConn(), reporting()},
		{"stdio", stdio, session.Stdio{}},
		{"streamable http", web, session.HTTP{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			h := spawnConnWithParent(t, c.conn, c.factory, testOptions())
			me, got := caller(t, h.engine)
			for i := range 10 {
				h.engine.Send(h.pid, session.CallTool{Connection: connID, Tool: "report", Arguments: fakes.CallArguments(map[string]any{"progress": 2, "logs": 2}),
					Deadline: time.Now().Add(patience), Reply: reply.At(me, uint64(i)), Reports: true})
				var progress []session.CallProgress
				var logs []session.CallLog
				for _, m := range until(t, got) {
					switch m := m.(type) {
					case session.CallProgress:
						progress = append(progress, m)
					case session.CallLog:
						logs = append(logs, m)
					case session.ToolResult:
						is.NoErr(m.Error.Err())
					}
				}
				is.True(len(progress) >= 1) // coalesced maybe, but the last one is there
				is.Equal(progress[len(progress)-1], session.CallProgress{CorrelationID: uint64(i), Progress: 2, Total: 2, Message: "step 2"})
				is.Equal(len(logs), 2) // both logs, right before the answer, are the call's
				is.Equal(string(logs[1].Log.Data), `"log 2"`)
			}
			is.Equal(len(status(t, h.engine, h.pid).Logs), 0) // no log became the connection's
		})
	}
}
