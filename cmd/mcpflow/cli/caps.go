package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

func newCapsCommand(r *remote) *cobra.Command {
	return newGroup("caps", "List, inspect and call capabilities (tools as workflow steps)",
		newCapsListCommand(r), newCapsInspectCommand(r), newCapsCallCommand(r))
}

// page are the paging flags of a list command.
type page struct {
	cursor string
	limit  int
}

func (pg *page) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&pg.cursor, "cursor", "", "continue from the next_cursor of an earlier page")
	cmd.Flags().IntVar(&pg.limit, "limit", 0, "rows per page (default: the server's)")
}

// params are the cursor and limit params, nil when unset.
func (pg *page) params() (*string, *int) {
	return optional(pg.cursor), optionalInt(pg.limit)
}

// more tells people how to get the next page.
func (pg *page) more(t *table, next *string, shown, total int) {
	if next != nil && *next != "" {
		t.line("%d of %d shown; next page: --cursor %s", shown, total, *next)
	}
}

// optional is nil for "".
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// optionalInt is nil for 0.
func optionalInt(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func newCapsListCommand(r *remote) *cobra.Command {
	var (
		source, query string
		pg            page
	)
	cmd := showing(r, &cobra.Command{
		Use:     "list",
		Short:   "List capabilities (workflow.capabilities.list)",
		Example: "  mcpflow caps list --source demo.default\n  mcpflow caps list --query issue -o json",
		Args:    cobra.NoArgs,
	}, p.MethodCapabilitiesList, func(*cobra.Command, []string) (any, error) {
		params := p.ListCapabilitiesParams{SourceID: optional(source), Query: optional(query)}
		params.Cursor, params.Limit = pg.params()
		return params, nil
	}, func(t *table, res p.ListCapabilitiesResult) {
		t.row("NAME", "SOURCE", "KIND", "OUTCOMES", "INPUT", "OUTPUT", "DESCRIPTION")
		for _, cp := range res.Capabilities {
			t.row(cp.Name, cp.SourceID, cp.Kind, cp.Outcomes, cp.InputFields, cp.OutputFields, clipPtr(cp.Description, 60))
		}
		pg.more(t, res.NextCursor, len(res.Capabilities), res.Total)
	})
	cmd.Flags().StringVar(&source, "source", "", "only the capabilities of this source (e.g. demo.default)")
	cmd.Flags().StringVar(&query, "query", "", "only capabilities whose name or description contains this")
	pg.addFlags(cmd)
	return cmd
}

func newCapsInspectCommand(r *remote) *cobra.Command {
	cmd := showing(r, &cobra.Command{
		Use:   "inspect NAME",
		Short: "Show one capability's contract (workflow.capabilities.inspect)",
		Args:  cobra.ExactArgs(1),
	}, p.MethodCapabilitiesInspect, idParams(func(name string) any { return p.InspectCapabilityParams{QualifiedName: name} }),
		func(t *table, d p.CapabilityDetail) {
			t.pairs("name", d.Name, "source", d.SourceID, "kind", d.Kind, "outcomes", d.Outcomes, "async", d.IsAsync,
				"description", d.Description, "input schema", d.InputSchema, "output schema", d.OutputSchema)
		})
	cmd.Example = "  mcpflow caps inspect demo.default.counter"
	cmd.ValidArgsFunction = completeArg(r, capabilityNames)
	return cmd
}

func newCapsCallCommand(r *remote) *cobra.Command {
	var input, deployment string
	cmd := showing(r, &cobra.Command{
		Use:   "call NAME",
		Short: "Call one capability directly, outside a workflow (workflow.capabilities.call)",
		Long: `Call one capability with an input and show the outcome and output it
answered. --deployment calls it through that deployment's bindings (a
capability named by its logical source). A call that fails shows the
error as diagnostics.`,
		Example: `  mcpflow caps call demo.default.counter
  mcpflow caps call fake.a.echo --input '{"text":"hi"}' -o json
  mcpflow caps call fake.a.echo --input @input.json`,
		Args: cobra.ExactArgs(1),
	}, p.MethodCapabilitiesCall, func(cmd *cobra.Command, args []string) (any, error) {
		params := p.CallCapabilityParams{QualifiedName: args[0], DeploymentID: optional(deployment)}
		if input != "" {
			obj, err := readJSONArg(input, cmd.InOrStdin())
			if err != nil {
				return nil, fmt.Errorf("--input: %w", err)
			}
			params.Payload = obj
		}
		return params, nil
	}, func(t *table, res p.CapabilityCallResult) {
		t.pairs("capability", res.QualifiedName, "source", res.SourceID, "kind", res.Kind, "deployment", res.DeploymentID,
			"outcome", res.Outcome, "output", res.Output)
		diagnosticRows(t, res.Diagnostics)
	})
	cmd.Flags().StringVar(&input, "input", "", "the capability's input: a JSON object, @FILE, or @- for stdin")
	cmd.Flags().StringVar(&deployment, "deployment", "", "call through this deployment's source bindings")
	cmd.ValidArgsFunction = completeArg(r, capabilityNames)
	_ = cmd.RegisterFlagCompletionFunc("deployment", completeIDs(r, deploymentIDs))
	return cmd
}
