package cli

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

// newRunsRerunCommand is `mcpflow runs rerun`.
func newRunsRerunCommand(r *remote) *cobra.Command {
	var (
		version     int
		waitTimeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "rerun RUN",
		Short: "Start a new run of a run's deployment with the same input (workflow.runs.rerun)",
		Long: `Start a new run of the deployment RUN ran, as the deployment stands now,
with RUN's workflow input, on the artifact version RUN ran, or on a newer
version of the same artifact with --artifact-version (an older one is
refused). The new run names RUN as its parent. The exit code says how the
new run ended: 0 completed (or still running), 2 failed or cancelled,
3 interrupted.`,
		Example: `  mcpflow runs rerun run_5c0e…
  mcpflow runs rerun run_5c0e… --artifact-version 3 -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if version < 0 {
				return errors.New("--artifact-version must be a version number")
			}
			return runAgain(cmd, r, waitTimeout, p.MethodRunsRerun, p.RerunRunParams{RunID: args[0], ArtifactVersion: optionalInt(version)})
		},
	}
	cmd.Flags().IntVar(&version, "artifact-version", 0, "the version of the run's artifact to run (default: the run's own; never an older one)")
	addWaitTimeout(cmd, &waitTimeout)
	return cmd
}

// newRunsForkCommand is `mcpflow runs fork`.
func newRunsForkCommand(r *remote) *cobra.Command {
	var (
		from        string
		waitTimeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "fork RUN --from STEP",
		Short: "Start a new run that replays a run up to a step and executes from there (workflow.runs.fork)",
		Long: `Start a new run of the deployment RUN ran, with RUN's input and artifact
version, that takes the results of the steps RUN executed before it first
reached STEP from RUN's trace, without calling their tools again, and
executes from STEP on: after fixing an upstream, run again only from the
step that failed. STEP is a step of the workflow's main line that RUN
reached (not one inside a foreach body); a refusal lists the valid ones.
The new run names RUN as its parent and STEP as its fork point; its trace
marks the replayed steps. The exit code says how the new run ended: 0
completed (or still running), 2 failed or cancelled, 3 interrupted.`,
		Example: `  mcpflow runs fork run_5c0e… --from summarize
  mcpflow runs trace run_5c0e…        # the steps a fork may start from`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if from == "" {
				return errors.New("--from STEP is required: the step the new run executes from")
			}
			return runAgain(cmd, r, waitTimeout, p.MethodRunsFork, p.ForkRunParams{RunID: args[0], FromNode: from})
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the step the new run executes from (required)")
	addWaitTimeout(cmd, &waitTimeout)
	return cmd
}

// runAgain calls method, which starts a new run after an earlier one
// (rerun, fork), and shows the new run as runCall does.
func runAgain(cmd *cobra.Command, r *remote, within time.Duration, method string, params any) error {
	if within <= 0 {
		return errors.New("--wait-timeout must be positive")
	}
	return r.do(cmd, func(ctx context.Context, c *conn) error { return runCall(ctx, c, within, method, params) })
}
