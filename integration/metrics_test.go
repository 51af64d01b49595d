package integration

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/metrics/metricstest"
	"github.com/mcpflow/mcpflow/actors/session"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes"
)

// scrapeMetrics GETs /metrics of the service at ws URL and parses it.
func scrapeMetrics(t testing.TB, wsURL string) metricstest.Families {
	t.Helper()
	return scrapeMetricsAs(t, wsURL, "")
}

// scrapeMetricsAs is scrapeMetrics with a bearer token ("": none).
func scrapeMetricsAs(t testing.TB, wsURL, token string) metricstest.Families {
	t.Helper()
	is := is.New(t)
	is.Helper()
	base := "http://" + strings.TrimSuffix(strings.TrimPrefix(wsURL, "ws://"), "/ws")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	is.NoErr(err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	is.NoErr(err) // GET /metrics
	defer resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusOK) // a loopback client without tokens, or a read token, may scrape
	is.True(strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain"))
	return metricstest.Parse(t, resp.Body)
}

func TestMetricsCountRunsAndTimeStepsCallsAndCommits(t *testing.T) {
	is := is.New(t)
	const conn = "fixture.default"
	svc := startService(t, session.Factories{config.TransportStdio: fakes.NewInMemory(nil)}, stdioSource(conn, "in-memory"))
	c := svc.dial(t)
	counter := buildToolDeploymentFor(t, c, conn, "counter")
	failing := buildToolDeploymentFor(t, c, conn, "fail")
	ctx := testContext(t)
	for _, dep := range []string{counter, counter, failing} {
		_, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: dep})
		is.NoErr(err) // the run is answered (the failing one as failed)
	}
	last, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: failing})
	is.NoErr(err)
	is.Equal(last.Status, "failed") // the tool's error fails the run
	var discarded any
	is.True(c.Call(ctx, "no.such.method", nil, &discarded) != nil) // unknown: -32601

	f := scrapeMetrics(t, svc.URL)
	value := func(name string, labels ...string) float64 {
		v, found := f.Value(name, labels...)
		if !found {
			t.Logf("no series %s%v", name, labels)
		}
		is.True(found) // the series is exposed
		return v
	}
	// Runs, by deployment and final status.
	is.Equal(value("mcpflow_runs_started_total", "deployment", counter), 2.0)
	is.Equal(value("mcpflow_runs_started_total", "deployment", failing), 2.0)
	is.Equal(value("mcpflow_runs_ended_total", "deployment", counter, "status", "completed"), 2.0)
	is.Equal(value("mcpflow_runs_ended_total", "deployment", failing, "status", "failed"), 2.0)
	// Steps and tool calls, by connection, tool and outcome.
	is.Equal(f.Type("mcpflow_step_duration_seconds"), "HISTOGRAM")
	is.Equal(value("mcpflow_step_duration_seconds", "connection", conn, "tool", "counter", "outcome", "ok"), 2.0)
	is.Equal(value("mcpflow_step_duration_seconds", "connection", conn, "tool", "fail", "outcome", "error"), 2.0)
	is.Equal(f.Type("mcpflow_tool_call_duration_seconds"), "HISTOGRAM")
	is.Equal(value("mcpflow_tool_call_duration_seconds", "connection", conn, "tool", "counter"), 2.0)
	is.Equal(value("mcpflow_tool_call_duration_seconds", "connection", conn, "tool", "fail", "outcome", "error"), 2.0)
	// The one shared session, open.
	is.Equal(value("mcpflow_sessions_open", "connection", conn), 1.0)
	value("mcpflow_session_calls_in_flight", "connection", conn)
	value("mcpflow_session_calls_queued", "connection", conn)
	// The edge and the store.
	is.Equal(value("mcpflow_websocket_connections"), 1.0)
	is.Equal(value("mcpflow_requests_total", "method", p.MethodRunsStart, "code", "ok"), 4.0)
	is.Equal(value("mcpflow_requests_total", "method", "other", "code", "-32601"), 1.0)
	is.Equal(f.Type("mcpflow_store_commit_duration_seconds"), "HISTOGRAM")
	is.Equal(value("mcpflow_store_commit_duration_seconds", "operation", "create_run"), 4.0)
	is.True(value("mcpflow_store_commit_duration_seconds", "operation", "record_progress") >= 4)

	// Bounded labels: no run id, no method the client made up.
	for name, fam := range f {
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if strings.HasPrefix(l.GetValue(), "run_") || l.GetValue() == "no.such.method" {
					t.Logf("%s has label %s=%q", name, l.GetName(), l.GetValue())
					is.Fail() // labels stay bounded
				}
			}
		}
	}
}

func TestMetricsOfTwoServicesInOneProcessAreTheirOwn(t *testing.T) {
	is := is.New(t)
	factory := session.Factories{config.TransportStdio: fakes.NewInMemory(nil)}
	one := startService(t, factory, stdioSource("fixture.default", "in-memory"))
	two := startService(t, factory, stdioSource("fixture.default", "in-memory"))
	c := one.dial(t)
	dep := buildToolDeploymentFor(t, c, "fixture.default", "counter")
	_, err := c.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: dep})
	is.NoErr(err)
	started, _ := scrapeMetrics(t, one.URL).Value("mcpflow_runs_started_total")
	is.Equal(started, 1.0)
	_, found := scrapeMetrics(t, two.URL).Value("mcpflow_runs_started_total")
	is.True(!found) // the other service started no run
}
