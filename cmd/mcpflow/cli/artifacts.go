package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpflow/mcpflow/actors/records"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

func newArtifactsCommand(r *remote) *cobra.Command {
	return newGroup("artifacts", "List, inspect, save and delete artifacts (saved workflow versions)",
		newArtifactsListCommand(r), newArtifactsInspectCommand(r), newArtifactsSaveCommand(r),
		newArtifactsCreateFromPlanCommand(r), newArtifactsDeleteCommand(r))
}

// parseArtifactRef splits "ID@VERSION" into its id and version; a bare ID
// is version 1.
func parseArtifactRef(ref string) (p.InspectArtifactParams, error) {
	id, version, found := strings.Cut(ref, "@")
	if id == "" {
		return p.InspectArtifactParams{}, fmt.Errorf("artifact %q: want ID or ID@VERSION", ref)
	}
	if !found {
		return p.InspectArtifactParams{ArtifactID: id, Version: 1}, nil
	}
	v, err := strconv.Atoi(version)
	if err != nil || v < 1 {
		return p.InspectArtifactParams{}, fmt.Errorf("artifact %q: the version after @ must be a whole number from 1", ref)
	}
	return p.InspectArtifactParams{ArtifactID: id, Version: v}, nil
}

// artifactParams are the params of a method that takes the ID[@VERSION]
// argument.
func artifactParams(_ *cobra.Command, args []string) (any, error) { return parseArtifactRef(args[0]) }

func newArtifactsListCommand(r *remote) *cobra.Command {
	var (
		query, kind string
		pg          page
	)
	cmd := showing(r, &cobra.Command{
		Use:     "list",
		Short:   "List artifacts (workflow.artifacts.list)",
		Example: "  mcpflow artifacts list --query counter\n  mcpflow artifacts list --kind wrapper -o json",
		Args:    cobra.NoArgs,
	}, p.MethodArtifactsList, func(*cobra.Command, []string) (any, error) {
		params := p.ListArtifactsParams{Query: optional(query), Kind: optional(kind)}
		params.Cursor, params.Limit = pg.params()
		return params, nil
	}, func(t *table, res p.ListArtifactsResult) {
		t.row("ARTIFACT", "VERSION", "KIND", "TITLE", "OUTCOMES", "SOURCES", "DIAGNOSTICS")
		for _, a := range res.Nodes {
			t.row(a.ArtifactID, a.Version, a.Kind, clip(a.DisplayName, 40), a.Outcomes, a.RequiredSources, len(a.Diagnostics))
		}
		pg.more(t, res.NextCursor, len(res.Nodes), res.Total)
	})
	cmd.Flags().StringVar(&query, "query", "", "only artifacts whose id, title, description or kind contains this")
	cmd.Flags().StringVar(&kind, "kind", "", "only artifacts of this kind: workflow or wrapper")
	_ = cmd.RegisterFlagCompletionFunc("kind", fixedCompletion("workflow", "wrapper"))
	pg.addFlags(cmd)
	return cmd
}

func newArtifactsInspectCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "inspect ARTIFACT[@VERSION]",
		Short:   "Show an artifact: its contract, plan and requirements (workflow.artifacts.inspect)",
		Long:    "Show an artifact version (version 1 unless ARTIFACT@VERSION says). With -o json: the whole\nartifact, in the form 'mcpflow artifacts save' takes.",
		Example: "  mcpflow artifacts inspect counter_workflow\n  mcpflow artifacts inspect counter_workflow@2 -o json > artifact.json",
		Args:    cobra.ExactArgs(1),
	}, p.MethodArtifactsInspect, artifactParams, func(t *table, a p.Artifact) {
		plan, err := planOf(a.Plan)
		if err != nil {
			t.pairs("artifact", fmt.Sprintf("%s v%d", a.ID, a.Version), "plan", err.Error())
			return
		}
		t.pairs("artifact", fmt.Sprintf("%s v%d", a.ID, a.Version), "title", a.Title, "kind", a.Kind, "description", a.Description,
			"outcomes", a.Outcomes, "input schema", a.InputSchema, "output schema", a.OutputSchema,
			"start", plan.Start, "steps", len(plan.Nodes), "workflow dependencies", a.WorkflowDependencies)
		if len(a.RequiredCapabilities) > 0 {
			t.line("")
			t.row("REQUIRES", "KIND", "OBSERVED ON")
			for _, rc := range a.RequiredCapabilities {
				t.row(rc.Ref.Source+"."+rc.Ref.CapabilityKey, rc.Kind, rc.ObservedConcreteSource)
			}
		}
	})
}

// savedArtifactTable shows a saved artifact.
func savedArtifactTable(t *table, res p.SaveArtifactResult) {
	t.pairs("artifact", fmt.Sprintf("%s v%d", res.ArtifactID, res.Version), "saved", res.Saved)
	t.line("deploy it: %s deploy --artifact %s --version %d --bind LOGICAL=CONCRETE", invocation(), res.ArtifactID, res.Version)
}

func newArtifactsSaveCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:   "save FILE|-",
		Short: "Save a whole artifact from a JSON file (workflow.artifacts.save)",
		Long: `Save an artifact from a JSON file (or - for stdin), in the form
'mcpflow artifacts inspect -o json' prints. Artifacts are immutable: saving
an id and version that exist with other content is refused.`,
		Example: `  mcpflow artifacts inspect counter_workflow -o json | jq '.version = 2' | mcpflow artifacts save -`,
		Args:    cobra.ExactArgs(1),
	}, p.MethodArtifactsSave, func(cmd *cobra.Command, args []string) (any, error) {
		artifact, err := objectFile(args[0], cmd, "artifact")
		return p.SaveArtifactParams{Artifact: artifact}, err
	}, savedArtifactTable)
}

// fromPlan are the flags of `artifacts create-from-plan`.
type fromPlan struct {
	id, title, kind, description string
	version                      int
	outcomes, bindings           []string
}

func newArtifactsCreateFromPlanCommand(r *remote) *cobra.Command {
	var f fromPlan
	cmd := showing(r, &cobra.Command{
		Use:   "create-from-plan FILE|-",
		Short: "Save an artifact from a compiled plan (workflow.artifacts.create_from_plan)",
		Long: `Save an artifact from a raw plan, the compiled form of a workflow (see
'mcpflow schema plan'), read from a JSON file or - for stdin. --bind
LOGICAL=CONCRETE rewrites the plan's steps that name a concrete source to
its logical one and records what they require.`,
		Example: `  mcpflow artifacts create-from-plan plan.json --id report --title Report --outcome ok --bind demo.default=demo.default`,
		Args:    cobra.ExactArgs(1),
	}, p.MethodArtifactsCreateFromPlan, func(cmd *cobra.Command, args []string) (any, error) {
		if f.id == "" {
			return nil, errors.New("--id is required")
		}
		bindings, err := parseBindings(f.bindings)
		if err != nil {
			return nil, err
		}
		plan, err := objectFile(args[0], cmd, "plan")
		if err != nil {
			return nil, err
		}
		params := p.CreateFromPlanParams{ArtifactID: f.id, Version: f.version, Title: firstSet(f.title, records.ScaffoldTitle(f.id)),
			Plan: plan, Outcomes: f.outcomes, Kind: optional(f.kind), Description: optional(f.description)}
		if params.Outcomes == nil {
			params.Outcomes = []string{"ok"}
		}
		if len(bindings) > 0 {
			params.SourceBindings = map[string]string{}
			for _, b := range bindings {
				params.SourceBindings[b.logical] = b.concrete
			}
		}
		return params, nil
	}, savedArtifactTable)
	fl := cmd.Flags()
	fl.StringVar(&f.id, "id", "", "artifact id (required)")
	fl.IntVar(&f.version, "version", 1, "artifact version")
	fl.StringVar(&f.title, "title", "", "title (default from the id)")
	fl.StringVar(&f.kind, "kind", "", "workflow (default) or wrapper")
	fl.StringVar(&f.description, "description", "", "what the workflow does")
	fl.StringArrayVar(&f.outcomes, "outcome", nil, "an outcome of the workflow; repeat for more (default ok)")
	fl.StringArrayVar(&f.bindings, "bind", nil, "LOGICAL=CONCRETE: a source binding; repeat for more")
	_ = cmd.RegisterFlagCompletionFunc("kind", fixedCompletion("workflow", "wrapper"))
	return cmd
}

func newArtifactsDeleteCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "delete ARTIFACT[@VERSION]",
		Short:   "Delete an artifact version no deployment uses (workflow.artifacts.delete)",
		Example: "  mcpflow artifacts delete counter_workflow@2",
		Args:    cobra.ExactArgs(1),
	}, p.MethodArtifactsDelete, artifactParams, func(t *table, res p.DeleteArtifactResult) {
		t.pairs("artifact", fmt.Sprintf("%s v%d", res.ArtifactID, res.Version), "deleted", res.Deleted)
		if len(res.BlockedByDeployments) > 0 {
			t.pairs("used by", res.BlockedByDeployments)
			t.line("delete those deployments first: mcpflow deployments delete ID")
		}
	})
}
