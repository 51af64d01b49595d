package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

func newSourcesCommand(r *remote) *cobra.Command {
	return newGroup("sources", "List, inspect and diagnose sources, their resources and prompts", newSourcesListCommand(r),
		newSourcesInspectCommand(r), newSourcesResourcesCommand(r), newSourcesPromptsCommand(r), newSourcesDiagnoseCommand(r), newSourcesLoginCommand(r))
}

// sourceParams are the params of a method that takes the SOURCE argument.
var sourceParams = idParams(func(id string) any { return p.InspectSourceParams{SourceID: id} })

func newSourcesInspectCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "inspect SOURCE",
		Short:   "Show a source: its policy, what it offers and its diagnosis (workflow.sources.inspect)",
		Example: "  mcpflow sources inspect demo.default\n  mcpflow sources inspect wf.std -o json",
		Args:    cobra.ExactArgs(1),
	}, p.MethodSourcesInspect, sourceParams, func(t *table, s p.InspectSourceResult) {
		t.pairs("source", s.ID, "kind", s.Kind, "enabled", s.Enabled, "description", s.Description,
			"platform", s.Policy.Platform, "binding required", s.Policy.BindingRequired, "calls upstream", s.Permissions.CallsUpstream,
			"tools", s.Capabilities.Tools, "node specs", s.Capabilities.NodeSpecs, "reducers", s.Capabilities.Reducers,
			"prompts", s.Capabilities.Prompts, "resources", s.Capabilities.Resources)
		if s.Diagnostics != nil {
			t.line("")
			diagnosisTable(t, *s.Diagnostics)
		}
		connectionLogRows(t, s.ConnectionLogs)
	})
}

// connectionLogRows shows a connection's own log messages (those that
// were no call's), oldest first: time, level, logger, the session's
// generation and the calls in flight when it came, and its data.
func connectionLogRows(t *table, logs []p.ConnectionLog) {
	if len(logs) == 0 {
		return
	}
	t.line("")
	t.line("connection logs (not any one call's):")
	t.row("TIME", "LEVEL", "LOGGER", "SESSION", "CALLS IN FLIGHT", "DATA")
	for _, l := range logs {
		data := string(l.Data)
		if l.Truncated {
			data += " (cut)"
		}
		t.row(time.UnixMilli(l.AtEpochMs).Format(time.TimeOnly), l.Level, l.Logger, l.Generation, l.CallsInFlight, data)
	}
}

// sourceOffers is what `sources resources` and `sources prompts` print
// with -o json: the source and the names it offers.
type sourceOffers struct {
	SourceID string   `json:"source_id"`
	Names    []string `json:"names"`
}

// newSourceOffersCommand lists one kind of what a source offers, from
// workflow.sources.inspect.
func newSourceOffersCommand(r *remote, use, short, example, column string, names func(p.SourceCapabilityInventory) []string) *cobra.Command {
	return &cobra.Command{
		Use:     use + " SOURCE",
		Short:   short,
		Long:    short + ".\nWith -o json: {\"source_id\": …, \"names\": […]}.",
		Example: example,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return r.do(cmd, func(ctx context.Context, c *conn) error {
				var s p.InspectSourceResult
				if err := c.Call(ctx, p.MethodSourcesInspect, p.InspectSourceParams{SourceID: args[0]}, &s); err != nil {
					return err
				}
				offers := sourceOffers{SourceID: s.ID, Names: names(s.Capabilities)}
				if offers.Names == nil {
					offers.Names = []string{}
				}
				if c.json() {
					return printJSON(c.out, offers)
				}
				t := newTable(c.out)
				t.row(column)
				for _, n := range offers.Names {
					t.row(n)
				}
				if len(offers.Names) == 0 {
					t.line("source %s offers none", s.ID)
				}
				return t.flush()
			})
		},
	}
}

func newSourcesResourcesCommand(r *remote) *cobra.Command {
	return newSourceOffersCommand(r, "resources", "List the resources a source offers (from workflow.sources.inspect)",
		"  mcpflow sources resources docs.default", "RESOURCE", func(c p.SourceCapabilityInventory) []string { return c.Resources })
}

func newSourcesPromptsCommand(r *remote) *cobra.Command {
	return newSourceOffersCommand(r, "prompts", "List the prompts a source offers (from workflow.sources.inspect)",
		"  mcpflow sources prompts docs.default -o json", "PROMPT", func(c p.SourceCapabilityInventory) []string { return c.Prompts })
}

// pagedParams are the params of a list method that takes only a cursor
// and a limit.
func pagedParams[P any](pg *page, set func(cursor *string, limit *int) P) func(*cobra.Command, []string) (any, error) {
	return func(*cobra.Command, []string) (any, error) { return set(pg.params()), nil }
}

func newSourcesListCommand(r *remote) *cobra.Command {
	var pg page
	cmd := showing(r, &cobra.Command{
		Use:     "list",
		Short:   "List sources: MCP connections and platform sources (workflow.sources.list)",
		Example: "  mcpflow sources list\n  mcpflow sources list -o json",
		Args:    cobra.NoArgs,
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
		Use:     "diagnose SOURCE",
		Short:   "Diagnose a source's transport, auth and catalog (workflow.sources.diagnose)",
		Args:    cobra.ExactArgs(1),
		Example: "  mcpflow sources diagnose fake.a",
	}, p.MethodSourcesDiagnose, sourceParams, diagnosisTable)
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
	if s := d.Session; s != nil {
		t.pairs("session", s.State)
		if s.Cause != nil {
			label := "last failure"
			if s.Failing {
				label = "failing"
			}
			t.line("%s", wrap(label+": "+*s.Cause, wrapWidth, "    "))
		}
	}
	diagnosticRows(t, d.Diagnostics)
}

// diagnosticRows lists dependency diagnostics after a blank line, each
// whole (wrapped, not cut): what is wrong, then how to repair it.
func diagnosticRows(t *table, diags []p.DependencyDiag) {
	if len(diags) == 0 {
		return
	}
	t.line("")
	for _, d := range diags {
		t.line("%s", wrap(d.Severity+" "+d.Code+" ("+d.LogicalRef+"): "+d.Message, wrapWidth, "    "))
		if d.RepairHint != nil && *d.RepairHint != "" {
			t.line("    %s", wrap("repair: "+*d.RepairHint, wrapWidth-4, "      "))
		}
	}
}

func newRegistryCommand(r *remote) *cobra.Command {
	return newGroup("registry", "Change the source registry: the sources added while mcpflow runs",
		newRegistryListCommand(r), newRegistryInspectCommand(r), newRegistryAddCommand(r), newRegistryUpdateCommand(r),
		newRegistryToggleCommand(r, "enable", p.MethodRegistryEnable), newRegistryToggleCommand(r, "disable", p.MethodRegistryDisable),
		newRegistryRemoveCommand(r), newRegistryApplyCommand(r))
}

// registryParams are the params of a method that takes the SOURCE
// argument of a registry entry.
var registryParams = idParams(func(id string) any { return p.RegistrySourceParams{SourceID: id} })

func newRegistryInspectCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "inspect SOURCE",
		Short:   "Show a registry entry (workflow.admin.source_registry.inspect)",
		Example: "  mcpflow registry inspect fake.b -o json",
		Args:    cobra.ExactArgs(1),
	}, p.MethodRegistryInspect, registryParams, func(t *table, res p.InspectRegistryEntryResult) {
		e := res.Entry
		t.pairs("source", e.ID, "kind", e.Kind, "enabled", e.Enabled, "provider", e.Provider, "account", e.Account, "profile", e.Profile,
			"transport", e.Transport, "auth ref", e.AuthRef, "metadata", e.Metadata,
			"mutable", res.Mutable, "shadowed by config", res.ShadowedByConfig, "config ownership", res.ConfigOwnership)
	})
}

// registryMutationTable shows an entry that was changed, then how to
// make the change take effect.
func registryMutationTable(verb string) func(*table, p.RegistryEntryMutationResult) {
	return func(t *table, res p.RegistryEntryMutationResult) {
		t.pairs(verb, res.Entry.ID, "enabled", res.Entry.Enabled, "transport", res.Entry.Transport["kind"], "shadowed by config", res.ShadowedByConfig)
		t.line("to apply it to the sessions: mcpflow registry apply")
	}
}

func newRegistryUpdateCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:   "update SOURCE FILE|-",
		Short: "Change fields of a registry entry (workflow.admin.source_registry.update)",
		Long: `Change fields of a registry entry: the JSON object in FILE (or - for
stdin) replaces the fields it names (transport, auth_ref, enabled,
metadata…); the id stays. 'mcpflow registry apply' then applies it.`,
		Example: `  echo '{"auth_ref":"github"}' | mcpflow registry update fake.b -
  mcpflow registry apply`,
		Args: cobra.ExactArgs(2),
	}, p.MethodRegistryUpdate, func(cmd *cobra.Command, args []string) (any, error) {
		patch, err := objectFile(args[1], cmd, "registry patch")
		return p.UpdateRegistryEntryParams{SourceID: args[0], Patch: patch}, err
	}, registryMutationTable("updated"))
}

// newRegistryToggleCommand is `registry enable` or `registry disable`.
func newRegistryToggleCommand(r *remote, verb, method string) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     verb + " SOURCE",
		Short:   strings.ToUpper(verb[:1]) + verb[1:] + " a registry entry (" + method + ")",
		Example: fmt.Sprintf("  mcpflow registry %s fake.b\n  mcpflow registry apply", verb),
		Args:    cobra.ExactArgs(1),
	}, method, registryParams, registryMutationTable(verb+"d"))
}

func newRegistryListCommand(r *remote) *cobra.Command {
	var pg page
	cmd := showing(r, &cobra.Command{
		Use:     "list",
		Short:   "List registry entries (workflow.admin.source_registry.list)",
		Example: "  mcpflow registry list",
		Args:    cobra.NoArgs,
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
		entry, err := objectFile(args[0], cmd, "registry entry")
		return p.AddRegistryEntryParams{Entry: entry}, err
	}, registryMutationTable("added"))
}

func newRegistryRemoveCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "remove SOURCE",
		Short:   "Remove a source from the registry (workflow.admin.source_registry.remove)",
		Args:    cobra.ExactArgs(1),
		Example: "  mcpflow registry remove fake.b\n  mcpflow registry apply",
	}, p.MethodRegistryRemove, registryParams,
		func(t *table, res p.RemoveRegistryEntryResult) {
			t.pairs("source", res.SourceID, "removed", res.Removed)
			if res.Removed {
				t.line("to close its session: mcpflow registry apply")
			}
		})
}

func newRegistryApplyCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "apply",
		Short:   "Apply the registry: open, replace and close sessions (workflow.admin.source_registry.apply)",
		Example: "  mcpflow registry apply -o json",
		Args:    cobra.NoArgs,
	}, p.MethodRegistryApply, noParams, func(t *table, res p.ApplyRegistryChangesResult) {
		t.pairs("applied", res.Applied, "registered", res.Registered, "updated", res.Updated, "removed", res.Removed,
			"connections", res.ConnectionCount, "registry entries", res.RegistryEntryCount)
		diagnosticRows(t, res.AuthDiagnostics)
	})
}
