package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

// editing makes cmd a draft edit of the workspace args[0]: params builds
// the method's params from the arguments (an error there is the caller's,
// reported before connecting), and the edit is made at --revision, or at
// the workspace's current revision.
func editing(r *remote, cmd *cobra.Command, method string, params func(cmd *cobra.Command, args []string) (any, error)) *cobra.Command {
	var revision int
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if revision < 0 {
			return errors.New("--revision must be positive")
		}
		ps, err := params(cmd, args)
		if err != nil {
			return err
		}
		return r.do(cmd, func(ctx context.Context, c *conn) error {
			_, err := applyEdit(ctx, c, args[0], revision, method, ps)
			return err
		})
	}
	cmd.Flags().IntVar(&revision, "revision", 0, "make the edit at this revision, refused if the workspace moved on (default: its current one)")
	return cmd
}

// applyEdit calls method on the workspace id at revision (0: its current
// one) and shows the result. A revision conflict is an error.
func applyEdit(ctx context.Context, c *conn, id string, revision int, method string, params any) (p.DraftEditResult, error) {
	if m, ok := params.(mergeCall); ok {
		method, params = m.method, m.params
	}
	if revision == 0 {
		var w p.WorkspaceResult
		if err := c.Call(ctx, p.MethodWorkspaceGet, p.GetWorkspaceParams{WorkspaceID: id}, &w); err != nil {
			return p.DraftEditResult{}, fmt.Errorf("workspace %s: %w", id, err)
		}
		revision = w.Revision
	}
	at, err := atRevision(params, revision)
	if err != nil {
		return p.DraftEditResult{}, err
	}
	res, err := callShow(ctx, c, method, at, editTable)
	if err != nil {
		return res, err
	}
	if res.Status == draftConflict {
		return res, fmt.Errorf("workspace %s changed: %s; see it with: mcpflow draft get %s", id, diagnostics(res.Diagnostics), id)
	}
	return res, nil
}

// atRevision is params with their revision set.
func atRevision(params any, revision int) (map[string]json.RawMessage, error) {
	data, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encode params: %w", err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("encode params: %w", err)
	}
	obj["revision"] = json.RawMessage(fmt.Sprint(revision))
	return obj, nil
}

// newDraftEditCommands are the edits beside add and edit.
func newDraftEditCommands(r *remote) []*cobra.Command {
	return []*cobra.Command{
		newDraftBindCommand(r), newDraftBranchCommand(r), newDraftHandleCommand(r),
		newGroup("route", "Set or remove one route of a step", newRouteSetCommand(r), newRouteRemoveCommand(r)),
		newGroup("step", "Update a use step's settings, or remove a step", newStepUpdateCommand(r), newStepRemoveCommand(r)),
		newGroup("binding", "Remove input or output bindings of a step", newBindingRemoveCommand(r)),
		newGroup("inputs", "Replace a step's input bindings", newInputsSetCommand(r)),
		newGroup("outputs", "Replace a step's output bindings", newOutputsSetCommand(r)),
		newGroup("output", "Replace the workflow's output bindings", newOutputSetCommand(r)),
		newGroup("contract", "Replace the workflow's schemas or outcomes", newContractSetCommand(r)),
		newGroup("start", "Set the workflow's first step", newStartSetCommand(r)),
		newGroup("name", "Set the workflow's name", newNameSetCommand(r)),
		newDraftPatchCommand(r), newDraftReplaceCommand(r),
	}
}

func newDraftBindCommand(r *remote) *cobra.Command {
	return editing(r, &cobra.Command{
		Use:   "bind WORKSPACE STEP SOURCE TARGET",
		Short: "Bind a use step's input or output (workflow.draft_workspaces.bind)",
		Long: `Bind one field of a use step, projecting the schemas it touches:
  input.X or state.X → local.Y   fills the step's input field Y
  local.Y → state.X              stores its output field Y in the state
  local.Y → output.Z             makes its output field Y the workflow's output Z`,
		Example: `  mcpflow draft bind triage say input.title local.message
  mcpflow draft bind triage say local.message output.said`,
		Args: cobra.ExactArgs(4),
	}, p.MethodWorkspaceBind, func(_ *cobra.Command, args []string) (any, error) {
		return p.BindParams{WorkspaceID: args[0], StepID: args[1], SourcePath: args[2], TargetPath: args[3]}, nil
	})
}

func newDraftBranchCommand(r *remote) *cobra.Command {
	return editing(r, &cobra.Command{
		Use:     "branch WORKSPACE STEP OUTCOME=TARGET...",
		Short:   "Route outcomes of one step, keeping its other routes (workflow.draft_workspaces.branch)",
		Example: `  mcpflow draft branch triage say ok=check error=__end__`,
		Args:    cobra.MinimumNArgs(3),
	}, p.MethodWorkspaceBranch, func(_ *cobra.Command, args []string) (any, error) {
		routes, err := pairMap("route", args[2:])
		return p.BranchParams{WorkspaceID: args[0], StepID: args[1], Routes: routes}, err
	})
}

func newDraftHandleCommand(r *remote) *cobra.Command {
	var target string
	cmd := editing(r, &cobra.Command{
		Use:   "handle WORKSPACE STEP[:OUTCOME]... --to TARGET",
		Short: "Route several step outcomes to one target (workflow.draft_workspaces.handle)",
		Long:  "Route each STEP:OUTCOME (OUTCOME ok when left out) to the step TARGET, or __end__.",
		Example: `  mcpflow draft handle triage fetch:error store:error --to report_error
  mcpflow draft handle triage say --to check`,
		Args: cobra.MinimumNArgs(2),
	}, p.MethodWorkspaceHandle, func(_ *cobra.Command, args []string) (any, error) {
		branches := make([]p.HandleBranch, 0, len(args)-1)
		for _, a := range args[1:] {
			rs := routeSource(a)
			branches = append(branches, p.HandleBranch{StepID: rs.StepID, Outcome: firstSet(rs.Outcome, "ok")})
		}
		return p.HandleParams{WorkspaceID: args[0], Branches: branches, Target: target}, nil
	})
	cmd.Flags().StringVar(&target, "to", "", "the step the outcomes go to, or __end__ (required)")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

func newRouteSetCommand(r *remote) *cobra.Command {
	return editing(r, &cobra.Command{
		Use:     "set WORKSPACE STEP OUTCOME TARGET",
		Short:   "Route one outcome of a step to TARGET, or __end__ (workflow.draft_workspaces.set_route)",
		Example: `  mcpflow draft route set triage ask submitted __end__`,
		Args:    cobra.ExactArgs(4),
	}, p.MethodWorkspaceSetRoute, func(_ *cobra.Command, args []string) (any, error) {
		return p.SetRouteParams{WorkspaceID: args[0], StepID: args[1], Outcome: args[2], Target: args[3]}, nil
	})
}

func newRouteRemoveCommand(r *remote) *cobra.Command {
	return editing(r, &cobra.Command{
		Use:     "remove WORKSPACE STEP OUTCOME",
		Short:   "Remove one route of a step (workflow.draft_workspaces.remove_route)",
		Example: `  mcpflow draft route remove triage say error`,
		Args:    cobra.ExactArgs(3),
	}, p.MethodWorkspaceRemoveRoute, func(_ *cobra.Command, args []string) (any, error) {
		return p.RemoveRouteParams{WorkspaceID: args[0], StepID: args[1], Outcome: args[2]}, nil
	})
}

// stepUpdate are the flags of `draft step update`.
type stepUpdate struct {
	desc                       string
	retry, timeout             int
	noDesc, noRetry, noTimeout bool
	in                         inputFlags
}

func newStepUpdateCommand(r *remote) *cobra.Command {
	var u stepUpdate
	cmd := editing(r, &cobra.Command{
		Use:   "update WORKSPACE STEP",
		Short: "Change a use step's desc, retry, timeout or input (workflow.draft_workspaces.update_capability_step)",
		Long: `Change what is given of a use step's desc, retry and timeout_seconds, or
remove them (--no-desc, --no-retry, --no-timeout); --in, --value and
--expr replace its input bindings. The rest stays.`,
		Example: `  mcpflow draft step update triage say --retry 2 --timeout-seconds 10
  mcpflow draft step update triage say --no-retry --in message=context.tag`,
		Args: cobra.ExactArgs(2),
	}, p.MethodWorkspaceUpdateCapabilityStep, func(cmd *cobra.Command, args []string) (any, error) {
		update, err := u.update(cmd)
		return p.UpdateCapabilityStepParams{WorkspaceID: args[0], StepID: args[1], Update: update}, err
	})
	u.addFlags(cmd)
	return cmd
}

func (u *stepUpdate) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&u.desc, "desc", "", "what the step is for")
	f.IntVar(&u.retry, "retry", 0, "further attempts when the call fails")
	f.IntVar(&u.timeout, "timeout-seconds", 0, "deadline of each call")
	f.BoolVar(&u.noDesc, "no-desc", false, "remove the step's desc")
	f.BoolVar(&u.noRetry, "no-retry", false, "remove the step's retry")
	f.BoolVar(&u.noTimeout, "no-timeout", false, "remove the step's timeout_seconds")
	u.in.add(f, "", "the step's input")
	cmd.MarkFlagsMutuallyExclusive("desc", "no-desc")
	cmd.MarkFlagsMutuallyExclusive("retry", "no-retry")
	cmd.MarkFlagsMutuallyExclusive("timeout-seconds", "no-timeout")
}

// update is the presence-aware update the flags given ask for.
func (u *stepUpdate) update(cmd *cobra.Command) (p.CapabilityStepUpdate, error) {
	var up p.CapabilityStepUpdate
	changed := cmd.Flags().Changed
	switch {
	case changed("desc"):
		up.Desc = p.Put(u.desc)
	case u.noDesc:
		up.Desc = p.Clear[string]()
	}
	switch {
	case changed("retry"):
		up.Retry = p.Put(u.retry)
	case u.noRetry:
		up.Retry = p.Clear[int]()
	}
	switch {
	case changed("timeout-seconds"):
		up.TimeoutSeconds = p.Put(u.timeout)
	case u.noTimeout:
		up.TimeoutSeconds = p.Clear[int]()
	}
	if u.in.given() {
		bindings, err := apiBindings(u.in.bindings(""))
		if err != nil {
			return up, err
		}
		up.Input = p.Put(bindings)
	}
	if !up.Desc.Set && !up.Retry.Set && !up.TimeoutSeconds.Set && !up.Input.Set {
		return up, errors.New("give what to change: --desc, --retry, --timeout-seconds, their --no- forms, or --in/--value/--expr")
	}
	return up, nil
}

func newStepRemoveCommand(r *remote) *cobra.Command {
	return editing(r, &cobra.Command{
		Use:   "remove WORKSPACE STEP",
		Short: "Remove a step and its own routes (workflow.draft_workspaces.remove_step)",
		Long: `Remove a step and its own routes. Routes to it from other steps stay, and
validation reports them, so that you can point them elsewhere.`,
		Example: `  mcpflow draft step remove triage check`,
		Args:    cobra.ExactArgs(2),
	}, p.MethodWorkspaceRemoveStep, func(_ *cobra.Command, args []string) (any, error) {
		return p.RemoveStepParams{WorkspaceID: args[0], StepID: args[1]}, nil
	})
}

func newBindingRemoveCommand(r *remote) *cobra.Command {
	var inputs, outputs []string
	cmd := editing(r, &cobra.Command{
		Use:     "remove WORKSPACE STEP [--input TARGET]... [--output SOURCE]...",
		Short:   "Remove bindings of a step (workflow.draft_workspaces.remove_binding)",
		Example: `  mcpflow draft binding remove triage say --input message --output message`,
		Args:    cobra.ExactArgs(2),
	}, p.MethodWorkspaceRemoveBinding, func(_ *cobra.Command, args []string) (any, error) {
		if len(inputs)+len(outputs) == 0 {
			return nil, errors.New("give --input or --output: the bindings to remove")
		}
		return p.RemoveBindingParams{WorkspaceID: args[0], StepID: args[1], Inputs: inputs, Outputs: outputs}, nil
	})
	cmd.Flags().StringArrayVar(&inputs, "input", nil, "the local target of an input binding to remove; repeat for more")
	cmd.Flags().StringArrayVar(&outputs, "output", nil, "the local source of an output binding to remove; repeat for more")
	return cmd
}

func newInputsSetCommand(r *remote) *cobra.Command {
	var (
		in    inputFlags
		merge bool
	)
	cmd := editing(r, &cobra.Command{
		Use:   "set WORKSPACE STEP",
		Short: "Replace a step's input bindings (workflow.draft_workspaces.set_step_input_bindings)",
		Long: `Replace a step's whole, ordered input binding list: the --in bindings, then
the --value ones, then the --expr ones. None given clears it. With --merge
the --in bindings are added to the step's, replacing those of the same
targets (workflow.draft_workspaces.set_step_input_map).`,
		Example: `  mcpflow draft inputs set triage say --in message=context.tag --value loud=true
  mcpflow draft inputs set triage say --in title=input.title --merge`,
		Args: cobra.ExactArgs(2),
	}, p.MethodWorkspaceSetStepInputBindings, func(_ *cobra.Command, args []string) (any, error) {
		if merge {
			m, err := in.pathMap()
			return mergeCall{p.MethodWorkspaceSetStepInputMap, p.SetStepInputMapParams{WorkspaceID: args[0], StepID: args[1], InputMap: m, Merge: true}}, err
		}
		bindings, err := apiBindings(in.bindings(""))
		return p.SetStepInputBindingsParams{WorkspaceID: args[0], StepID: args[1], Bindings: bindings}, err
	})
	in.add(cmd.Flags(), "", "the step's input")
	addMergeFlag(cmd, &merge, "--in")
	return cmd
}

func newOutputsSetCommand(r *remote) *cobra.Command {
	var (
		out   []string
		merge bool
	)
	cmd := editing(r, &cobra.Command{
		Use:   "set WORKSPACE STEP",
		Short: "Replace a step's output bindings (workflow.draft_workspaces.set_step_output_bindings)",
		Long: `Replace a step's whole, ordered output binding list. None given clears it.
With --merge they are added to the step's, replacing those of the same
sources (workflow.draft_workspaces.set_step_output_map).`,
		Example: `  mcpflow draft outputs set triage say --out state.echoes=message`,
		Args:    cobra.ExactArgs(2),
	}, p.MethodWorkspaceSetStepOutputBindings, func(_ *cobra.Command, args []string) (any, error) {
		bindings, err := outputBindings("out", out)
		if err != nil || !merge {
			params, err := apiBindings(bindings, err)
			return p.SetStepOutputBindingsParams{WorkspaceID: args[0], StepID: args[1], Bindings: params}, err
		}
		m := make(map[string]string, len(bindings))
		for _, b := range bindings {
			m[b.Source.String()] = b.Target.String()
		}
		return mergeCall{p.MethodWorkspaceSetStepOutputMap, p.SetStepOutputMapParams{WorkspaceID: args[0], StepID: args[1], OutputMap: m, Merge: true}}, nil
	})
	addOutFlag(cmd.Flags(), &out, "the step's output")
	addMergeFlag(cmd, &merge, "--out")
	return cmd
}

// mergeCall is an edit that calls another method than its command's
// own: a --merge, which the legacy map methods make.
type mergeCall struct {
	method string
	params any
}

// addMergeFlag adds --merge.
func addMergeFlag(cmd *cobra.Command, merge *bool, what string) {
	cmd.Flags().BoolVar(merge, "merge", false, "add the "+what+" bindings to the present ones instead of replacing them all")
}

// addOutFlag adds --out STATE=SOURCE.
func addOutFlag(f *pflag.FlagSet, out *[]string, what string) {
	f.StringArrayVar(out, "out", nil, "STATE=SOURCE: store "+what+" field SOURCE (. for all of it) at the state path STATE; repeat for more")
}

func newOutputSetCommand(r *remote) *cobra.Command {
	var (
		in    inputFlags
		merge bool
	)
	cmd := editing(r, &cobra.Command{
		Use:   "set WORKSPACE",
		Short: "Replace the workflow's output bindings (workflow.draft_workspaces.set_workflow_output_bindings)",
		Long: `Replace the bindings that project the workflow's public output when it
ends: --in TARGET=PATH (input or state) and --value TARGET=VALUE. None
given clears them: the output is then the state fields the output schema
names. With --merge the --in bindings are added to the present ones
(workflow.draft_workspaces.set_workflow_output_map).`,
		Example: `  mcpflow draft output set triage --in echoes=state.echoes --in approved=state.approved`,
		Args:    cobra.ExactArgs(1),
	}, p.MethodWorkspaceSetWorkflowOutputBindings, func(_ *cobra.Command, args []string) (any, error) {
		if merge {
			m, err := in.pathMap()
			return mergeCall{p.MethodWorkspaceSetWorkflowOutputMap, p.SetWorkflowOutputMapParams{WorkspaceID: args[0], OutputMap: m, Merge: true}}, err
		}
		bindings, err := apiBindings(in.bindings(""))
		return p.SetWorkflowOutputBindingsParams{WorkspaceID: args[0], Bindings: bindings}, err
	})
	f := cmd.Flags()
	f.StringArrayVar(&in.in, "in", nil, "TARGET=PATH: output field TARGET from a path of the input or state; repeat for more")
	f.StringArrayVar(&in.value, "value", nil, "TARGET=VALUE: output field TARGET as a literal (JSON, else a string); repeat for more")
	addMergeFlag(cmd, &merge, "--in")
	return cmd
}

func newContractSetCommand(r *remote) *cobra.Command {
	var (
		schemas  schemaFlags
		outcomes []string
	)
	cmd := editing(r, &cobra.Command{
		Use:   "set WORKSPACE",
		Short: "Replace the workflow's schemas or outcomes (workflow.draft_workspaces.set_contract)",
		Long:  "Replace each of the input, state and output schemas and the outcomes that is given; at least one.",
		Example: `  mcpflow draft contract set triage --outcomes ok,rejected \
    --input-schema '{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}}}}'`,
		Args: cobra.ExactArgs(1),
	}, p.MethodWorkspaceSetContract, func(cmd *cobra.Command, args []string) (any, error) {
		input, state, output, err := schemas.parse(cmd)
		if err != nil {
			return nil, err
		}
		if input == nil && state == nil && output == nil && len(outcomes) == 0 {
			return nil, errors.New("give at least one of --input-schema, --state-schema, --output-schema, --outcomes")
		}
		return p.SetContractParams{WorkspaceID: args[0], InputSchema: input, StateSchema: state, OutputSchema: output, Outcomes: outcomes}, nil
	})
	schemas.add(cmd)
	cmd.Flags().StringSliceVar(&outcomes, "outcomes", nil, "the outcomes the workflow may end with")
	return cmd
}

func newStartSetCommand(r *remote) *cobra.Command {
	return editing(r, &cobra.Command{
		Use:     "set WORKSPACE STEP",
		Short:   "Set the workflow's first step (workflow.draft_workspaces.set_start)",
		Example: `  mcpflow draft start set triage each`,
		Args:    cobra.ExactArgs(2),
	}, p.MethodWorkspaceSetStart, func(_ *cobra.Command, args []string) (any, error) {
		return p.SetStartParams{WorkspaceID: args[0], StepID: args[1]}, nil
	})
}

func newNameSetCommand(r *remote) *cobra.Command {
	return editing(r, &cobra.Command{
		Use:     "set WORKSPACE NAME",
		Short:   "Set the workflow's name (workflow.draft_workspaces.set_name)",
		Example: `  mcpflow draft name set triage triage_tags`,
		Args:    cobra.ExactArgs(2),
	}, p.MethodWorkspaceSetName, func(_ *cobra.Command, args []string) (any, error) {
		return p.SetNameParams{WorkspaceID: args[0], Name: args[1]}, nil
	})
}

func newDraftPatchCommand(r *remote) *cobra.Command {
	return editing(r, &cobra.Command{
		Use:   "patch WORKSPACE FILE",
		Short: "Apply an RFC 6902 JSON Patch to the draft document (workflow.draft_workspaces.patch)",
		Long: `Apply an RFC 6902 JSON Patch (a JSON list of operations, from FILE or - for
stdin) to the workspace's draft document. A malformed patch changes
nothing and keeps the revision.`,
		Example: `  echo '[{"op":"replace","path":"/name","value":"triage_tags"}]' | mcpflow draft patch triage -`,
		Args:    cobra.ExactArgs(2),
	}, p.MethodWorkspacePatch, func(cmd *cobra.Command, args []string) (any, error) {
		data, err := readFileOrStdin(args[1], cmd.InOrStdin())
		if err != nil {
			return nil, err
		}
		var ops []p.Object
		if err := json.Unmarshal(data, &ops); err != nil {
			return nil, fmt.Errorf("patch %s: not a JSON list of operations: %w", args[1], err)
		}
		return p.PatchWorkspaceParams{WorkspaceID: args[0], Patch: ops}, nil
	})
}

func newDraftReplaceCommand(r *remote) *cobra.Command {
	return editing(r, &cobra.Command{
		Use:   "replace WORKSPACE FILE",
		Short: "Replace the whole draft document (workflow.draft_workspaces.replace_document)",
		Long: `Replace the workspace's whole draft document with the one in FILE (or - for
stdin), as draft export writes it.`,
		Example: `  mcpflow draft export triage --file triage.json
  mcpflow draft replace triage triage.json`,
		Args: cobra.ExactArgs(2),
	}, p.MethodWorkspaceReplaceDocument, func(cmd *cobra.Command, args []string) (any, error) {
		doc, err := readDocument(args[1], cmd)
		return p.ReplaceDocumentParams{WorkspaceID: args[0], Draft: doc}, err
	})
}

// readDocument reads a draft document from FILE or - for stdin.
func readDocument(name string, cmd *cobra.Command) (p.Object, error) {
	data, err := readFileOrStdin(name, cmd.InOrStdin())
	if err != nil {
		return nil, err
	}
	doc, err := decodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("draft %s: %w", strings.TrimSpace(name), err)
	}
	return doc, nil
}
