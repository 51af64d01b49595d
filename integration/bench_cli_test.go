package integration

import (
	"strings"
	"testing"

	"github.com/matryer/is"
)

// benchOutput is what `mcpflow bench -o json` prints.
type benchOutput struct {
	Deployment     string  `json:"deployment"`
	Clients        int     `json:"clients"`
	Runs           int     `json:"runs"`
	OK             int     `json:"ok"`
	Errors         int     `json:"errors"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	RunsPerSecond  float64 `json:"runs_per_second"`
	LatencyMS      struct {
		Min, Mean, P50, P90, P99, Max float64
	} `json:"latency_ms"`
	TopErrors []struct {
		Message string `json:"message"`
		Count   int    `json:"count"`
	} `json:"top_errors"`
}

// sane checks a bench of runs that all completed.
func (b benchOutput) sane(t *testing.T, deployment string, clients, runs int) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	is.Equal(b.Deployment, deployment)
	is.Equal(b.Clients, clients)
	is.Equal(b.Runs, runs)
	is.Equal(b.OK, runs)          // every run completed
	is.Equal(b.Errors, 0)         // none failed
	is.Equal(len(b.TopErrors), 0) // so no error is listed
	is.True(b.ElapsedSeconds > 0) // the load took time
	is.True(b.RunsPerSecond > 0)  // and sustained a throughput
	l := b.LatencyMS
	is.True(0 < l.Min && l.Min <= l.P50) // percentiles in order
	is.True(l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.Max)
	is.True(l.Min <= l.Mean && l.Mean <= l.Max)
	is.True(l.Max < 30_000) // within the per-call timeout
	// Runs back to back on clients connections take at least the runs'
	// latencies shared over the clients (with slack for rounding).
	is.True(b.ElapsedSeconds*1000*float64(clients)*1.01 >= l.Mean*float64(runs))
}

// TestBenchDrivesARealServerAndPrintsJSON runs `mcpflow bench` of the
// real binary against a real `mcpflow serve` with the demo source and a
// fake MCP server: for a capability it scaffolds and deploys, for a
// deployment it is given, and with runs that fail (exit 2).
func TestBenchDrivesARealServerAndPrintsJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	is := is.New(t)
	dir := t.TempDir()
	cfgPath := writeConfig(t, dir, stdioSource("demo.default", binary, "demo-server"), stdioSource("fake.a", fakeMCP))
	srv := startProcess(t, cfgPath, "serve.log", "--run-wait", "30s")
	c := cliTool{t: t, url: srv.url}

	// A capability: scaffolded, deployed, then 40 runs on 4 clients.
	b := cliJSON[benchOutput](t, c.want(0, "bench", "--capability", "demo.default.counter", "--clients", "4", "--runs", "40", "-o", "json"))
	b.sane(t, "counter_bench.default", 4, 40)
	// Again: the scaffold is reused.
	cliJSON[benchOutput](t, c.want(0, "bench", "--capability", "demo.default.counter", "--clients", "2", "--runs", "4", "-o", "json")).
		sane(t, "counter_bench.default", 2, 4)

	// A deployment, with an input, bounded by the number of runs.
	c.want(0, "workflow", "new", "--from-capability", "fake.a.echo")
	b = cliJSON[benchOutput](t, c.want(0, "bench", "echo_workflow.default", "--input", `{"message":"hi"}`,
		"--clients", "3", "--runs", "30", "--warmup", "2", "-o", "json"))
	b.sane(t, "echo_workflow.default", 3, 30)

	// Bounded by a duration instead: some runs, all completed.
	b = cliJSON[benchOutput](t, c.want(0, "bench", "counter_bench.default", "--clients", "2", "--duration", "300ms", "-o", "json"))
	is.True(b.Runs > 0)
	b.sane(t, "counter_bench.default", 2, b.Runs)

	// The table for people.
	r := c.want(0, "bench", "counter_bench.default", "--clients", "2", "--runs", "6")
	is.True(strings.Contains(r.stdout, "6 (6 ok, 0 errors)"))
	is.True(strings.Contains(r.stdout, "runs/s"))

	// Runs that fail: counted by message, exit 2, the JSON still printed.
	c.want(0, "workflow", "new", "--from-capability", "fake.a.fail")
	r = c.want(2, "bench", "fail_workflow.default", "--input", `{"message":"boom"}`, "--clients", "2", "--runs", "6", "--warmup", "0", "-o", "json")
	b = cliJSON[benchOutput](t, r)
	is.Equal(b.Errors, 6)
	is.Equal(b.OK, 0)
	is.Equal(len(b.TopErrors), 1)
	is.Equal(b.TopErrors[0].Count, 6)
	is.True(strings.Contains(b.TopErrors[0].Message, "run failed"))
	is.True(strings.Contains(r.stderr, "6 of 6 runs did not complete"))
	// A failing warmup stops bench before the load.
	r = c.want(2, "bench", "fail_workflow.default", "--input", `{"message":"boom"}`, "--runs", "6")
	is.True(strings.Contains(r.stderr, "warmup run"))

	// No server: exit 4.
	down := cliTool{t: t, url: "ws://" + freeAddr(t) + "/ws"}
	down.want(4, "bench", "counter_bench.default", "--runs", "1")
}
