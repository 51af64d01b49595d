//go:build unix

package session_test

import (
	"strings"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/metrics/metricstest"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// status asks pid for its live status.
func status(t *testing.T, e *actor.Engine, pid *actor.PID) session.Status {
	w := expect[session.CurrentStatus](e)
	e.Send(pid, session.GetStatus{Reply: w.To()})
	return await(t, w).Status
}

func TestAFailedStdioConnectSaysWhatTheServerWroteToStderrAndLogsItOnce(t *testing.T) {
	is := is.New(t)
	logs := fakes.CaptureLogs(t) // no test of this package runs in parallel
	conn := config.Connection{Kind: "mcp", ID: "broken.one", Transport: config.Transport{
		Kind: config.TransportStdio, Command: "sh",
		Args: []string{"-c", `echo "Cannot find module ./nope.js" >&2; echo "key=$API_KEY" >&2; exit 1`},
		Env:  map[string]string{"API_KEY": "s3cr3t-value"},
	}}
	opts := testOptions()
	opts.Metrics = metrics.New()
	e := newEngine(t)
	pid := e.Spawn(session.New(conn, session.NewStdio(opts, nil), opts), "session", actor.WithID(conn.ID))
	t.Cleanup(func() { stop(t, e, pid) })

	w := expect[session.CatalogListed](e)
	e.Send(pid, session.ListCatalog{Deadline: time.Now().Add(patience), Reply: w.To()})
	listed := await(t, w)
	is.True(listed.Error.Err() != nil) // the server never answered initialize
	msg := listed.Error.Err().Error()
	is.True(strings.Contains(msg, "the server exited: exit status 1"))             // how it ended
	is.True(strings.Contains(msg, "Cannot find module ./nope.js\nkey=[redacted]")) // and why, in order
	is.True(!strings.Contains(msg, "s3cr3t-value"))                                // never a secret

	// Retries fail the same way: the status says why, the log said it once.
	poll.For(t, "three connect failures: the connection keeps retrying", patience, func() bool {
		n, _ := metricstest.Gather(t, opts.Metrics.Registry()).Value("mcpflow_session_connect_failures_total", "connection", conn.ID)
		return n >= 3
	})
	st := status(t, e, pid)
	is.True(strings.Contains(st.LastError, "Cannot find module ./nope.js"))
	is.True(!strings.Contains(st.LastError, "s3cr3t-value"))
	warned := logs.Lines(`level=WARN msg="mcp connect failed"`)
	is.Equal(len(warned), 1) // logged once at warn
	is.True(strings.Contains(warned[0], "Cannot find module ./nope.js"))
	is.True(len(logs.Lines(`level=DEBUG msg="mcp connect failed"`)) >= 2) // the repeats at debug
	is.Equal(len(logs.Lines("s3cr3t-value")), 0)                          // not even at debug
	reconnects, _ := metricstest.Gather(t, opts.Metrics.Registry()).Value("mcpflow_session_reconnects_total", "connection", conn.ID)
	is.True(reconnects >= 2)
}

func TestSessionGaugesAndCallLatencyFollowTheActor(t *testing.T) {
	is := is.New(t)
	opts := testOptions()
	opts.Metrics = metrics.New()
	e := newEngine(t)
	pid := e.Spawn(newSession(fakes.NewInMemory(nil), opts), "session", actor.WithID(connID))

	mustCall(t, e, pid, "counter", nil)
	r := call(t, e, pid, "fail", nil)
	is.Equal(r.Outcome, "error")
	f := metricstest.Gather(t, opts.Metrics.Registry())
	open, _ := f.Value("mcpflow_sessions_open", "connection", connID)
	is.Equal(open, 1.0)
	ok, _ := f.Value("mcpflow_tool_call_duration_seconds", "connection", connID, "tool", "counter", "outcome", "ok")
	is.Equal(ok, 1.0)
	failed, _ := f.Value("mcpflow_tool_call_duration_seconds", "tool", "fail", "outcome", "error")
	is.Equal(failed, 1.0)
	inFlight, _ := f.Value("mcpflow_session_calls_in_flight", "connection", connID)
	is.Equal(inFlight, 0.0) // the listing at open is done too

	stop(t, e, pid)
	// the actor's last message is handled just after it is gone
	poll.For(t, "a stopped actor holds no session", patience, func() bool {
		open, _ = metricstest.Gather(t, opts.Metrics.Registry()).Value("mcpflow_sessions_open", "connection", connID)
		return open == 0
	})
	is.Equal(open, 0.0) // a stopped actor holds no session
}

// A server that exits at start is reported by how it exited, whether the
// client's write of initialize saw the pipe close (EOF) or broke on it
// (EPIPE), and whether the actor hears of the exit before or after the
// connect fails.
func TestAServerThatExitsAtStartIsReportedByItsExitHoweverTheConnectSawIt(t *testing.T) {
	is := is.New(t)
	for name, script := range map[string]string{
		"after reading initialize": `read -r request; echo "boom" >&2; exit 3`,
		"before reading anything":  `echo "boom" >&2; exit 3`,
	} {
		t.Run(name, func(t *testing.T) {
			conn := config.Connection{Kind: "mcp", ID: "broken.one", Transport: config.Transport{
				Kind: config.TransportStdio, Command: "sh", Args: []string{"-c", script},
			}}
			opts := testOptions()
			e := newEngine(t)
			pid := e.Spawn(session.New(conn, session.NewStdio(opts, nil), opts), "session", actor.WithID(conn.ID))
			t.Cleanup(func() { stop(t, e, pid) })
			for range 3 {
				w := expect[session.CatalogListed](e)
				e.Send(pid, session.ListCatalog{Deadline: time.Now().Add(patience), Reply: w.To()})
				listed := await(t, w)
				is.True(listed.Error.Err() != nil)
				msg := listed.Error.Err().Error()
				is.True(strings.Contains(msg, "the server exited: exit status 3; the server's stderr ended with:\nboom")) // its exit and why
				is.Equal(session.Actionable(status(t, e, pid).LastError),
					"the server process exited at start (exit status 3); its stderr ended with: boom")
			}
		})
	}
}
