package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpflow/mcpflow/actors/records"

	"github.com/mcpflow/mcpflow/actors/workflow"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// Workspace statuses.
const (
	draftValid    = "valid"
	draftInvalid  = "invalid"
	draftConflict = "conflict"
)

func newDraftCommand(r *remote) *cobra.Command {
	cmd := newGroup("draft", "Author workflows in draft workspaces, step by step",
		newDraftListCommand(r), newDraftGetCommand(r), newDraftCreateCommand(r), newDraftDeleteCommand(r),
		newDraftValidateCommand(r), newDraftCompileCommand(r), newDraftExportCommand(r), newDraftSaveCommand(r),
		newDraftAddCommand(r), newDraftEditCommand(r))
	cmd.AddCommand(newDraftEditCommands(r)...)
	examplesFromSubcommands(cmd)
	cmd.Long = `Author a workflow in a draft workspace on the server: create it, add steps
of the nine kinds, bind their inputs and outputs, route their outcomes,
validate it, then save it as an artifact to deploy.

Every edit names the workspace first and is made at its current revision,
or at --revision N (refused, with exit 1, if the workspace moved on). Each
prints the new revision and status and the diagnostics with their repair
hints; -o json prints the method's result. See docs/cli.md for a guide.`
	cmd.Example = `  mcpflow draft create triage --name triage
  mcpflow draft add foreach triage each --over input.tags --as tag --route done=__end__
  mcpflow draft validate triage
  mcpflow draft save triage --artifact triage`
	return cmd
}

func newDraftListCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "list",
		Short:   "List draft workspaces (workflow.draft_workspaces.list)",
		Example: `  mcpflow draft list -o json`,
		Args:    cobra.NoArgs,
	}, p.MethodWorkspaceList, noParams, func(t *table, res p.ListWorkspacesResult) {
		t.row("WORKSPACE", "REVISION", "STATUS", "NAME", "STEPS", "TITLE")
		for _, w := range res.Workspaces {
			t.row(w.WorkspaceID, w.Revision, w.Status, w.Summary.Name, w.Summary.StepCount, w.Title)
		}
	})
}

func newDraftGetCommand(r *remote) *cobra.Command {
	var document bool
	cmd := showing(r, &cobra.Command{
		Use:   "get WORKSPACE",
		Short: "Show a draft workspace: revision, status, steps, diagnostics (workflow.draft_workspaces.get)",
		Example: `  mcpflow draft get triage
  mcpflow draft get triage --document -o json`,
		Args: cobra.ExactArgs(1),
	}, p.MethodWorkspaceGet, func(_ *cobra.Command, args []string) (any, error) {
		return p.GetWorkspaceParams{WorkspaceID: args[0], IncludeDraft: document}, nil
	}, func(t *table, res p.WorkspaceResult) {
		workspaceTable(t, res)
		if res.Draft != nil {
			if data, err := json.MarshalIndent(res.Draft, "", "  "); err == nil {
				t.line("%s", data)
			}
		}
	})
	cmd.Flags().BoolVar(&document, "document", false, "show the draft document too")
	return cmd
}

// examplesFromSubcommands gives each group under cmd that has no example
// its subcommands' examples.
func examplesFromSubcommands(cmd *cobra.Command) {
	var examples []string
	for _, sub := range cmd.Commands() {
		examplesFromSubcommands(sub)
		if sub.Example != "" {
			examples = append(examples, sub.Example)
		}
	}
	if cmd.Example == "" && len(examples) > 0 {
		cmd.Example = strings.Join(examples, "\n")
	}
}

// workspaceTable shows a workspace: its revision, status and summary,
// then its diagnostics with their repair hints.
func workspaceTable(t *table, w p.WorkspaceResult) {
	t.pairs("workspace", w.WorkspaceID, "revision", w.Revision, "status", w.Status, "name", w.Summary.Name,
		"start", w.Summary.Start, "steps", w.Summary.Steps)
	findingRows(t, w.Diagnostics)
}

// findingRows shows draft diagnostics one to a row, each repair hint under
// its finding.
func findingRows(t *table, diags []p.Diagnostic) {
	if len(diags) == 0 {
		return
	}
	t.line("diagnostics:")
	for _, d := range diags {
		severity := "error"
		if !d.IsError() {
			severity = d.Severity
		}
		t.row("  "+severity, d.Code, d.Path, d.Message)
		if d.RepairHint != nil && *d.RepairHint != "" {
			t.row("", "", "hint:", *d.RepairHint)
		}
	}
}

// editTable shows the workspace an edit left, and what to do next.
func editTable(t *table, res p.DraftEditResult) {
	workspaceTable(t, res.WorkspaceResult)
	if next := res.NextActions.RecommendedNextTool; next != nil && *next != "" {
		t.line("next: %s (%s)", *next, res.NextActions.Reason)
	}
}

// createFlags are the flags of `draft create`.
type createFlags struct {
	name, title, capability string
	outcomes                []string
	schemas                 schemaFlags
}

// schemaFlags are the three schema flags of create and contract set, each
// a JSON object, @FILE or @-.
type schemaFlags struct {
	input, state, output string
}

func (s *schemaFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&s.input, "input-schema", "", "the workflow input's JSON Schema: a JSON object, @FILE or @-")
	f.StringVar(&s.state, "state-schema", "", "the workflow state's JSON Schema (reducers included)")
	f.StringVar(&s.output, "output-schema", "", "the workflow output's JSON Schema")
}

// parse reads the schemas that were given; the others stay nil.
func (s *schemaFlags) parse(cmd *cobra.Command) (input, state, output p.Object, err error) {
	read := func(flag, arg string) (p.Object, error) { return objectFlag(flag, arg, cmd.InOrStdin()) }
	if input, err = read("input-schema", s.input); err != nil {
		return
	}
	if state, err = read("state-schema", s.state); err != nil {
		return
	}
	output, err = read("output-schema", s.output)
	return
}

func newDraftCreateCommand(r *remote) *cobra.Command {
	var f createFlags
	cmd := &cobra.Command{
		Use:   "create WORKSPACE",
		Short: "Create a draft workspace, empty or wrapping a capability",
		Long: `Create a draft workspace: empty (workflow.draft_workspaces.create_empty),
its name --name (default the workspace id), or scaffolded around one
capability (workflow.draft_workspaces.create_from_capability): a call step
whose ok ends the workflow and whose error fails it with the tool's error text.`,
		Example: `  mcpflow draft create triage --name triage --title "Triage tags" --outcomes ok,rejected
  mcpflow draft create counter_ws --from-capability demo.default.counter`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			method, params, err := f.params(cmd, args[0])
			if err != nil {
				return err
			}
			return r.do(cmd, func(ctx context.Context, c *conn) error {
				res, err := callShow(ctx, c, method, params, editTable)
				if err == nil && res.Status == draftConflict {
					return fmt.Errorf("workspace %s: %s", args[0], diagnostics(res.Diagnostics))
				}
				return err
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.name, "name", "", "the workflow's name (default: the workspace id; from a capability: its tool's)")
	fl.StringVar(&f.title, "title", "", "the workspace's title")
	fl.StringVar(&f.capability, "from-capability", "", "scaffold around this capability, e.g. demo.default.counter")
	fl.StringSliceVar(&f.outcomes, "outcomes", nil, "the outcomes the workflow may end with (default ok)")
	f.schemas.add(cmd)
	return cmd
}

// params are the method and params `draft create` calls.
func (f *createFlags) params(cmd *cobra.Command, id string) (string, any, error) {
	input, state, output, err := f.schemas.parse(cmd)
	if err != nil {
		return "", nil, err
	}
	if f.capability != "" {
		if len(f.outcomes) > 0 {
			return "", nil, errors.New("--outcomes does not go with --from-capability: the capability's outcomes are the workflow's")
		}
		return p.MethodWorkspaceFromCapability, p.CreateFromCapabilityParams{WorkspaceID: id, CapabilityName: f.capability,
			Name: optional(f.name), Title: optional(f.title), InputSchema: input, StateSchema: state, OutputSchema: output}, nil
	}
	return p.MethodWorkspaceCreateEmpty, p.CreateEmptyParams{WorkspaceID: id, Name: firstSet(f.name, id), Title: optional(f.title),
		InputSchema: input, StateSchema: state, OutputSchema: output, Outcomes: f.outcomes}, nil
}

func newDraftDeleteCommand(r *remote) *cobra.Command {
	return &cobra.Command{
		Use:     "delete WORKSPACE",
		Short:   "Delete a draft workspace (workflow.draft_workspaces.delete)",
		Long:    "Delete a draft workspace. A workspace that is not there exits 1.",
		Example: `  mcpflow draft delete triage`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return r.do(cmd, func(ctx context.Context, c *conn) error {
				res, err := callShow(ctx, c, p.MethodWorkspaceDelete, p.WorkspaceIDParams{WorkspaceID: args[0]}, func(t *table, res p.DeleteWorkspaceResult) {
					t.pairs("workspace", res.WorkspaceID, "status", res.Status)
				})
				if err == nil && !res.Deleted {
					return fmt.Errorf("no workspace %s", args[0])
				}
				return err
			})
		},
	}
}

func newDraftValidateCommand(r *remote) *cobra.Command {
	return &cobra.Command{
		Use:   "validate WORKSPACE",
		Short: "Validate a draft workspace against the live catalog (workflow.draft_workspaces.validate)",
		Long: `Validate a draft workspace against the capabilities the server has now,
without a new revision. Prints its status and diagnostics, each with its
repair hint; exits 1 when it is invalid.`,
		Example: `  mcpflow draft validate triage
  mcpflow draft validate triage -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return r.do(cmd, func(ctx context.Context, c *conn) error {
				res, err := callShow(ctx, c, p.MethodWorkspaceValidate, p.WorkspaceIDParams{WorkspaceID: args[0]}, workspaceTable)
				if err != nil {
					return err
				}
				return invalidExit(args[0], res.Status, res.Diagnostics)
			})
		},
	}
}

// invalidExit is the exit of a workspace with status: an error unless it
// is valid.
func invalidExit(id, status string, diags []p.Diagnostic) error {
	if status == draftValid {
		return nil
	}
	errs := 0
	for _, d := range diags {
		if d.IsError() {
			errs++
		}
	}
	return fmt.Errorf("workspace %s is %s: %d error(s); fix what the diagnostics above say (mcpflow explain CODE says more), then validate again", id, status, errs)
}

func newDraftCompileCommand(r *remote) *cobra.Command {
	return &cobra.Command{
		Use:   "compile WORKSPACE",
		Short: "Compile a draft workspace to its plan (workflow.draft_workspaces.compile)",
		Long: `Compile a valid draft workspace to its raw plan and the capabilities it
requires. An invalid one shows its diagnostics and exits 1.`,
		Example: `  mcpflow draft compile triage -o json > plan.json`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return r.do(cmd, func(ctx context.Context, c *conn) error {
				res, err := callShow(ctx, c, p.MethodWorkspaceCompile, p.WorkspaceIDParams{WorkspaceID: args[0]}, compileTable)
				if err != nil {
					return err
				}
				if res.CompiledPlan == nil {
					return invalidExit(args[0], firstSet(res.Status, draftInvalid), res.Diagnostics)
				}
				return nil
			})
		},
	}
}

// compileTable shows a compiled plan's nodes and edges, or why there is
// none.
func compileTable(t *table, res p.CompileWorkspaceResult) {
	if res.CompiledPlan == nil {
		t.pairs("status", firstSet(res.Status, draftInvalid))
		findingRows(t, res.Diagnostics)
		return
	}
	plan, err := planOf(res.CompiledPlan)
	if err != nil {
		t.pairs("status", res.Status, "plan", err.Error())
		return
	}
	t.pairs("start", plan.Start, "nodes", len(plan.Nodes), "edges", len(plan.Edges), "requires", sortedKeys(res.RequiredCapabilities))
	t.row("NODE", "TYPE", "CAPABILITY")
	for _, n := range plan.Nodes {
		t.row(n.ID, n.Type, n.Node)
	}
	t.row("FROM", "OUTCOME", "TO")
	for _, e := range plan.Edges {
		t.row(e.From, e.Outcome, e.To)
	}
}

// getDocument reads a workspace's revision and draft document.
func getDocument(ctx context.Context, c *conn, id string) (p.WorkspaceResult, error) {
	var w p.WorkspaceResult
	if err := c.Call(ctx, p.MethodWorkspaceGet, p.GetWorkspaceParams{WorkspaceID: id, IncludeDraft: true}, &w); err != nil {
		return w, fmt.Errorf("workspace %s: %w", id, err)
	}
	return w, nil
}

// documentJSON is a draft document as people read and edit it: indented,
// with a final newline.
func documentJSON(doc p.Object) ([]byte, error) {
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode draft: %w", err)
	}
	return append(data, '\n'), nil
}

func newDraftExportCommand(r *remote) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "export WORKSPACE",
		Short: "Write a workspace's draft document, to stdout or --file",
		Long: `Write a workspace's draft document as indented JSON, to stdout or to
--file. It is the document replace, patch and edit work on, and that
workflow.drafts.validate takes.`,
		Example: `  mcpflow draft export triage --file triage.json
  mcpflow draft export triage | jq .steps`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return r.do(cmd, func(ctx context.Context, c *conn) error {
				w, err := getDocument(ctx, c, args[0])
				if err != nil {
					return err
				}
				data, err := documentJSON(w.Draft)
				if err != nil {
					return err
				}
				if file == "" {
					_, err = c.out.Write(data)
					return err
				}
				if err := os.WriteFile(file, data, 0o600); err != nil {
					return fmt.Errorf("export %s: %w", args[0], err)
				}
				fmt.Fprintf(c.err, "wrote %s (revision %d, %s)\n", file, w.Revision, w.Status)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&file, "file", "", "write the document to this file instead of stdout")
	return cmd
}

// saveFlags are the flags of `draft save`.
type saveFlags struct {
	artifact, title, description, kind string
	version                            int
	outcomes                           []string
}

func newDraftSaveCommand(r *remote) *cobra.Command {
	var f saveFlags
	cmd := &cobra.Command{
		Use:   "save WORKSPACE --artifact ID",
		Short: "Save a valid workspace as an artifact version (workflow.draft_workspaces.create_artifact)",
		Long: `Save a valid draft workspace as an artifact version, to deploy. The
outcomes default to the draft's, the title to one made from the artifact
id. Prints the logical sources the artifact needs and the bindings the
server suggests; an invalid workspace shows its diagnostics and exits 1.`,
		Example: `  mcpflow draft save triage --artifact triage
  mcpflow deploy --artifact triage --bind demo.default=demo.default`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.version < 1 {
				return errors.New("--version must be at least 1")
			}
			return r.do(cmd, func(ctx context.Context, c *conn) error { return f.save(ctx, c, args[0]) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.artifact, "artifact", "", "the artifact id (required)")
	fl.IntVar(&f.version, "version", 1, "the artifact version")
	fl.StringVar(&f.title, "title", "", "the artifact's title (default: the workspace's title, else one made from the artifact id)")
	fl.StringVar(&f.description, "description", "", "the artifact's description")
	fl.StringVar(&f.kind, "kind", "", "workflow (default) or wrapper")
	fl.StringSliceVar(&f.outcomes, "outcomes", nil, "the artifact's outcomes (default: the draft's)")
	_ = cmd.MarkFlagRequired("artifact")
	_ = cmd.RegisterFlagCompletionFunc("kind", fixedCompletion("workflow", "wrapper"))
	return cmd
}

func (f *saveFlags) save(ctx context.Context, c *conn, id string) error {
	outcomes := f.outcomes
	if len(outcomes) == 0 {
		w, err := getDocument(ctx, c, id)
		if err != nil {
			return err
		}
		outcomes = documentOutcomes(w.Draft)
	}
	params := p.CreateArtifactParams{WorkspaceID: id, ArtifactID: f.artifact, Version: f.version,
		Title: firstSet(f.title, records.ScaffoldTitle(f.artifact)), Outcomes: outcomes, Kind: optional(f.kind), Description: optional(f.description)}
	res, err := callShow(ctx, c, p.MethodWorkspaceCreateArtifact, params, func(t *table, res p.CreateArtifactResult) {
		if !res.Saved {
			t.pairs("saved", false)
			workspaceTable(t, p.WorkspaceResult{WorkspaceID: res.WorkspaceID, Revision: res.Revision, Status: res.Status, Diagnostics: res.Diagnostics})
			return
		}
		t.pairs("artifact", fmt.Sprintf("%s v%d", res.ArtifactID, res.Version), "saved", true,
			"requires sources", res.RequiredLogicalSources, "suggested bindings", res.SuggestedBindings)
		t.line("deploy it: %s deploy --artifact %s --version %d%s", invocation(), res.ArtifactID, res.Version, bindFlags(res.SuggestedBindings))
	})
	if err != nil {
		return err
	}
	if !res.Saved {
		return invalidExit(id, res.Status, res.Diagnostics)
	}
	return nil
}

// documentOutcomes are a draft document's outcomes, ["ok"] when it names
// none.
func documentOutcomes(doc p.Object) []string {
	list, _ := doc["outcomes"].([]any)
	var out []string
	for _, o := range list {
		if s, ok := o.(string); ok {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return []string{workflow.OutcomeOK}
	}
	return out
}

// bindFlags are the --bind flags of suggested bindings, in a stable order.
func bindFlags(suggested map[string]string) string {
	var b strings.Builder
	for _, l := range sortedKeys(suggested) {
		fmt.Fprintf(&b, " --bind %s=%s", l, suggested[l])
	}
	return b.String()
}
