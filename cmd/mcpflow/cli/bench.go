package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// benchFlags are the flags of `mcpflow bench`.
type benchFlags struct {
	capability string
	clients    int
	runs       int
	duration   time.Duration
	input      string
	warmup     int
}

// Bounds of what bench keeps in memory, whatever its load.
const (
	// benchMaxSamples bounds the latencies kept across all clients; past
	// it each client keeps a uniform sample of its own (reservoir).
	benchMaxSamples = 1 << 22
	// benchMaxMessages bounds the distinct error messages counted; the
	// others are counted under benchOtherErrors.
	benchMaxMessages = 64
	// benchTopErrors is how many error messages the summary lists.
	benchTopErrors = 5
	// benchDefaultDuration is how long bench runs when neither --runs nor
	// --duration is given.
	benchDefaultDuration = 10 * time.Second
)

// benchOtherErrors counts the errors whose message was not kept.
const benchOtherErrors = "(other errors)"

func newBenchCommand(r *remote) *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench (DEPLOYMENT | --capability CAP)",
		Short: "Load a running server with runs and report throughput and latency",
		Long: `Drive a running server over its WebSocket with --clients connections,
each starting runs of a deployment back to back (workflow.runs.start,
answered when the run ends), and report what it sustained: runs per
second, latency percentiles measured at the client, and the errors by
message. A run that does not complete is an error.

Give a DEPLOYMENT, or --capability CAP to scaffold, save and deploy a
one-step workflow that wraps CAP (as 'workflow new --from-capability'
does, with the ids <tool>_bench_ws, <tool>_bench and <tool>_bench.default;
running it again reuses them).

bench stops after --runs runs in all, or after --duration, whichever comes
first (neither: --duration ` + benchDefaultDuration.String() + `); a run
in flight at the end is waited for, up to --timeout. Each client first
makes --warmup runs that are not measured; one that fails stops bench.

The server's --run-wait must exceed a run's duration, or runs answer as
running and count as errors. Latencies are of the completed runs; runs
per second counts completed runs over the elapsed time.

With -o json: one object {deployment, clients, runs, ok, errors,
elapsed_seconds, runs_per_second, latency_ms: {min, mean, p50, p90, p99,
max}, top_errors: [{message, count}]}.

Exit code: 0 if every run completed, 2 if some did not, 4 if the server
is unreachable.`,
		Example: `  mcpflow bench --capability demo.default.counter --clients 16 --runs 2000
  mcpflow bench counter_workflow.default --duration 30s -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.MaximumNArgs(1)(cmd, args); err != nil {
				return err
			}
			return f.check(args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var input p.Object
			if f.input != "" {
				obj, err := readJSONArg(f.input, cmd.InOrStdin())
				if err != nil {
					return fmt.Errorf("--input: %w", err)
				}
				input = obj
			}
			return r.do(cmd, func(ctx context.Context, c *conn) error {
				deployment, err := f.deployment(ctx, c, args)
				if err != nil {
					return err
				}
				return f.bench(ctx, c, p.StartRunParams{DeploymentID: deployment, WorkflowInput: input})
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.capability, "capability", "", "scaffold and deploy a workflow that wraps this capability, and run it")
	fl.IntVar(&f.clients, "clients", 8, "concurrent client connections, each running one run at a time")
	fl.IntVar(&f.runs, "runs", 0, "measured runs in all, spread over the clients")
	fl.DurationVar(&f.duration, "duration", 0, "how long to start runs for (default "+benchDefaultDuration.String()+" without --runs)")
	fl.StringVar(&f.input, "input", "", "workflow input of each run: a JSON object, @FILE, or @- for stdin")
	fl.IntVar(&f.warmup, "warmup", 1, "unmeasured runs each client makes first")
	return cmd
}

// check validates the flags and arguments before anything connects.
func (f *benchFlags) check(args []string) error {
	switch {
	case len(args) == 1 && f.capability != "":
		return errors.New("give a DEPLOYMENT or --capability, not both")
	case len(args) == 0 && f.capability == "":
		return errors.New("give a DEPLOYMENT, or --capability CAP")
	case f.clients < 1:
		return errors.New("--clients must be at least 1")
	case f.runs < 0 || f.duration < 0 || f.warmup < 0:
		return errors.New("--runs, --duration and --warmup must not be negative")
	}
	if f.runs == 0 && f.duration == 0 {
		f.duration = benchDefaultDuration
	}
	return nil
}

// deployment is the deployment to run: the argument, or the one scaffolded
// for --capability.
func (f *benchFlags) deployment(ctx context.Context, c *conn, args []string) (string, error) {
	if len(args) == 1 {
		return args[0], nil
	}
	artifact := toolName(f.capability) + "_bench"
	s := scaffold{capability: f.capability, workspaceID: artifact + "_ws", artifactID: artifact, version: 1}
	quiet := *c
	quiet.out = io.Discard
	if err := s.run(ctx, &quiet); err != nil {
		return "", fmt.Errorf("bench --capability %s: %w", f.capability, err)
	}
	return s.deploymentID, nil
}

// bench connects the clients, warms them up, runs the load and prints
// its summary.
func (f *benchFlags) bench(ctx context.Context, c *conn, params p.StartRunParams) error {
	workers := make([]*benchWorker, f.clients)
	defer func() {
		for _, w := range workers {
			if w != nil {
				_ = w.cl.Close()
			}
		}
	}()
	for i := range workers {
		cl, err := c.r.dial(ctx)
		if err != nil {
			return err
		}
		workers[i] = &benchWorker{cl: cl, params: params, timeout: c.r.timeout, keep: max(benchMaxSamples/f.clients, 1)}
	}
	if err := f.warm(ctx, workers); err != nil {
		return err
	}

	var tickets atomic.Int64 // runs left to start, when --runs bounds them
	tickets.Store(int64(f.runs))
	var deadline time.Time
	began := time.Now()
	if f.duration > 0 {
		deadline = began.Add(f.duration)
	}
	more := func() bool {
		if ctx.Err() != nil || (!deadline.IsZero() && !time.Now().Before(deadline)) {
			return false
		}
		return f.runs == 0 || tickets.Add(-1) >= 0
	}
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() { w.load(ctx, more) })
	}
	wg.Wait()
	sum := summarize(workers, time.Since(began))
	sum.Deployment, sum.Clients = params.DeploymentID, f.clients

	if err := sum.print(c); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("bench interrupted: %w", ctx.Err())
	}
	if sum.Errors > 0 {
		return withCode(ExitRunNotCompleted, fmt.Errorf("%d of %d runs did not complete", sum.Errors, sum.Runs))
	}
	return nil
}

// warm makes each client's warmup runs, the clients side by side; the
// first that fails stops bench.
func (f *benchFlags) warm(ctx context.Context, workers []*benchWorker) error {
	errs := make([]error, len(workers))
	var wg sync.WaitGroup
	for i, w := range workers {
		wg.Go(func() {
			for range f.warmup {
				if _, err := w.start(ctx); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err == nil {
			continue
		}
		code := exitCode(err) // unreachable or refused: 4
		if code == ExitError {
			code = ExitRunNotCompleted
		}
		return withCode(code, fmt.Errorf("warmup run of %s: %w", workers[0].params.DeploymentID, err))
	}
	return nil
}

// benchWorker is one client connection of bench and what it measured.
// Only its own goroutine touches it until the load is over.
type benchWorker struct {
	cl      *client.Client
	params  p.StartRunParams
	timeout time.Duration
	keep    int // latencies kept at most

	ok        int
	seen      int             // completed runs whose latency was sampled
	latencies []time.Duration // a uniform sample of the completed runs' latencies
	minimum   time.Duration
	maximum   time.Duration
	total     time.Duration
	errors    map[string]int
	failed    int
}

// start starts one run and waits for its end, within the timeout. A run
// that does not complete is an error.
func (w *benchWorker) start(ctx context.Context) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	began := time.Now()
	var run p.RunResult
	if err := w.cl.Call(ctx, p.MethodRunsStart, w.params, &run); err != nil {
		return 0, err
	}
	took := time.Since(began)
	if run.Status != statusCompleted {
		msg := "run " + run.Status
		if run.Error != nil && *run.Error != "" {
			msg += ": " + *run.Error
		}
		return took, errors.New(msg)
	}
	return took, nil
}

// load starts runs back to back while more says so. It stops early when
// bench is interrupted or the connection is lost.
func (w *benchWorker) load(ctx context.Context, more func() bool) {
	for more() {
		took, err := w.start(ctx)
		switch {
		case err == nil:
			w.record(took)
		case ctx.Err() != nil:
			return // interrupted: the run is not counted
		default:
			w.fail(err)
			if errors.Is(err, client.ErrClosed) {
				return
			}
		}
	}
}

// record counts a completed run of latency took.
func (w *benchWorker) record(took time.Duration) {
	if w.ok == 0 || took < w.minimum {
		w.minimum = took
	}
	w.maximum = max(w.maximum, took)
	w.total += took
	w.ok++
	w.seen++
	if len(w.latencies) < w.keep {
		w.latencies = append(w.latencies, took)
	} else if i := rand.IntN(w.seen); i < w.keep {
		w.latencies[i] = took
	}
}

// fail counts a run that did not complete, by its message.
func (w *benchWorker) fail(err error) {
	if w.errors == nil {
		w.errors = map[string]int{}
	}
	w.failed++
	msg := clip(err.Error(), 200)
	if _, ok := w.errors[msg]; !ok && len(w.errors) >= benchMaxMessages {
		msg = benchOtherErrors
	}
	w.errors[msg]++
}

// benchSummary is what bench prints; its JSON is bench's -o json.
type benchSummary struct {
	Deployment     string        `json:"deployment"`
	Clients        int           `json:"clients"`
	Runs           int           `json:"runs"`
	OK             int           `json:"ok"`
	Errors         int           `json:"errors"`
	ElapsedSeconds float64       `json:"elapsed_seconds"`
	RunsPerSecond  float64       `json:"runs_per_second"`
	LatencyMS      latencyMS     `json:"latency_ms"`
	TopErrors      []errorCount  `json:"top_errors"`
	elapsed        time.Duration // for the table
}

// latencyMS are the completed runs' latencies in milliseconds.
type latencyMS struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// errorCount is how many runs failed with one message.
type errorCount struct {
	Message string `json:"message"`
	Count   int    `json:"count"`
}

// summarize merges the workers' measures over elapsed.
func summarize(workers []*benchWorker, elapsed time.Duration) benchSummary {
	var (
		sum     = benchSummary{elapsed: elapsed, ElapsedSeconds: elapsed.Seconds()}
		samples []time.Duration
		total   time.Duration
		lo, hi  time.Duration
		errs    = map[string]int{}
	)
	for _, w := range workers {
		if w.ok > 0 {
			if sum.OK == 0 || w.minimum < lo {
				lo = w.minimum
			}
			hi = max(hi, w.maximum)
		}
		sum.OK += w.ok
		sum.Errors += w.failed
		total += w.total
		samples = append(samples, w.latencies...)
		for msg, n := range w.errors {
			errs[msg] += n
		}
	}
	sum.Runs = sum.OK + sum.Errors
	if elapsed > 0 {
		sum.RunsPerSecond = float64(sum.OK) / elapsed.Seconds()
	}
	slices.Sort(samples)
	if sum.OK > 0 {
		sum.LatencyMS = latencyMS{
			Min: ms(lo), Mean: ms(total / time.Duration(sum.OK)), Max: ms(hi),
			P50: ms(percentile(samples, 50)), P90: ms(percentile(samples, 90)), P99: ms(percentile(samples, 99)),
		}
	}
	sum.TopErrors = topErrors(errs, benchTopErrors)
	return sum
}

// percentile is the nearest-rank q-th percentile of sorted (0 < q ≤ 100);
// zero when sorted is empty.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(q/100*float64(len(sorted)) + 0.999999999) // ⌈q/100·n⌉
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// topErrors are the n most frequent messages, most first, then by
// message.
func topErrors(errs map[string]int, n int) []errorCount {
	out := make([]errorCount, 0, len(errs))
	for msg, count := range errs {
		out = append(out, errorCount{Message: msg, Count: count})
	}
	slices.SortFunc(out, func(a, b errorCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Message, b.Message))
	})
	return out[:min(n, len(out))]
}

// print shows the summary: JSON with -o json, a table otherwise.
func (s benchSummary) print(c *conn) error {
	if c.json() {
		return printJSON(c.out, s)
	}
	t := newTable(c.out)
	l := s.LatencyMS
	t.pairs("deployment", s.Deployment, "clients", s.Clients,
		"runs", fmt.Sprintf("%d (%d ok, %d errors)", s.Runs, s.OK, s.Errors),
		"elapsed", s.elapsed.Round(time.Millisecond).String(),
		"throughput", fmt.Sprintf("%.1f runs/s", s.RunsPerSecond),
		"latency", fmt.Sprintf("p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms", l.P50, l.P90, l.P99, l.Max))
	for _, e := range s.TopErrors {
		t.pairs("error", fmt.Sprintf("%d× %s", e.Count, e.Message))
	}
	return t.flush()
}
