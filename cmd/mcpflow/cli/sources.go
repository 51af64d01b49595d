package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

func newSourcesCommand(r *remote) *cobra.Command {
	return newGroup("sources", "List and diagnose sources", newSourcesListCommand(r), newSourcesDiagnoseCommand(r), newSourcesLoginCommand(r))
}

// pagedParams are the params of a list method that takes only a cursor
// and a limit.
func pagedParams[P any](pg *page, set func(cursor *string, limit *int) P) func(*cobra.Command, []string) (any, error) {
	return func(*cobra.Command, []string) (any, error) { return set(pg.params()), nil }
}

func newSourcesListCommand(r *remote) *cobra.Command {
	var pg page
	cmd := showing(r, &cobra.Command{
		Use:   "list",
		Short: "List sources: MCP connections and platform sources (workflow.sources.list)",
		Args:  cobra.NoArgs,
	}, p.MethodSourcesList, pagedParams(&pg, func(cursor *string, limit *int) p.ListSourcesParams {
		return p.ListSourcesParams{Cursor: cursor, Limit: limit}
	}), func(t *table, res p.ListSourcesResult) {
		t.row("SOURCE", "KIND", "ENABLED", "TOOLS", "NODE SPECS", "PROMPTS", "RESOURCES", "DESCRIPTION")
		for _, s := range res.Sources {
			t.row(s.ID, s.Kind, s.Enabled, s.ToolCount, s.NodeSpecCount, s.PromptCount, s.ResourceCount, clipPtr(s.Description, 60))
		}
		pg.more(t, res.NextCursor, len(res.Sources), res.Total)
	})
	pg.addFlags(cmd)
	return cmd
}

func newSourcesDiagnoseCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:   "diagnose SOURCE",
		Short: "Diagnose a source's transport, auth and catalog (workflow.sources.diagnose)",
		Args:  cobra.ExactArgs(1),
	}, p.MethodSourcesDiagnose, idParams(func(id string) any { return p.InspectSourceParams{SourceID: id} }), diagnosisTable)
}

// diagnosisTable shows a source diagnosis.
func diagnosisTable(t *table, d p.SourceDiagnosis) {
	t.pairs("source", d.SourceID, "status", d.Status)
	if d.Enabled != nil {
		t.pairs("enabled", *d.Enabled)
	}
	if d.Transport != nil {
		t.pairs("transport", d.Transport.Kind, "configured", d.Transport.Configured)
	}
	if d.Auth != nil {
		t.pairs("auth ref", d.Auth.AuthRef, "auth record present", d.Auth.RecordPresent, "auth scheme", d.Auth.Scheme, "auth fits transport", d.Auth.TransportSupported)
	}
	if d.Catalog != nil {
		t.pairs("catalog snapshot", d.Catalog.HasSnapshot, "tools", d.Catalog.NodeCount, "resources", d.Catalog.ResourceCount, "prompts", d.Catalog.PromptCount)
	}
	if d.Message != nil {
		t.pairs("message", d.Message)
	}
	diagnosticRows(t, d.Diagnostics)
}

// diagnosticRows lists dependency diagnostics after a blank line.
func diagnosticRows(t *table, diags []p.DependencyDiag) {
	if len(diags) == 0 {
		return
	}
	t.line("")
	t.row("SEVERITY", "CODE", "REF", "MESSAGE", "HINT")
	for _, d := range diags {
		t.row(d.Severity, d.Code, d.LogicalRef, clip(d.Message, 100), clipPtr(d.RepairHint, 60))
	}
}

func newRegistryCommand(r *remote) *cobra.Command {
	return newGroup("registry", "Change the source registry: the sources added while mcpflow runs",
		newRegistryListCommand(r), newRegistryAddCommand(r), newRegistryRemoveCommand(r), newRegistryApplyCommand(r))
}

func newRegistryListCommand(r *remote) *cobra.Command {
	var pg page
	cmd := showing(r, &cobra.Command{
		Use:   "list",
		Short: "List registry entries (workflow.admin.source_registry.list)",
		Args:  cobra.NoArgs,
	}, p.MethodRegistryList, pagedParams(&pg, func(cursor *string, limit *int) p.ListRegistryParams {
		return p.ListRegistryParams{Cursor: cursor, Limit: limit}
	}), func(t *table, res p.ListRegistryEntriesResult) {
		t.row("SOURCE", "KIND", "ENABLED", "TRANSPORT", "AUTH", "MUTABLE", "SHADOWED BY CONFIG")
		for _, e := range res.Entries {
			t.row(e.ID, e.Kind, e.Enabled, e.TransportKind, e.AuthRef, e.Mutable, e.ShadowedByConfig)
		}
		pg.more(t, res.NextCursor, len(res.Entries), res.Total)
	})
	pg.addFlags(cmd)
	return cmd
}

func newRegistryAddCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:   "add FILE|-",
		Short: "Add a source to the registry (workflow.admin.source_registry.add)",
		Long: `Add a source to the registry from a JSON file (or - for stdin): the entry
{id, kind?: "mcp", enabled?: true, transport, auth_ref?, metadata?}.
'mcpflow registry apply' then opens its session.`,
		Example: `  echo '{"id":"fs.default","transport":{"kind":"stdio","command":"mcp-fs"}}' | mcpflow registry add -
  mcpflow registry apply`,
		Args: cobra.ExactArgs(1),
	}, p.MethodRegistryAdd, func(cmd *cobra.Command, args []string) (any, error) {
		data, err := readFileOrStdin(args[0], cmd.InOrStdin())
		if err != nil {
			return nil, err
		}
		entry, err := decodeObject(data)
		if err != nil {
			return nil, fmt.Errorf("registry entry %s: %w", args[0], err)
		}
		return p.AddRegistryEntryParams{Entry: entry}, nil
	}, func(t *table, res p.RegistryEntryMutationResult) {
		t.pairs("added", res.Entry.ID, "enabled", res.Entry.Enabled, "transport", res.Entry.Transport["kind"], "shadowed by config", res.ShadowedByConfig)
		t.line("to open its session: mcpflow registry apply")
	})
}

func newRegistryRemoveCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:   "remove SOURCE",
		Short: "Remove a source from the registry (workflow.admin.source_registry.remove)",
		Args:  cobra.ExactArgs(1),
	}, p.MethodRegistryRemove, idParams(func(id string) any { return p.RegistrySourceParams{SourceID: id} }),
		func(t *table, res p.RemoveRegistryEntryResult) {
			t.pairs("source", res.SourceID, "removed", res.Removed)
			if res.Removed {
				t.line("to close its session: mcpflow registry apply")
			}
		})
}

func newRegistryApplyCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:   "apply",
		Short: "Apply the registry: open, replace and close sessions (workflow.admin.source_registry.apply)",
		Args:  cobra.NoArgs,
	}, p.MethodRegistryApply, noParams, func(t *table, res p.ApplyRegistryChangesResult) {
		t.pairs("applied", res.Applied, "registered", res.Registered, "updated", res.Updated, "removed", res.Removed,
			"connections", res.ConnectionCount, "registry entries", res.RegistryEntryCount)
		diagnosticRows(t, res.AuthDiagnostics)
	})
}
