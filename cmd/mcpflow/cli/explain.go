package cli

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/mcpflow/mcpflow/actors/workflow"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// allCodes are the diagnostic codes explain knows: those of draft and
// plan validation, then those of deployments, sources and calls.
func allCodes() []p.CodeInfo {
	language := make([]p.CodeInfo, len(workflow.DiagnosticCodes))
	for i, c := range workflow.DiagnosticCodes {
		language[i] = p.CodeInfo(c)
	}
	return slices.Concat(language, p.DependencyCodes)
}

// explainCode is the entry of code.
func explainCode(code string) (p.CodeInfo, bool) {
	all := allCodes()
	if i := slices.IndexFunc(all, func(c p.CodeInfo) bool { return c.Code == code }); i >= 0 {
		return all[i], true
	}
	return p.CodeInfo{}, false
}

// newExplainCommand says what a diagnostic code means and how to repair
// what it reports, from workflow.DiagnosticCodes and
// protocol.DependencyCodes. It needs no server.
func newExplainCommand() *cobra.Command {
	var output string
	var codes []string
	for _, c := range allCodes() {
		codes = append(codes, c.Code)
	}
	cmd := &cobra.Command{
		Use:   "explain [CODE]",
		Short: "Say what a diagnostic code means and how to repair it",
		Long: `Say what a diagnostic code means, and how to repair what it reports: the
codes of draft and plan validation, and those of deployment validation,
source diagnosis and capability calls. Without CODE: every code, one per
line. With -o json: {code, severity, means, repair}, or a list of them.`,
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
					return printJSON(w, allCodes())
				}
				t := newTable(w)
				t.row("CODE", "SEVERITY", "MEANS")
				for _, c := range allCodes() {
					t.row(c.Code, c.Severity, clip(c.Means, 90))
				}
				return t.flush()
			}
			info, ok := explainCode(args[0])
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
