package integration

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/metrics/metricstest"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/procs"
)

// The scale benchmarks measure issue 11's goals 5 to 7 on the real
// binary, its upstreams fakemcp processes of their own, so that what /proc
// tells of mcpflow is mcpflow's alone:
//
//   - BenchmarkScaleIdleSessions (goal 5): the memory, goroutines and file
//     descriptors of 10,000 idle HTTP sessions, and the startup with them,
//     against the same process with 10 sources;
//   - BenchmarkScaleConcurrentRuns (goals 6 and 7): bursts of 1,000 runs
//     at once of a 10 ms tool spread over 100 sources, with 100 and with
//     10,000 sources configured, against 1,000 direct go-sdk calls at once
//     on open sessions to the same upstreams; and that the load cost no
//     upstream session.
//
// They take minutes at 10,000 sources: run them by name, once each,
//
//	go test -run '^$' -bench Scale -benchtime 1x -timeout 60m ./integration/
const (
	scaleUpstreams = 4      // fakemcp processes, the sources spread over them round-robin
	scaleBase      = 10     // sources of the baseline process
	scaleMany      = 10_000 // sources of the measured process
	scaleUsed      = 100    // sources the runs call
	scaleBurst     = 1_000  // runs, or calls, started at once
	// scaleClients are the WebSocket connections a burst shares: 50 runs
	// each, within the edge's 64 requests in flight per connection.
	scaleClients = 20
	scaleToolMS  = 10 // how long the sleep tool sleeps
	// scaleOpenWait bounds the wait for every session to open; scaleCallWait
	// bounds each run or call of a burst.
	scaleOpenWait = 5 * time.Minute
	scaleCallWait = 2 * time.Minute
	// scalePoll is how often the statuses are polled while sessions open.
	scalePoll = 2 * time.Second
)

// BenchmarkScaleIdleSessions (goal 5) starts mcpflow on a fresh store with
// 10 sources, then with 10,000, waits until every session is open and
// reads what each process holds; then it restarts the second on its store,
// where the catalogs are now. Per session is (many − base) / (sessions
// open in many − in base). It does so with the sessions listening for
// their servers' notifications (a stream each, the default) and with
// `listen: false`. What go-sdk's own state of such a session is, next to
// mcpflow's, BenchmarkIdleSessionState measures.
func BenchmarkScaleIdleSessions(b *testing.B) {
	skipScale(b)
	up := startUpstreams(b, scaleUpstreams)
	for _, listen := range []bool{true, false} {
		b.Run(fmt.Sprintf("listen=%t", listen), func(b *testing.B) {
			sum := figures{}
			for b.Loop() {
				base := measureIdle(b, up, scaleBase, listen)
				many := measureIdle(b, up, scaleMany, listen)
				sessions := float64(many.open - base.open)
				sum.add(figures{
					"MB_rss":                 mb(many.RSSBytes),
					"MB_rss_base":            mb(base.RSSBytes),
					"MB_per_1k_sessions":     mb(many.RSSBytes-base.RSSBytes) / sessions * 1000,
					"KB_heap/session":        (many.heap - base.heap) / 1024 / sessions,
					"goroutines/session":     (many.goroutines - base.goroutines) / sessions,
					"fds/session":            float64(many.FDs-base.FDs) / sessions,
					"sessions_open":          float64(many.open),
					"startup_ms":             ms(many.startup),
					"startup_base_ms":        ms(base.startup),
					"startup_restart_ms":     ms(many.restart),
					"all_open_s":             many.allOpen.Seconds(),
					"upstream_fds_max":       float64(many.upstreamFDs),
					"connect_failures_total": many.connectFailures,
				})
			}
			sum.report(b)
		})
	}
}

// BenchmarkScaleConcurrentRuns (goals 6 and 7): with 100 and with 10,000
// sources configured, every session open, "direct" makes bursts of 1,000
// go-sdk CallTool calls at once of the sleep tool (10 ms) on 100 open
// sessions to the upstreams of the first 100 sources; "mcpflow" makes
// bursts of 1,000 one-step runs at once that call it, spread over those
// 100 sources through /ws. After the runs, every session must still be
// the one it was before (goal 7: same generation and sessions opened, still
// open); a lost one fails the benchmark.
func BenchmarkScaleConcurrentRuns(b *testing.B) {
	skipScale(b)
	for _, n := range []int{scaleUsed, scaleMany} {
		b.Run(fmt.Sprintf("sources=%d", n), func(b *testing.B) {
			rig := startScaleRig(b, n, scaleUsed)
			var direct latencies
			b.Run("direct", func(b *testing.B) {
				direct = burst(b, scaleBurst, rig.directCalls(b))
				direct.report(b, nil)
			})
			b.Run("mcpflow", func(b *testing.B) {
				var runs latencies
				rig.server.profile(b, fmt.Sprintf("runs-%d", n), func() { runs = burst(b, scaleBurst, rig.runs(b)) })
				runs.report(b, &direct)
				rig.server.keptSessions(b, rig.before)
			})
		})
	}
}

// TestScaleManySourcesServeAndKeepTheirSessions is the quick form of the
// benchmarks: 200 HTTP sources, spread over the upstreams, all open; a
// burst of 200 runs over 20 of them all complete, and no session is lost.
func TestScaleManySourcesServeAndKeepTheirSessions(t *testing.T) {
	skipScale(t)
	is := is.New(t)
	rig := startScaleRig(t, 200, 20)
	is.Equal(len(rig.before), 200) // every source has its session
	run := rig.runs(t)
	ctx := testContext(t)
	errs := make([]error, 200)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = run(ctx, i) })
	}
	wg.Wait()
	for _, err := range errs {
		is.NoErr(err) // every run completes
	}
	rig.server.keptSessions(t, rig.before)
}

func skipScale(tb testing.TB) {
	if testing.Short() {
		tb.Skip("scale: starts the real binary and upstream processes")
	}
}

// scaleSourceID names the i-th source.
func scaleSourceID(i int) string { return fmt.Sprintf("up%05d.default", i) }

// upstream is a fakemcp process serving streamable HTTP on addr.
type upstream struct {
	*fakeHTTP
	addr string
}

// startUpstreams starts n fakemcp processes serving streamable HTTP, each
// session with its own server, until the benchmark ends.
func startUpstreams(tb testing.TB, n int) []upstream {
	up := make([]upstream, n)
	for i := range up {
		addr := freeAddr(tb)
		up[i] = upstream{fakeHTTP: startFakeHTTP(tb, addr), addr: addr}
	}
	return up
}

// scaleSources are n HTTP sources spread round-robin over up.
func scaleSources(n int, up []upstream) []config.Connection {
	out := make([]config.Connection, n)
	for i := range out {
		out[i] = httpSource(scaleSourceID(i), up[i%len(up)].addr)
	}
	return out
}

// upstreamFDs is the most file descriptors one of up holds.
func upstreamFDs(tb testing.TB, up []upstream) int {
	most := 0
	for _, u := range up {
		use, err := procs.UsageOf(u.cmd.Process.Pid)
		is.New(tb).NoErr(err)
		most = max(most, use.FDs)
	}
	return most
}

// scaleServer is a real `mcpflow serve` with HTTP sources, its /ws URL
// and a client of it.
type scaleServer struct {
	*process
	cfgPath string
	n       int
	c       *client.Client
	startup time.Duration // from exec to a JSON-RPC request answered
}

// startScaleServer serves sources on a fresh store under dir, with room
// for a burst of runs at once; without listen, its HTTP sessions hold no
// stream for their servers' notifications.
func startScaleServer(tb testing.TB, dir string, sources []config.Connection, listen bool) *scaleServer {
	srv := config.Server{Sources: sources, Edge: &config.Edge{MaxConcurrentRuns: scaleBurst}}
	if !listen {
		srv.Supervision = &config.Supervision{Listen: &listen}
	}
	cfgPath := writeServerConfig(tb, dir, srv)
	return serveScale(tb, cfgPath, len(sources), "serve.log")
}

// serveScale starts mcpflow on cfgPath and times its startup: from exec
// until /readyz says ready and a JSON-RPC request over /ws is answered.
func serveScale(tb testing.TB, cfgPath string, n int, logName string) *scaleServer {
	tb.Helper()
	is := is.New(tb)
	is.Helper()
	began := time.Now()
	// startProcess returns once /healthz answers: the listener is bound
	// before the start, so the request waits until mcpflow serves.
	pr := startProcess(tb, cfgPath, logName, "--run-wait", scaleCallWait.String())
	code, _, err := readyz(pr.httpBase())
	is.NoErr(err)
	is.Equal(code, http.StatusOK) // ready once it serves
	c := dialURL(tb, pr.url)
	_, err = c.Health(testContext(tb))
	is.NoErr(err) // a JSON-RPC request is answered
	return &scaleServer{process: pr, cfgPath: cfgPath, n: n, c: c, startup: time.Since(began)}
}

// sessionState is what a connection's status says of its upstream
// session.
type sessionState struct {
	state       string
	generation  int64
	opened      int
	missedPings int
}

// sessions reads every connection's session state, waiting as long as a
// run of a burst may: a loaded server answers slowly.
func (s *scaleServer) sessions(tb testing.TB) map[string]sessionState {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), scaleCallWait)
	defer cancel()
	st, err := s.c.GetConnectionStatuses(ctx)
	is.New(tb).NoErr(err)
	out := make(map[string]sessionState, len(st.Statuses))
	for _, row := range st.Statuses {
		out[row.ConnectionID] = sessionState{state: row.Session.State, generation: row.Session.Generation, opened: row.Session.SessionsOpened, missedPings: row.Session.MissedPings}
	}
	return out
}

// waitOpen polls the statuses until every session is open, for at most
// scaleOpenWait, and returns how many are and how long from its start
// mcpflow took. Sessions that do not open are a finding, not a failure:
// it logs how many and goes on.
func (s *scaleServer) waitOpen(tb testing.TB, began time.Time) (int, time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(scaleOpenWait)
	tick := time.NewTicker(scalePoll)
	defer tick.Stop()
	for {
		open := 0
		for _, st := range s.sessions(tb) {
			if st.state == "open" {
				open++
			}
		}
		if open == s.n {
			return open, time.Since(began)
		}
		if time.Now().After(deadline) {
			tb.Logf("%d of %d sessions open after %s", open, s.n, scaleOpenWait)
			return open, time.Since(began)
		}
		<-tick.C // poll interval
	}
}

// keptSessions checks goal 7: every session open before is still open
// and still the same (same generation, no other opened), and reports the
// sessions lost and the keepalive pings missed; a lost session fails tb.
func (s *scaleServer) keptSessions(tb testing.TB, before map[string]sessionState) {
	tb.Helper()
	after := s.sessions(tb)
	lost, missed := 0, 0
	var examples []string
	for id, was := range before {
		now := after[id]
		missed += now.missedPings
		if was.state == "open" && (now.state != "open" || now.generation != was.generation || now.opened != was.opened) {
			lost++
			if len(examples) < 5 {
				examples = append(examples, fmt.Sprintf("%s: %+v → %+v", id, was, now))
			}
		}
	}
	if b, ok := tb.(*testing.B); ok {
		b.ReportMetric(float64(lost), "sessions_lost")
		b.ReportMetric(float64(missed), "missed_pings")
	}
	if lost > 0 {
		tb.Fatalf("%d of %d sessions lost to the load (%d pings missed), e.g. %v; the server's warnings:\n%s",
			lost, len(before), missed, examples, strings.Join(s.warnings(tb, 8), "\n"))
	}
}

// warnings are the server's logged warnings and errors, counted by
// message, the most frequent first, at most n, each with its first line.
func (s *scaleServer) warnings(tb testing.TB, n int) []string {
	tb.Helper()
	data, err := os.ReadFile(s.logs)
	is.New(tb).NoErr(err)
	counts, first := map[string]int{}, map[string]string{}
	for line := range strings.SplitSeq(string(data), "\n") {
		if !strings.Contains(line, "level=WARN") && !strings.Contains(line, "level=ERROR") {
			continue
		}
		_, msg, _ := strings.Cut(line, "msg=")
		if quoted, err := strconv.QuotedPrefix(msg); err == nil {
			msg = quoted
		}
		counts[msg]++
		first[msg] = cmp.Or(first[msg], line[:min(len(line), 300)])
	}
	msgs := slices.Collect(maps.Keys(counts))
	slices.SortFunc(msgs, func(a, b string) int { return counts[b] - counts[a] })
	out := make([]string, 0, n)
	for _, msg := range msgs[:min(n, len(msgs))] {
		out = append(out, fmt.Sprintf("%6d× %s", counts[msg], first[msg]))
	}
	return out
}

// profile runs measure and, when MCPFLOW_SCALE_PERF names a folder,
// records a CPU profile of the server meanwhile to folder/name.perf with
// Linux perf (mcpflow serves no /debug/pprof): read it with
// `perf report -i FILE --no-children --sort symbol`.
func (s *scaleServer) profile(tb testing.TB, name string, measure func()) {
	tb.Helper()
	dir := os.Getenv("MCPFLOW_SCALE_PERF")
	if dir == "" {
		measure()
		return
	}
	is := is.New(tb)
	perf := exec.Command("perf", "record", "-F", "499", "-g", "-p", strconv.Itoa(s.cmd.Process.Pid), "-o", filepath.Join(dir, name+".perf"))
	is.NoErr(perf.Start()) // perf is installed
	done := make(chan error, 1)
	go func() { done <- perf.Wait() }()
	measure()
	is.NoErr(perf.Process.Signal(os.Interrupt)) // perf writes its file and exits
	select {
	case <-done:
	case <-time.After(time.Minute):
		_ = perf.Process.Kill()
		<-done
		tb.Fatalf("perf did not exit within a minute of SIGINT")
	}
}

// serverUsage is what the mcpflow process holds once its sessions are open.
type serverUsage struct {
	procs.Usage
	goroutines, heap float64 // go_goroutines, go_memstats_heap_inuse_bytes
	connectFailures  float64 // mcpflow_session_connect_failures_total, summed
}

// usage reads /proc and /metrics of the server.
func (s *scaleServer) usage(tb testing.TB) serverUsage {
	tb.Helper()
	is := is.New(tb)
	use, err := procs.UsageOf(s.cmd.Process.Pid)
	is.NoErr(err)
	m := scrapeMetrics(tb, s.url)
	goroutines, ok := m.Value("go_goroutines")
	is.True(ok) // the Go collector is served
	heap, ok := m.Value("go_memstats_heap_inuse_bytes")
	is.True(ok)
	return serverUsage{Usage: use, goroutines: goroutines, heap: heap, connectFailures: counterSum(m, "mcpflow_session_connect_failures_total")}
}

// counterSum is the sum of the counter name over its labels (0 when no
// series has been counted yet).
func counterSum(m metricstest.Families, name string) float64 {
	sum := 0.0
	if f, ok := m[name]; ok {
		for _, series := range f.GetMetric() {
			sum += series.GetCounter().GetValue()
		}
	}
	return sum
}

// idleFigures are what measureIdle measured of one process.
type idleFigures struct {
	serverUsage
	open    int           // sessions open
	startup time.Duration // fresh store: the catalogs are listed
	allOpen time.Duration // from exec until every session was open
	restart time.Duration // the same store again: the catalogs are stored
	// upstreamFDs is the most file descriptors an upstream held meanwhile.
	upstreamFDs int
}

// measureIdle serves n sources of up on a fresh store, waits until their
// sessions are open, reads what the process holds, stops it, and times a
// restart on the same store.
func measureIdle(b *testing.B, up []upstream, n int, listen bool) idleFigures {
	b.Helper()
	began := time.Now()
	s := startScaleServer(b, b.TempDir(), scaleSources(n, up), listen)
	open, allOpen := s.waitOpen(b, began)
	use, upFDs := s.usage(b), upstreamFDs(b, up)
	b.Logf("%d sources: %d open after %s, %+v; the server's warnings:\n%s", n, open, allOpen, use, strings.Join(s.warnings(b, 8), "\n"))
	s.stop(b)
	again := serveScale(b, s.cfgPath, n, "restart.log")
	again.stop(b)
	return idleFigures{serverUsage: use, open: open, startup: s.startup, allOpen: allOpen, restart: again.startup, upstreamFDs: upFDs}
}

// scaleRig is the fixture of the load: upstreams, mcpflow with n sources
// whose sessions are all open, a deployment of the sleep tool on each of
// the first `used`, clients to start runs, and the sessions before any
// load.
type scaleRig struct {
	up          []upstream
	server      *scaleServer
	deployments []string
	clients     []*client.Client
	before      map[string]sessionState
}

func startScaleRig(tb testing.TB, n, used int) *scaleRig {
	tb.Helper()
	up := startUpstreams(tb, scaleUpstreams)
	began := time.Now()
	s := startScaleServer(tb, tb.TempDir(), scaleSources(n, up), true)
	if open, took := s.waitOpen(tb, began); open < n {
		tb.Fatalf("only %d of %d sessions opened within %s", open, n, took)
	}
	rig := &scaleRig{up: up, server: s, deployments: deploySleep(tb, s.c, used)}
	for range scaleClients {
		rig.clients = append(rig.clients, dialURL(tb, s.url))
	}
	// One run of each deployment first, unmeasured: the first run of a
	// deployment loads what the others find ready.
	run := rig.runs(tb)
	for i := range rig.deployments {
		is.New(tb).NoErr(run(testContext(tb), i))
	}
	rig.before = s.sessions(tb)
	return rig
}

// deploySleep deploys the sleep tool on each of the first `used` sources:
// one artifact, built on the first, and a deployment binding it to each.
func deploySleep(tb testing.TB, c *client.Client, used int) []string {
	tb.Helper()
	is := is.New(tb)
	ctx := testContext(tb)
	first := scaleSourceID(0)
	ids := []string{buildToolDeployment(tb, c, first, "sleep", "sleep_scale")}
	for i := 1; i < used; i++ {
		dep, err := c.SaveDeployment(ctx, p.Object{
			"id": fmt.Sprintf("sleep_scale.up%05d", i), "artifact_id": "sleep_scale", "artifact_version": 1,
			"bindings": []any{p.Object{"logical_source": first, "concrete_source": scaleSourceID(i)}},
		})
		is.NoErr(err)
		is.True(dep.Saved)
		ids = append(ids, dep.DeploymentID)
	}
	return ids
}

// runs is the i-th run of a burst: the sleep tool's deployment i (modulo
// the deployments) through client i (modulo the clients).
func (r *scaleRig) runs(tb testing.TB) func(context.Context, int) error {
	input := p.Object{"ms": scaleToolMS}
	return func(ctx context.Context, i int) error {
		run, err := r.clients[i%len(r.clients)].RunDeployment(ctx, p.StartRunParams{DeploymentID: r.deployments[i%len(r.deployments)], WorkflowInput: input})
		if err != nil {
			return err
		}
		if run.Status != "completed" {
			return fmt.Errorf("run %s: %v", run.Status, deref(run.Error))
		}
		return nil
	}
}

// directCalls opens one go-sdk session to the upstream of each deployed
// source, closed when b ends, and returns the i-th call of a burst: the
// sleep tool on session i (modulo the sessions).
func (r *scaleRig) directCalls(b *testing.B) func(context.Context, int) error {
	b.Helper()
	ctx := testContext(b)
	pool := http.DefaultTransport.(*http.Transport).Clone()
	pool.MaxIdleConnsPerHost = scaleBurst // as many connections kept as calls at once
	b.Cleanup(pool.CloseIdleConnections)
	sessions := make([]*mcp.ClientSession, len(r.deployments))
	for i := range sessions {
		url := "http://" + r.up[i%len(r.up)].addr + "/mcp"
		sessions[i] = connect(ctx, b, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: pool}})
		b.Cleanup(func() { _ = sessions[i].Close() })
	}
	return func(ctx context.Context, i int) error {
		res, err := sessions[i%len(sessions)].CallTool(ctx, &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": scaleToolMS}})
		if err == nil && res.IsError {
			err = fmt.Errorf("sleep: tool error %v", res.Content)
		}
		return err
	}
}

// latencies are the durations of a burst's calls, and their errors.
type latencies struct {
	took   []time.Duration
	errors int
	first  error
}

// burst makes b.N bursts of n calls released at once, call(ctx, i) being
// the i-th of a burst, each bounded by scaleCallWait.
func burst(b *testing.B, n int, call func(context.Context, int) error) latencies {
	var l latencies
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), scaleCallWait)
		took := make([]time.Duration, n)
		errs := make([]error, n)
		release := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				<-release
				began := time.Now()
				errs[i] = call(ctx, i)
				took[i] = time.Since(began)
			})
		}
		close(release)
		wg.Wait()
		cancel()
		l.took = append(l.took, took...)
		for _, err := range errs {
			if err != nil {
				l.errors++
				l.first = cmp.Or(l.first, err)
			}
		}
	}
	return l
}

// percentile is the nearest-rank q-th percentile (0 < q ≤ 1) of l.
func (l latencies) percentile(q float64) time.Duration {
	sorted := slices.Sorted(slices.Values(l.took))
	return sorted[max(int(math.Ceil(q*float64(len(sorted))))-1, 0)]
}

// report reports the percentiles and the errors, and, given the direct
// calls' latencies, the ratios to them.
func (l latencies) report(b *testing.B, direct *latencies) {
	if l.errors > 0 {
		b.Logf("%d of %d calls failed, the first: %v", l.errors, len(l.took), l.first)
	}
	p50, p99 := l.percentile(0.50), l.percentile(0.99)
	// Logged too: a benchmark that fails afterwards reports no metric.
	b.Logf("%d calls: p50 %s, p99 %s, max %s, %d errors", len(l.took), p50, p99, l.percentile(1), l.errors)
	b.ReportMetric(ms(p50), "p50_ms")
	b.ReportMetric(ms(p99), "p99_ms")
	b.ReportMetric(ms(l.percentile(1)), "max_ms")
	b.ReportMetric(float64(l.errors), "errors")
	if direct != nil && len(direct.took) > 0 {
		b.ReportMetric(float64(p50)/float64(direct.percentile(0.50)), "p50_x_direct")
		b.ReportMetric(float64(p99)/float64(direct.percentile(0.99)), "p99_x_direct")
	}
}

// figures sum a benchmark's metrics over its iterations, by unit.
type figures map[string]float64

func (f figures) add(g figures) {
	for unit, v := range g {
		f[unit] += v
	}
}

// report reports each metric's mean over b.N iterations.
func (f figures) report(b *testing.B) {
	for unit, v := range f {
		b.ReportMetric(v/float64(b.N), unit)
	}
}

func mb(bytes int64) float64     { return float64(bytes) / (1 << 20) }
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
