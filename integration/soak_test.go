package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/retention"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
	"github.com/mcpflow/mcpflow/fakes"
)

// The soak's settings: MCPFLOW_SOAK is how long it runs (default 60s,
// as CI runs it; docs/performance.md has a 30 min one), MCPFLOW_SOAK_RATE
// how many runs it starts a second (default 100).
const (
	soakClients = 4
	soakSamples = 25 // the first at the start, the last at the end
	// soakTolerance is how far above the middle third's peak the last
	// third's mean may be: the noise of a sample (a write-ahead log
	// between checkpoints, a heap between two runs). A leak of a
	// kilobyte a run, 6 MB an hour at 100 runs a second, or a store
	// that keeps the runs it should prune, is well beyond it.
	soakTolerance = 1.05
	soakRetention = 2 // seconds a finished run is kept
)

// soakSample is what the process holds at one time.
type soakSample struct {
	at         time.Duration
	rss        int64 // bytes
	heap       uint64
	goroutines int
	files      int   // open file descriptors
	store      int64 // the database file and its write-ahead log, bytes
	runs       int   // runs kept in the store
	ended      int   // runs completed so far
}

// BenchmarkSoak runs a steady load of runs (MCPFLOW_SOAK_RATE a second,
// from 4 WebSocket clients, each run one counter call on an in-process
// MCP server) for MCPFLOW_SOAK on the SQLite store, with a retention of
// 2 s, and samples the process: resident memory, live Go heap, goroutines,
// open files, the store's files and the runs it keeps. After a warm-up
// of a third of the time, each stays flat: the mean of the last third's
// samples is no more than 5% above the largest of the middle third's (a
// leak, a store that keeps what it should prune, grows through both).
// Run it with -benchtime=1x; it ignores b.N.
func BenchmarkSoak(b *testing.B) {
	duration, rate := soakSettings(b)
	root := b.TempDir()
	// The admin event log fills to its bound (10,000: two events a run)
	// in the first 50 s at 100 runs a second; with a bound of 1,000 even
	// a short soak is past it.
	st, err := sqlite.Open(b.Context(), filepath.Join(root, app.DatabaseFile),
		sqlite.WithStoreOptions(store.WithRetention(soakRetention*time.Second), store.WithMaxEvents(1000)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := st.Close(); err != nil {
			b.Error(err)
		}
	})
	svc := startServiceTuned(b, func(o *app.Options) {
		o.Store = st
		o.Transports = session.Factories{config.TransportStdio: fakes.NewInMemory(nil)}
		tombstones := int64(10)
		o.Retention = retention.OptionsFor(&config.Retention{TombstoneSeconds: &tombstones, IntervalMS: 500}, nil)
	}, stdioSource("fixture.default", "in-memory"))
	c := svc.dial(b)
	deployment := buildCounterDeployment(b, c, "fixture.default")

	ctx, cancel := context.WithTimeout(context.Background(), duration+time.Minute)
	defer cancel()
	start := time.Now()
	end := start.Add(duration)
	var (
		mu     sync.Mutex
		ended  int
		failed []string
		wg     sync.WaitGroup
	)
	for i := range soakClients {
		cl := svc.dial(b)
		wg.Go(func() {
			// Each client starts its runs at its share of the rate, on
			// a schedule of its own: a steady load, not back to back.
			every := time.Duration(float64(time.Second) * soakClients / rate)
			next := start.Add(time.Duration(i) * every / soakClients)
			for next.Before(end) {
				if wait := time.Until(next); wait > 0 {
					select {
					case <-time.After(wait):
					case <-ctx.Done():
						return
					}
				}
				run, err := cl.RunDeployment(ctx, p.StartRunParams{DeploymentID: deployment})
				mu.Lock()
				switch {
				case err != nil:
					failed = append(failed, err.Error())
				case run.Status != "completed":
					failed = append(failed, "run "+run.Status)
				default:
					ended++
				}
				mu.Unlock()
				next = next.Add(every)
			}
		})
	}
	samples := make([]soakSample, 0, soakSamples)
	sample := func() {
		mu.Lock()
		n := ended
		mu.Unlock()
		samples = append(samples, takeSample(ctx, b, c, root, time.Since(start), n))
	}
	sample()
	tick := time.NewTicker(duration / (soakSamples - 1))
	for len(samples) < soakSamples-1 {
		select {
		case <-tick.C:
			sample()
		case <-ctx.Done():
			b.Fatal("the soak overran its deadline")
		}
	}
	tick.Stop()
	wg.Wait()
	sample()

	b.Logf("soak: %v at %.0f runs/s from %d clients, retention %d s; %d runs completed, %d failed",
		duration, rate, soakClients, soakRetention, ended, len(failed))
	b.Logf("%8s %10s %10s %10s %6s %10s %6s", "at", "rss_MiB", "heap_MiB", "goroutines", "files", "store_MiB", "runs")
	for _, s := range samples {
		b.Logf("%8s %10.1f %10.1f %10d %6d %10.2f %6d", s.at.Round(time.Second), mib(s.rss), mib(int64(s.heap)), s.goroutines, s.files, mib(s.store), s.runs)
	}
	if len(failed) > 0 {
		b.Errorf("%d runs did not complete; the first: %s", len(failed), failed[0])
	}
	third := len(samples) / 3
	middle, last := samples[third:2*third], samples[2*third:]
	for _, series := range []struct {
		name string
		of   func(soakSample) float64
	}{
		{"resident memory", func(s soakSample) float64 { return float64(s.rss) }},
		{"Go heap", func(s soakSample) float64 { return float64(s.heap) }},
		{"goroutines", func(s soakSample) float64 { return float64(s.goroutines) }},
		{"open files", func(s soakSample) float64 { return float64(s.files) }},
		{"store size", func(s soakSample) float64 { return float64(s.store) }},
		{"runs kept", func(s soakSample) float64 { return float64(s.runs) }},
	} {
		peak, mean := 0.0, 0.0
		for _, s := range middle {
			peak = max(peak, series.of(s))
		}
		for _, s := range last {
			mean += series.of(s) / float64(len(last))
		}
		b.ReportMetric(mean/peak, strings.ReplaceAll(series.name, " ", "-")+"-last/middle")
		if mean > peak*soakTolerance {
			b.Errorf("%s grows after the warm-up: the last third's mean %.0f is more than 5%% above the middle third's peak %.0f", series.name, mean, peak)
		}
	}
	b.ReportMetric(float64(ended)/duration.Seconds(), "runs/s")
}

// soakSettings reads MCPFLOW_SOAK and MCPFLOW_SOAK_RATE.
func soakSettings(b *testing.B) (time.Duration, float64) {
	duration, rate := time.Minute, 100.0
	if v := os.Getenv("MCPFLOW_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 30*time.Second {
			b.Fatalf("MCPFLOW_SOAK=%q: want a duration of at least 30s", v)
		}
		duration = d
	}
	if v := os.Getenv("MCPFLOW_SOAK_RATE"); v != "" {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r <= 0 {
			b.Fatalf("MCPFLOW_SOAK_RATE=%q: want runs a second, above 0", v)
		}
		rate = r
	}
	return duration, rate
}

// takeSample measures the process and the store under root.
func takeSample(ctx context.Context, b *testing.B, c *client.Client, root string, at time.Duration, ended int) soakSample {
	var mem runtime.MemStats
	runtime.GC() // the heap that is live, not what garbage the last cycle left
	runtime.ReadMemStats(&mem)
	s := soakSample{at: at, heap: mem.HeapAlloc, goroutines: runtime.NumGoroutine(), ended: ended}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			s.rss = kb << 10
		}
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		b.Fatal(err)
	}
	s.files = len(fds)
	for _, name := range []string{app.DatabaseFile, app.DatabaseFile + "-wal"} {
		if info, err := os.Stat(filepath.Join(root, name)); err == nil {
			s.store += info.Size()
		}
	}
	list, err := c.ListRuns(ctx, p.ListRunsParams{})
	if err != nil {
		b.Fatal(fmt.Errorf("list runs: %w", err))
	}
	s.runs = list.Total
	return s
}

// mib is n bytes in MiB.
func mib(n int64) float64 { return float64(n) / (1 << 20) }
