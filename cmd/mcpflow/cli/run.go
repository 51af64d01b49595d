package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/cli/progress"
)

// Run statuses the exit code depends on.
const (
	statusCompleted   = "completed"
	statusFailed      = "failed"
	statusCancelled   = "cancelled"
	statusInterrupted = "interrupted"
	statusRunning     = "running"
)

// defaultWaitTimeout bounds how long a client command waits for a run.
const defaultWaitTimeout = time.Hour

// addWaitTimeout adds --wait-timeout.
func addWaitTimeout(cmd *cobra.Command, d *time.Duration) {
	cmd.Flags().DurationVar(d, "wait-timeout", defaultWaitTimeout, "how long to wait for the run (it goes on on the server after)")
}

// runFlags are the flags of `mcpflow run`.
type runFlags struct {
	input       string
	follow      bool
	wait        bool
	detach      bool
	waitTimeout time.Duration
	key         string
}

func newRunCommand(r *remote) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run DEPLOYMENT",
		Short: "Start a run of a deployment",
		Long: `Start a run of a deployment (workflow.runs.start) and show how it ended.

Without a flag the server answers when the run ends, or, if it runs
longer than the server lets a start wait (2 minutes unless the server
was started otherwise), with the run still running: follow it then with
mcpflow runs watch RUN. --detach answers at once with the run's id, while
the run goes on (mcpflow runs list --status running lists it). --wait
waits until the run ends or is interrupted; --follow shows its steps live
as they happen, then its output. With -o json the result is the run's
(workflow.runs.inspect after --wait or --follow); --follow's progress then
goes to stderr.

--idempotency-key makes the start safe to retry: a second start with the
same key, deployment and input within the server's window (a day unless
server.retention.idempotency_seconds says otherwise) shows the run the
first one started ("deduplicated") and starts none; the same key with
another input is refused (docs/triggers.md).

The exit code says how the run ended: 0 completed (or still running
without --wait, or detached), 2 failed or cancelled, 3 interrupted.`,
		Example: `  mcpflow run counter_workflow.default --follow
  mcpflow run invoice.default --input @invoice.json --idempotency-key invoice-2026-118
  mcpflow run my.default --input '{"title":"v2"}' --wait -o json
  mcpflow run my.default --input @input.json
  mcpflow run crawl.default --detach`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			params := p.StartRunParams{DeploymentID: args[0]}
			if cmd.Flags().Changed("idempotency-key") {
				if f.key == "" {
					return errors.New("--idempotency-key must not be empty")
				}
				params.IdempotencyKey = &f.key
			}
			if f.input != "" {
				input, err := readJSONArg(f.input, cmd.InOrStdin())
				if err != nil {
					return fmt.Errorf("--input: %w", err)
				}
				params.WorkflowInput = input
			}
			if f.waitTimeout <= 0 {
				return errors.New("--wait-timeout must be positive")
			}
			if f.detach && (f.follow || f.wait) {
				return errors.New("--detach answers at once: it cannot be used with --wait or --follow (follow the run afterwards: mcpflow runs watch RUN)")
			}
			return r.do(cmd, func(ctx context.Context, c *conn) error { return f.run(ctx, c, params) })
		},
	}
	cmd.Flags().StringVar(&f.input, "input", "", "workflow input: a JSON object, @FILE, or @- for stdin")
	cmd.Flags().BoolVar(&f.follow, "follow", false, "show the run's steps live until it ends or is interrupted")
	cmd.Flags().BoolVar(&f.wait, "wait", false, "wait until the run ends or is interrupted")
	cmd.Flags().BoolVar(&f.detach, "detach", false, "answer at once with the run's id; the run goes on on the server")
	cmd.Flags().StringVar(&f.key, "idempotency-key", "", "start at most one run for this key: a retry with the same key and input shows the first run")
	addWaitTimeout(cmd, &f.waitTimeout)
	return cmd
}

// detach starts a run without waiting for it and prints its id (with
// -o json, the run as the start answered it).
func detach(ctx context.Context, c *conn, params p.StartRunParams) error {
	noWait := false
	params.Wait = &noWait
	raw, err := c.call(ctx, p.MethodRunsStart, params)
	if err != nil {
		return err
	}
	var started p.RunResult
	if err := json.Unmarshal(raw, &started); err != nil {
		return fmt.Errorf("%s: decode result: %w", p.MethodRunsStart, err)
	}
	if started.RunID == nil {
		_, err := show(c, p.MethodRunsStart, raw, runTable)
		return errors.Join(err, runExit(started)) // refused before it began
	}
	if c.json() {
		return printRaw(c.out, raw)
	}
	fmt.Fprintf(c.out, "run %s: %s%s\nfollow it: %s runs watch %s\n", *started.RunID, started.Status, deduplicated(started), invocation(), *started.RunID)
	return nil
}

func (f *runFlags) run(ctx context.Context, c *conn, params p.StartRunParams) error {
	if f.detach {
		return detach(ctx, c, params)
	}
	if !f.follow && !f.wait {
		return runCall(ctx, c, f.waitTimeout, p.MethodRunsStart, params)
	}
	noWait := false
	params.Wait = &noWait
	var started p.RunResult
	if err := c.Call(ctx, p.MethodRunsStart, params, &started); err != nil {
		return err
	}
	if started.RunID == nil {
		return runExit(started) // refused before it began: nothing to follow
	}
	return follow(ctx, c, *started.RunID, f.follow, f.waitTimeout)
}

// follow waits for a run to end or be interrupted, showing its steps live
// when live, then shows the run and exits by its status.
func follow(ctx context.Context, c *conn, runID string, live bool, within time.Duration) error {
	w := io.Discard
	if live {
		w = c.out
		if c.json() {
			w = c.err
		}
	}
	fctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	final, err := progress.Follow(fctx, c.Client, runID, w, progressOptions(w))
	if err != nil {
		if ctx.Err() != nil || fctx.Err() != nil {
			return fmt.Errorf("stopped waiting for run %s, which goes on: mcpflow runs inspect %s: %w", runID, runID, err)
		}
		return fmt.Errorf("follow run %s: %w", runID, err)
	}
	if live && !c.json() {
		// The live view has shown the steps and the end.
		return runExit(p.RunResult{RunID: &runID, Status: final.Status, Error: optional(final.Error)})
	}
	run, err := callShow(ctx, c, p.MethodRunsInspect, p.RunIDParams{RunID: runID}, runTable)
	if err != nil {
		return err
	}
	return runExit(run)
}

// runCall calls method, which answers with a run once it ends or the
// server's run wait is over (workflow.runs.start, workflow.runs.resume),
// waiting up to within; it shows the run and exits by its status.
func runCall(ctx context.Context, c *conn, within time.Duration, method string, params any) error {
	raw, err := c.callWithin(ctx, within, method, params)
	if err != nil {
		return err
	}
	run, err := show(c, method, raw, runTable)
	if err != nil {
		return err
	}
	return runExit(run)
}

// progressOptions fit the live view to w: redrawn in a terminal, plain
// lines when piped.
func progressOptions(w io.Writer) progress.Options {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return progress.Options{}
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		width = 0
	}
	return progress.Options{Terminal: true, Width: width}
}

// runExit is the exit a run's status means.
func runExit(run p.RunResult) error {
	id := cell(run.RunID)
	switch run.Status {
	case statusFailed, statusCancelled:
		msg := fmt.Sprintf("run %s %s", id, run.Status)
		if run.Error != nil && *run.Error != "" {
			msg += ": " + clip(*run.Error, 400)
		}
		return withCode(ExitRunNotCompleted, errors.New(msg))
	case statusInterrupted:
		return withCode(ExitRunInterrupted, fmt.Errorf("run %s is interrupted; resume it: %s runs resume %s --payload JSON", id, invocation(), id))
	}
	return nil
}

// runTable shows a run.
func runTable(t *table, run p.RunResult) {
	t.pairs("run", run.RunID, "deployment", fmt.Sprintf("%s (%s v%d)", run.DeploymentID, run.ArtifactID, run.ArtifactVersion),
		"status", run.Status+deduplicated(run), "outcome", run.Outcome, "output", run.Output, "error", run.Error, "steps", run.TraceCount)
	if run.ParentRunID != "" {
		t.pairs("parent", run.ParentRunID)
	}
	if run.ForkedFromNode != "" {
		t.pairs("forked from", run.ForkedFromNode)
	}
	if run.Interrupt != nil {
		t.pairs("interrupt", run.Interrupt["kind"], "request", run.Interrupt["payload"],
			"resume outcomes", run.Interrupt["outcomes"], "resume schema", run.Interrupt["resume_schema"])
	}
	for _, d := range run.Diagnostics {
		t.pairs(d.Severity, d.Code+": "+d.Message)
	}
}

// deduplicated is what a run's status line adds when the start answered
// with the run of an earlier start with its idempotency key.
func deduplicated(run p.RunResult) string {
	if !run.Deduplicated {
		return ""
	}
	return " (deduplicated: started earlier with this idempotency key)"
}

func newRunsCommand(r *remote) *cobra.Command {
	return newGroup("runs", "List, inspect, trace, watch, cancel, resume, rerun and fork runs",
		newRunsListCommand(r), newRunsInspectCommand(r), newRunsTraceCommand(r), newRunsWatchCommand(r), newRunsCancelCommand(r), newRunsResumeCommand(r),
		newRunsRerunCommand(r), newRunsForkCommand(r))
}

func newRunsWatchCommand(r *remote) *cobra.Command {
	var waitTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "watch RUN",
		Short: "Follow a run live, as 'run --follow' does (workflow.runs.subscribe)",
		Long: `Follow an existing run: its steps so far, then live until it ends or is
interrupted, as 'mcpflow run --follow' shows a new one. A run that has
already finished is replayed from its events. With -o json the live view
goes to stderr and the run (workflow.runs.inspect) to stdout.

The exit code says how the run ended: 0 completed, 2 failed or cancelled,
3 interrupted.`,
		Example: `  mcpflow runs watch run_5c0e…
  mcpflow runs watch run_5c0e… -o json | jq .output`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if waitTimeout <= 0 {
				return errors.New("--wait-timeout must be positive")
			}
			return r.do(cmd, func(ctx context.Context, c *conn) error { return follow(ctx, c, args[0], true, waitTimeout) })
		},
	}
	addWaitTimeout(cmd, &waitTimeout)
	return cmd
}

func newRunsListCommand(r *remote) *cobra.Command {
	var (
		status, deployment string
		pg                 page
	)
	cmd := showing(r, &cobra.Command{
		Use:   "list",
		Short: "List runs, newest first (workflow.runs.list)",
		Long: `List runs, newest first: each run's start time, how long it ran (or has
been running), and who started it (its token's name, or local).
--status running lists what runs now; --deployment one deployment's runs.`,
		Example: "  mcpflow runs list --status running\n  mcpflow runs list --deployment counter_workflow.default --status failed\n  mcpflow runs list --limit 5 -o json",
		Args:    cobra.NoArgs,
	}, p.MethodRunsList, func(*cobra.Command, []string) (any, error) {
		params := p.ListRunsParams{Status: optional(status), DeploymentID: optional(deployment)}
		params.Cursor, params.Limit = pg.params()
		return params, nil
	}, func(t *table, res p.ListRunsResult) {
		now := time.Now()
		t.row("RUN", "DEPLOYMENT", "ARTIFACT", "STATUS", "STARTED", "DURATION", "STARTED BY")
		for _, run := range res.Runs {
			started, took := runTimes(run, now)
			t.row(run.RunID, run.DeploymentID, fmt.Sprintf("%s v%d", run.ArtifactID, run.ArtifactVersion), run.Status, started, took, firstSet(run.StartedBy, "-"))
		}
		pg.more(t, res.NextCursor, len(res.Runs), res.Total)
	})
	cmd.Flags().StringVar(&status, "status", "", "only runs with this status: running, interrupted, completed, failed or cancelled")
	cmd.Flags().StringVar(&deployment, "deployment", "", "only the runs of this deployment")
	_ = cmd.RegisterFlagCompletionFunc("status", fixedCompletion(statusRunning, statusInterrupted, statusCompleted, statusFailed, statusCancelled))
	_ = cmd.RegisterFlagCompletionFunc("deployment", completeIDs(r, deploymentIDs))
	pg.addFlags(cmd)
	return cmd
}

// runTimes are when a run started, as a local time, and how long it ran:
// until its last update once it ended, until now while it runs or waits.
func runTimes(run p.RunSummary, now time.Time) (started, took string) {
	created, err := time.Parse(time.RFC3339Nano, run.CreatedAt)
	if err != nil {
		return run.CreatedAt, "-"
	}
	end := now
	if run.Status != statusRunning && run.Status != statusInterrupted {
		if updated, err := time.Parse(time.RFC3339Nano, run.UpdatedAt); err == nil {
			end = updated
		}
	}
	return created.Local().Format("2006-01-02 15:04:05"), roundDuration(end.Sub(created))
}

// roundDuration is d to a precision a person reads: ms under a second,
// then tenths of a second, then whole seconds.
func roundDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func newRunsInspectCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "inspect RUN",
		Short:   "Show a run (workflow.runs.inspect)",
		Example: "  mcpflow runs inspect run_5c0e… -o json",
		Args:    cobra.ExactArgs(1),
	}, p.MethodRunsInspect, idParams(func(id string) any { return p.RunIDParams{RunID: id} }), runTable)
}

func newRunsTraceCommand(r *remote) *cobra.Command {
	var start, limit int
	cmd := showing(r, &cobra.Command{
		Use:     "trace RUN",
		Short:   "Show a run's steps (workflow.runs.trace)",
		Example: "  mcpflow runs trace run_5c0e… --start 10 --limit 20",
		Args:    cobra.ExactArgs(1),
	}, p.MethodRunsTrace, func(_ *cobra.Command, args []string) (any, error) {
		return p.TraceParams{RunID: args[0], TraceRange: p.TraceRange{Start: optionalInt(start), Limit: optionalInt(limit)}}, nil
	}, func(t *table, run p.RunResult) {
		first := 0
		if run.TraceStart != nil {
			first = *run.TraceStart
		}
		t.row("#", "FRAME", "STEP", "TYPE", "OUTCOME", "NEXT", "ATTEMPTS", "ERROR")
		for i, e := range run.Trace {
			step := e.NodeID
			if e.Replayed {
				step += " (replayed)" // a fork took its result from its parent's trace
			}
			t.row(first+i, e.FrameID, step, e.StepType, e.Outcome, e.NextNodeID, e.Attempts, clip(e.Error, 80))
		}
		if run.TraceTruncated != nil && *run.TraceTruncated {
			t.line("%d of %d steps shown; more: --start %d", len(run.Trace), run.TraceCount, first+len(run.Trace))
		}
	})
	cmd.Flags().IntVar(&start, "start", 0, "first step to show (0-based)")
	cmd.Flags().IntVar(&limit, "limit", 0, "steps to show (default: the server's)")
	return cmd
}

func newRunsCancelCommand(r *remote) *cobra.Command {
	var reason string
	cmd := showing(r, &cobra.Command{
		Use:     "cancel RUN",
		Short:   "Cancel a running or interrupted run (workflow.runs.cancel)",
		Example: "  mcpflow runs cancel run_5c0e… --reason 'not today'",
		Args:    cobra.ExactArgs(1),
	}, p.MethodRunsCancel, func(_ *cobra.Command, args []string) (any, error) {
		return p.CancelRunParams{RunID: args[0], Reason: optional(reason)}, nil
	}, runTable)
	cmd.Flags().StringVar(&reason, "reason", "", "why, recorded with the run")
	return cmd
}

func newRunsResumeCommand(r *remote) *cobra.Command {
	var (
		payload, outcome string
		waitTimeout      time.Duration
	)
	cmd := &cobra.Command{
		Use:   "resume RUN",
		Short: "Resume an interrupted run with the answer to its interrupt (workflow.runs.resume)",
		Long: `Resume an interrupted run with the answer to its interrupt, and show how
it ended. The exit code says how: 0 completed (or still running),
2 failed or cancelled, 3 interrupted again.`,
		Example: `  mcpflow runs resume run_5c0e… --payload '{"approved":true}'`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			params := p.ResumeRunParams{RunID: args[0], ResumeOutcome: optional(outcome)}
			if payload != "" {
				obj, err := readJSONArg(payload, cmd.InOrStdin())
				if err != nil {
					return fmt.Errorf("--payload: %w", err)
				}
				params.ResumePayload = obj
			}
			if waitTimeout <= 0 {
				return errors.New("--wait-timeout must be positive")
			}
			return r.do(cmd, func(ctx context.Context, c *conn) error {
				return runCall(ctx, c, waitTimeout, p.MethodRunsResume, params)
			})
		},
	}
	cmd.Flags().StringVar(&payload, "payload", "", "the answer: a JSON object, @FILE, or @- for stdin")
	cmd.Flags().StringVar(&outcome, "outcome", "", "the interrupt's outcome to resume with (default: its first)")
	addWaitTimeout(cmd, &waitTimeout)
	return cmd
}
