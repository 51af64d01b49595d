package session_test

import (
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/metrics/metricstest"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// reporting is a factory of fake upstreams with the report tools.
func reporting() *fakes.InMemory {
	return fakes.NewInMemory(func() *mcp.Server { return fakes.WithReports(fakes.NewServer()) })
}

// caller is an actor that makes calls and takes every message they get
// back, in order of arrival.
func caller(t *testing.T, e *actor.Engine) (*actor.PID, chan any) {
	got := make(chan any, 4096)
	pid := e.SpawnFunc(func(c *actor.Context) {
		switch m := c.Message().(type) {
		case session.CallProgress, session.CallLog, session.ToolResult, session.UpstreamRequest, session.UpstreamWithdrawn:
			got <- m
		}
	}, "caller")
	t.Cleanup(func() { stop(t, e, pid) })
	return pid, got
}

// until takes from got what comes up to and including the call's
// result.
func until(t *testing.T, got chan any) []any {
	is := is.New(t)
	is.Helper()
	var out []any
	for {
		select {
		case m := <-got:
			out = append(out, m)
			if _, ok := m.(session.ToolResult); ok {
				return out
			}
		case <-time.After(patience):
			t.Logf("no result within %s; got %v", patience, out)
			is.Fail() // the call is answered
			return out
		}
	}
}

func TestACallsProgressAndLogsReachItsCallerBeforeItsResultWithTheCallsCorrelation(t *testing.T) {
	is := is.New(t)
	opts := testOptions()
	opts.Metrics = metrics.New()
	e, pid := spawn(t, reporting(), opts)
	me, got := caller(t, e)
	e.Send(pid, session.CallTool{Connection: connID, Tool: "report", Arguments: fakes.CallArguments(map[string]any{"progress": 3, "logs": 2, "level": "warning"}),
		Deadline: time.Now().Add(patience), Reply: reply.At(me, 42), Reports: true})
	msgs := until(t, got)
	var progress []session.CallProgress
	var logs []session.CallLog
	for _, m := range msgs {
		switch m := m.(type) {
		case session.CallProgress:
			is.Equal(m.CorrelationID, uint64(42)) // the call's correlation
			progress = append(progress, m)
		case session.CallLog:
			is.Equal(m.CorrelationID, uint64(42))
			logs = append(logs, m)
		}
	}
	last := msgs[len(msgs)-1].(session.ToolResult)
	is.NoErr(last.Error.Err())
	is.True(len(progress) >= 1) // coalesced maybe, never lost: the last one comes
	is.Equal(progress[len(progress)-1], session.CallProgress{CorrelationID: 42, Progress: 3, Total: 3, Message: "step 3"})
	is.Equal(len(logs), 2) // both log messages, the only call in flight's
	is.Equal(logs[0].Log, session.LogMessage{Level: "warning", Logger: "fake", Data: []byte(`"log 1"`)})

	f := metricstest.Gather(t, opts.Metrics.Registry())
	forwarded, _ := f.Value("mcpflow_upstream_notifications_total", "connection", connID, "kind", "log", "fate", "forwarded")
	is.Equal(forwarded, 2.0) // counted
}

func TestALogMessageOutsideACallIsTheConnectionsAndAReportNobodyAskedForIsCounted(t *testing.T) {
	is := is.New(t)
	opts := testOptions()
	opts.Metrics = metrics.New()
	e, pid := spawn(t, reporting(), opts)

	// A call whose caller takes no reports (a router): counted, not sent.
	r := call(t, e, pid, "report", map[string]any{"progress": 1, "logs": 1})
	is.NoErr(r.Error.Err())
	poll.For(t, "the unfollowed reports counted", patience, func() bool {
		f := metricstest.Gather(t, opts.Metrics.Registry())
		p, _ := f.Value("mcpflow_upstream_notifications_total", "connection", connID, "kind", "progress", "fate", "unfollowed")
		l, _ := f.Value("mcpflow_upstream_notifications_total", "connection", connID, "kind", "log", "fate", "unfollowed")
		return p+l == 2
	})

	mustCall(t, e, pid, "log_later", map[string]any{"ms": 10, "level": "error"})
	logs := poll.Value(t, "the connection's log", patience, func() ([]session.ConnectionLog, bool) {
		st := status(t, e, pid)
		return st.Logs, len(st.Logs) == 1
	})
	is.Equal(logs[0].Log, session.LogMessage{Level: "error", Logger: "fake", Data: []byte(`"later"`)})
	is.Equal(logs[0].CallsInFlight, 0) // outside any call
	is.Equal(logs[0].Generation, int64(1))
}

func TestTheServersLogLevelFiltersTheLogMessagesACallGets(t *testing.T) {
	is := is.New(t)
	conn := testConn()
	conn.Client = &config.Client{LogLevel: "warning"} // mcpflow sends logging/setLevel warning
	h := spawnConnWithParent(t, conn, reporting(), testOptions())
	e, pid := h.engine, h.pid
	me, got := caller(t, e)
	send := func(level string) []session.CallLog {
		e.Send(pid, session.CallTool{Connection: connID, Tool: "report", Arguments: fakes.CallArguments(map[string]any{"logs": 2, "level": level}),
			Deadline: time.Now().Add(patience), Reply: reply.At(me, 1), Reports: true})
		var logs []session.CallLog
		for _, m := range until(t, got) {
			switch m := m.(type) {
			case session.CallLog:
				logs = append(logs, m)
			case session.ToolResult:
				is.NoErr(m.Error.Err())
				if m.Outcome != "ok" {
					t.Logf("%v", m.Output)
				}
				is.Equal(m.Outcome, "ok") // the call succeeds
			}
		}
		return logs
	}
	is.Equal(len(send("info")), 0)  // below the level: not sent
	is.Equal(len(send("error")), 2) // at or above it: sent, and reach the call
}

func TestALogMessageTooLargeIsCutToTheBound(t *testing.T) {
	is := is.New(t)
	data, cut := session.BoundedData(map[string]any{"text": string(make([]byte, 10*session.MaxLogData))})
	is.True(cut)
	is.True(len(data) <= session.MaxLogData)
	small, cut := session.BoundedData("short")
	is.True(!cut)
	is.Equal(string(small), `"short"`)
}

func TestALogMessageIsRedactedOfTheConnectionsSecretsWhereverItGoes(t *testing.T) {
	is := is.New(t)
	conn := testConn()
	conn.Transport.Env = map[string]string{"CALL_SECRET": "log 1", "LATER_SECRET": "later"}
	h := spawnConnWithParent(t, conn, reporting(), testOptions())
	e, pid := h.engine, h.pid
	me, got := caller(t, e)

	e.Send(pid, session.CallTool{Connection: connID, Tool: "report", Arguments: fakes.CallArguments(map[string]any{"logs": 1, "level": "error"}),
		Deadline: time.Now().Add(patience), Reply: reply.At(me, 1), Reports: true})
	var logs []session.CallLog
	for _, m := range until(t, got) {
		if l, ok := m.(session.CallLog); ok {
			logs = append(logs, l)
		}
	}
	is.Equal(len(logs), 1)
	is.Equal(string(logs[0].Log.Data), `"`+session.Redacted+`"`) // a call's log: the env value is gone

	mustCall(t, e, pid, "log_later", map[string]any{"ms": 10, "level": "error"})
	kept := poll.Value(t, "the connection's log", patience, func() ([]session.ConnectionLog, bool) {
		st := status(t, e, pid)
		return st.Logs, len(st.Logs) == 1
	})
	is.Equal(string(kept[0].Log.Data), `"`+session.Redacted+`"`) // the connection's log too
}
