package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/client"
)

func TestPercentileIsTheNearestRank(t *testing.T) {
	is := is.New(t)
	is.Equal(percentile(nil, 50), time.Duration(0)) // nothing measured
	one := []time.Duration{7}
	is.Equal(percentile(one, 1), time.Duration(7))
	is.Equal(percentile(one, 99), time.Duration(7))
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i + 1)
	}
	is.Equal(percentile(hundred, 50), time.Duration(50))
	is.Equal(percentile(hundred, 90), time.Duration(90))
	is.Equal(percentile(hundred, 99), time.Duration(99))
	is.Equal(percentile(hundred, 100), time.Duration(100))
	ten := hundred[:10]
	is.Equal(percentile(ten, 50), time.Duration(5))
	is.Equal(percentile(ten, 99), time.Duration(10)) // ⌈9.9⌉ = the 10th
	is.Equal(percentile(ten, 0.1), time.Duration(1)) // never below the first
}

func TestSummaryMergesTheClients(t *testing.T) {
	is := is.New(t)
	a := &benchWorker{keep: 100}
	b := &benchWorker{keep: 100}
	for i := 1; i <= 50; i++ {
		a.record(time.Duration(i) * time.Millisecond)
		b.record(time.Duration(50+i) * time.Millisecond)
	}
	a.fail(errors.New("run failed: boom"))
	b.fail(errors.New("run failed: boom"))
	b.fail(fmt.Errorf("workflow.runs.start: %w", client.ErrClosed))
	idle := &benchWorker{keep: 100} // a client that measured nothing

	s := summarize([]*benchWorker{a, b, idle}, 2*time.Second)
	is.Equal(s.OK, 100)
	is.Equal(s.Errors, 3)
	is.Equal(s.Runs, 103)
	is.Equal(s.RunsPerSecond, 50.0) // completed runs over the elapsed time
	is.Equal(s.LatencyMS, latencyMS{Min: 1, Mean: 50.5, P50: 50, P90: 90, P99: 99, Max: 100})
	is.Equal(s.TopErrors, []errorCount{
		{Message: "run failed: boom", Count: 2},
		{Message: "workflow.runs.start: " + client.ErrClosed.Error(), Count: 1},
	}) // most frequent first

	raw, err := json.Marshal(s)
	is.NoErr(err)
	var back map[string]any
	is.NoErr(json.Unmarshal(raw, &back))
	for _, field := range []string{"deployment", "clients", "runs", "ok", "errors", "elapsed_seconds", "runs_per_second", "latency_ms", "top_errors"} {
		_, ok := back[field]
		is.True(ok) // -o json has every field
	}

	none := summarize([]*benchWorker{idle}, time.Second)
	is.Equal(none.LatencyMS, latencyMS{}) // no completed run, no latency
	raw, err = json.Marshal(none)
	is.NoErr(err)
	is.True(strings.Contains(string(raw), `"top_errors":[]`)) // a list, never null
}

func TestWorkerMemoryIsBounded(t *testing.T) {
	is := is.New(t)
	w := &benchWorker{keep: 10}
	for i := 1; i <= 1000; i++ {
		w.record(time.Duration(i))
	}
	is.Equal(len(w.latencies), 10) // a sample, not every latency
	is.Equal(w.ok, 1000)
	is.Equal(w.minimum, time.Duration(1))
	is.Equal(w.maximum, time.Duration(1000)) // extremes are exact
	for i := range benchMaxMessages + 10 {
		w.fail(fmt.Errorf("run failed: run %d", i))
	}
	is.Equal(len(w.errors), benchMaxMessages+1) // the messages kept, and the others
	is.Equal(w.errors[benchOtherErrors], 10)
	is.Equal(topErrors(w.errors, benchTopErrors)[0], errorCount{Message: benchOtherErrors, Count: 10})
	is.Equal(len(topErrors(w.errors, benchTopErrors)), benchTopErrors)
}

func TestBenchUsageErrors(t *testing.T) {
	is := is.New(t)
	for _, args := range [][]string{
		{"bench"},
		{"bench", "x.default", "--capability", "demo.default.counter"},
		{"bench", "x.default", "--clients", "0"},
		{"bench", "x.default", "--runs", "-1"},
		{"bench", "a", "b"},
	} {
		code, _, errOut := runCLI(args...)
		is.Equal(code, ExitError)                              // a usage error
		is.True(strings.Contains(errOut, "--help' for usage")) // says where the usage is
	}
}

func TestBenchUnreachableExitsFour(t *testing.T) {
	is := is.New(t)
	code, _, errOut := runCLI("bench", "x.default", "--url", "ws://127.0.0.1:1/ws?key=secret-in-query", "--runs", "1", "--timeout", "2s")
	is.Equal(code, ExitUnreachable)
	is.True(!strings.Contains(errOut, "secret-in-query")) // no secret in the output
}
