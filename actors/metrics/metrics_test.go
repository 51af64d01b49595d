package metrics_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/metrics/metricstest"
)

func TestNilMetricsRecordNothingAndNeverPanic(t *testing.T) {
	is := is.New(t)
	var m *metrics.Metrics
	m.RunStarted("d")
	m.RunEnded("d", "completed")
	m.Step("c", "t", metrics.OutcomeOK, time.Second)
	m.ToolCall("c", "t", metrics.OutcomeOK, time.Second)
	m.ConnectFailed("c")
	m.Reconnect("c")
	m.Restart("c")
	m.Request("m", "ok")
	m.SubscriptionLagged("run")
	m.WebSocketOpened()()
	m.StoreCommit("record_progress")()
	m.Session("c").Set(true, 1, 2)
	m.ClusterMembers(2)
	m.LeasesHeld(1)
	m.LeaseAcquisition(metrics.LeaseAcquired)
	m.LeaseRenewal(true)
	m.LeasesLost(1)
	m.ForwardedCall("node-b")
	m.RunsClaimed(1)
	m.AdminEventDropped("queue_full")
	is.Equal(m.Registry(), nil) // nil metrics have no registry
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	is.Equal(rec.Code, 404) // nil metrics serve nothing
}

func TestRunsCountOnlyFinalStatuses(t *testing.T) {
	is := is.New(t)
	m := metrics.New()
	m.RunStarted("dep.a")
	m.RunStarted("dep.a")
	m.RunEnded("dep.a", "completed")
	m.RunEnded("dep.a", "failed")
	m.RunEnded("dep.a", "interrupted") // a pause, not an end
	m.RunEnded("dep.a", "running")     // a halted run
	f := metricstest.Gather(t, m.Registry())
	started, _ := f.Value("mcpflow_runs_started_total", "deployment", "dep.a")
	is.Equal(started, 2.0)
	ended, _ := f.Value("mcpflow_runs_ended_total", "deployment", "dep.a")
	is.Equal(ended, 2.0) // completed and failed only
	is.Equal(len(f.LabelValues("mcpflow_runs_ended_total", "status")), 2)
}

func TestSessionGaugesAddEachActorsShare(t *testing.T) {
	is := is.New(t)
	m := metrics.New()
	shared, scoped := m.Session("c.one"), m.Session("c.one")
	shared.Set(true, 3, 1)
	scoped.Set(true, 1, 0)
	f := metricstest.Gather(t, m.Registry())
	open, _ := f.Value("mcpflow_sessions_open", "connection", "c.one")
	inFlight, _ := f.Value("mcpflow_session_calls_in_flight", "connection", "c.one")
	queued, _ := f.Value("mcpflow_session_calls_queued", "connection", "c.one")
	is.Equal([]float64{open, inFlight, queued}, []float64{2, 4, 1})

	shared.Set(false, 0, 0) // stopped
	scoped.Set(true, 0, 2)
	f = metricstest.Gather(t, m.Registry())
	open, _ = f.Value("mcpflow_sessions_open", "connection", "c.one")
	inFlight, _ = f.Value("mcpflow_session_calls_in_flight", "connection", "c.one")
	queued, _ = f.Value("mcpflow_session_calls_queued", "connection", "c.one")
	is.Equal([]float64{open, inFlight, queued}, []float64{1, 0, 2})
}

func TestHistogramsAndCountersByTheirLabels(t *testing.T) {
	is := is.New(t)
	m := metrics.New()
	m.Step("demo.default", "counter", metrics.OutcomeOK, 3*time.Millisecond)
	m.Step("demo.default", "counter", metrics.OutcomeFailed, 3*time.Millisecond)
	m.ToolCall("demo.default", "counter", metrics.OutcomeOK, time.Millisecond)
	m.Request("workflow.runs.start", "ok")
	m.Request(metrics.Other, "-32601")
	m.SubscriptionLagged("run")
	closed := m.WebSocketOpened()
	m.StoreCommit("record_progress")()
	f := metricstest.Gather(t, m.Registry())
	is.Equal(f.Type("mcpflow_step_duration_seconds"), "HISTOGRAM")
	steps, _ := f.Value("mcpflow_step_duration_seconds", "connection", "demo.default", "tool", "counter")
	is.Equal(steps, 2.0)
	calls, _ := f.Value("mcpflow_tool_call_duration_seconds", "outcome", "ok")
	is.Equal(calls, 1.0)
	unknown, _ := f.Value("mcpflow_requests_total", "method", "other", "code", "-32601")
	is.Equal(unknown, 1.0)
	lag, _ := f.Value("mcpflow_subscription_lag_total", "topic", "run")
	is.Equal(lag, 1.0)
	ws, _ := f.Value("mcpflow_websocket_connections")
	is.Equal(ws, 1.0)
	commits, _ := f.Value("mcpflow_store_commit_duration_seconds", "operation", "record_progress")
	is.Equal(commits, 1.0)
	closed()
	ws, _ = metricstest.Gather(t, m.Registry()).Value("mcpflow_websocket_connections")
	is.Equal(ws, 0.0)
}

func TestOutcomeOfAResult(t *testing.T) {
	is := is.New(t)
	is.Equal(metrics.OutcomeOf("ok", nil), metrics.OutcomeOK)
	is.Equal(metrics.OutcomeOf("error", nil), metrics.OutcomeError)
	is.Equal(metrics.OutcomeOf("", errors.New("session_lost")), metrics.OutcomeFailed)
	is.Equal(metrics.OutcomeOf("custom", nil), metrics.OutcomeOK) // a declared outcome is an answer
}

func TestTwoRegistriesInOneProcessAndTheTextFormat(t *testing.T) {
	is := is.New(t)
	a, b := metrics.New(), metrics.New() // neither is the global registry
	a.RunStarted("d")
	rec := httptest.NewRecorder()
	b.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	is.Equal(rec.Code, 200)
	is.True(strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain"))
	f := metricstest.Parse(t, rec.Body)
	_, found := f.Value("mcpflow_runs_started_total")
	is.True(!found) // b never counted a run
	_, found = f.Value("go_goroutines")
	is.True(found) // the Go runtime collector is on each registry
}
