package cli

import (
	"github.com/spf13/cobra"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

func newCapsCommand(r *remote) *cobra.Command {
	return newGroup("caps", "List and inspect capabilities (tools as workflow steps)",
		newCapsListCommand(r), newCapsInspectCommand(r))
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
		Use:   "list",
		Short: "List capabilities (workflow.capabilities.list)",
		Args:  cobra.NoArgs,
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
	return showing(r, &cobra.Command{
		Use:   "inspect NAME",
		Short: "Show one capability's contract (workflow.capabilities.inspect)",
		Args:  cobra.ExactArgs(1),
	}, p.MethodCapabilitiesInspect, idParams(func(name string) any { return p.InspectCapabilityParams{QualifiedName: name} }),
		func(t *table, d p.CapabilityDetail) {
			t.pairs("name", d.Name, "source", d.SourceID, "kind", d.Kind, "outcomes", d.Outcomes, "async", d.IsAsync,
				"description", d.Description, "input schema", d.InputSchema, "output schema", d.OutputSchema)
		})
}
