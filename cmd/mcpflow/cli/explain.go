package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// newExplainCommand says what a validation diagnostic code means and how
// to repair what it reports, from workflow.DiagnosticCodes. It needs no
// server.
func newExplainCommand() *cobra.Command {
	var output string
	codes := make([]string, 0, len(workflow.DiagnosticCodes))
	for _, c := range workflow.DiagnosticCodes {
		codes = append(codes, c.Code)
	}
	cmd := &cobra.Command{
		Use:   "explain [CODE]",
		Short: "Say what a validation diagnostic code means and how to repair it",
		Long: `Say what a diagnostic code of draft or plan validation means, and how to
repair what it reports. Without CODE: every code, one per line. With -o
json: {code, severity, means, repair}, or a list of them.`,
		Example: `  mcpflow explain missing_outcome_edge
  mcpflow explain -o json | jq -r '.[].code'`,
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: codes,
		GroupID:   groupClient,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if len(args) == 0 {
				if output == outputJSON {
					return printJSON(w, workflow.DiagnosticCodes)
				}
				t := newTable(w)
				t.row("CODE", "SEVERITY", "MEANS")
				for _, c := range workflow.DiagnosticCodes {
					t.row(c.Code, c.Severity, clip(c.Means, 90))
				}
				return t.flush()
			}
			info, ok := workflow.ExplainCode(args[0])
			if !ok {
				return fmt.Errorf("no diagnostic code %q; 'mcpflow explain' lists them", args[0])
			}
			if output == outputJSON {
				return printJSON(w, info)
			}
			t := newTable(w)
			t.pairs("code", info.Code, "severity", info.Severity)
			t.line("\nWhat it means:\n  %s\n\nHow to repair it:\n  %s", info.Means, info.Repair)
			return t.flush()
		},
	}
	addOutputFlag(cmd.Flags(), &output)
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletion(outputTable, outputJSON))
	return cmd
}
