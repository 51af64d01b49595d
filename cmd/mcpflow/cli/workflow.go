package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpflow/mcpflow/actors/records"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

func newWorkflowCommand(r *remote) *cobra.Command {
	return newGroup("workflow", "Author workflows", newWorkflowNewCommand(r))
}

// scaffold are the flags of `workflow new`.
type scaffold struct {
	capability   string
	workspaceID  string
	artifactID   string
	deploymentID string
	title        string
	version      int
}

func newWorkflowNewCommand(r *remote) *cobra.Command {
	var s scaffold
	cmd := &cobra.Command{
		Use:   "new --from-capability CAP",
		Short: "Scaffold, save and deploy a workflow that wraps one capability",
		Long: `Scaffold a workflow that wraps one capability (a call step routed ok to
the end, and error to a step that fails the run with the tool's error
text), save it as an artifact and deploy it, its sources bound as the
artifact suggests. Prints the deployment id to run.

For the capability demo.default.counter the ids are counter_ws (workspace),
counter_workflow (artifact, version 1) and counter_workflow.default
(deployment) unless the flags say otherwise. With -o json:
{"workspace": …, "artifact": …, "deployment": …}, the three results.`,
		Example: `  mcpflow workflow new --from-capability demo.default.counter
  mcpflow run counter_workflow.default`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return r.do(cmd, s.run)
		},
	}
	f := cmd.Flags()
	f.StringVar(&s.capability, "from-capability", "", "the capability to wrap, e.g. demo.default.counter (required)")
	f.StringVar(&s.workspaceID, "workspace-id", "", "draft workspace id (default <tool>_ws)")
	f.StringVar(&s.artifactID, "artifact-id", "", "artifact id, also the workflow's name (default <tool>_workflow)")
	f.StringVar(&s.deploymentID, "deployment-id", "", "deployment id (default <artifact-id>.default)")
	f.StringVar(&s.title, "title", "", "artifact title (default: the server's, from the artifact id: Counter Workflow)")
	f.IntVar(&s.version, "version", 1, "artifact version")
	_ = cmd.MarkFlagRequired("from-capability")
	_ = cmd.RegisterFlagCompletionFunc("from-capability", completeIDs(r, capabilityNames))
	return cmd
}

// defaults fills the ids the flags left out from the capability's name.
func (s *scaffold) defaults() {
	tool := toolName(s.capability)
	s.workspaceID = firstSet(s.workspaceID, tool+"_ws")
	s.artifactID = firstSet(s.artifactID, tool+"_workflow")
	s.deploymentID = firstSet(s.deploymentID, s.artifactID+".default")
}

// toolName is the tool part of a capability name <provider>.<account>.<tool>,
// as an identifier.
func toolName(capability string) string {
	parts := strings.SplitN(capability, ".", 3)
	tool := parts[len(parts)-1]
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		default:
			return '_'
		}
	}, tool)
}

func (s *scaffold) run(ctx context.Context, c *conn) error {
	s.defaults()
	var capability p.CapabilityDetail
	if err := c.Call(ctx, p.MethodCapabilitiesInspect, p.InspectCapabilityParams{QualifiedName: s.capability}, &capability); err != nil {
		return fmt.Errorf("capability %s: %w", s.capability, err)
	}
	name := s.artifactID
	workspace, err := c.call(ctx, p.MethodWorkspaceFromCapability, p.CreateFromCapabilityParams{
		WorkspaceID: s.workspaceID, CapabilityName: s.capability, Name: &name, Title: optional(s.title),
	})
	if err != nil {
		return fmt.Errorf("scaffold workspace %s: %w", s.workspaceID, err)
	}
	var scaffolded p.CreateFromCapabilityResult
	if err := json.Unmarshal(workspace, &scaffolded); err != nil {
		return fmt.Errorf("%s: decode result: %w", p.MethodWorkspaceFromCapability, err)
	}
	// One capability saves to the same artifact from either face: as the
	// console's Save
	// artifact takes them, the title the server gave it and its draft's
	// outcomes.
	title := firstSet(s.title, ptrValue(scaffolded.Title), records.ScaffoldTitle(s.artifactID))
	doc, err := getDocument(ctx, c, s.workspaceID)
	if err != nil {
		return err
	}
	artifact, err := c.call(ctx, p.MethodWorkspaceCreateArtifact, p.CreateArtifactParams{
		WorkspaceID: s.workspaceID, ArtifactID: s.artifactID, Version: s.version, Title: title, Outcomes: documentOutcomes(doc.Draft),
	})
	if err != nil {
		return fmt.Errorf("save artifact %s: %w", s.artifactID, err)
	}
	var saved p.CreateArtifactResult
	if err := json.Unmarshal(artifact, &saved); err != nil {
		return fmt.Errorf("%s: decode result: %w", p.MethodWorkspaceCreateArtifact, err)
	}
	if !saved.Saved {
		return fmt.Errorf("save artifact %s: workspace %s is %s: %s", s.artifactID, s.workspaceID, saved.Status, diagnostics(saved.Diagnostics))
	}
	deployment, err := c.call(ctx, p.MethodDeploymentsSave, p.SaveDeploymentParams{Deployment: p.Object{
		"id": s.deploymentID, "artifact_id": s.artifactID, "artifact_version": s.version, "bindings": bindingsOf(saved.SuggestedBindings),
	}})
	if err != nil {
		return fmt.Errorf("deploy %s: %w", s.deploymentID, err)
	}
	if c.json() {
		return printJSON(c.out, map[string]json.RawMessage{"workspace": workspace, "artifact": artifact, "deployment": deployment})
	}
	t := newTable(c.out)
	t.pairs("workspace", s.workspaceID, "artifact", fmt.Sprintf("%s v%d", s.artifactID, s.version), "deployment", s.deploymentID)
	t.line("run it: %s run %s --follow", invocation(), s.deploymentID)
	return t.flush()
}

// bindingsOf is the deployment bindings of logical → concrete sources, in
// a stable order.
func bindingsOf(suggested map[string]string) []any {
	out := make([]any, 0, len(suggested))
	for _, l := range sortedKeys(suggested) {
		out = append(out, p.Object{"logical_source": l, "concrete_source": suggested[l]})
	}
	return out
}

// diagnostics is a one-line summary of workspace diagnostics.
func diagnostics(diags []p.Diagnostic) string {
	if len(diags) == 0 {
		return "no diagnostics"
	}
	data, err := json.Marshal(diags)
	if err != nil {
		return fmt.Sprintf("%d diagnostics", len(diags))
	}
	return clip(string(data), 400)
}

// deployFlags build a deployment from flags.
type deployFlags struct {
	id       string
	artifact string
	version  int
	bindings []string
}

func newDeployCommand(r *remote) *cobra.Command {
	var f deployFlags
	cmd := showing(r, &cobra.Command{
		Use:   "deploy [FILE|-]",
		Short: "Save a deployment (workflow.deployments.save)",
		Long: `Save a deployment: an artifact version bound to concrete sources. Give
the deployment as a JSON file (or - for stdin), in the form
workflow.deployments.inspect answers, or build it from flags.`,
		Example: `  mcpflow deploy deployment.json
  mcpflow deploy --artifact counter_workflow --bind demo.default=demo.default`,
		Args: cobra.MaximumNArgs(1),
	}, p.MethodDeploymentsSave, func(cmd *cobra.Command, args []string) (any, error) {
		deployment, err := f.deployment(args, cmd.InOrStdin())
		return p.SaveDeploymentParams{Deployment: deployment}, err
	}, func(t *table, res p.SaveDeploymentResult) {
		t.pairs("deployment", res.DeploymentID, "artifact", fmt.Sprintf("%s v%d", res.ArtifactID, res.ArtifactVersion), "saved", res.Saved)
	})
	fl := cmd.Flags()
	fl.StringVar(&f.id, "id", "", "deployment id (default <artifact>.default)")
	fl.StringVar(&f.artifact, "artifact", "", "artifact id to deploy")
	fl.IntVar(&f.version, "version", 1, "artifact version")
	fl.StringArrayVar(&f.bindings, "bind", nil, "LOGICAL=CONCRETE: bind a logical source to a connection; repeat for more")
	return cmd
}

// deployment is the deployment of the FILE argument, or of the flags.
func (f *deployFlags) deployment(args []string, stdin io.Reader) (p.Object, error) {
	if len(args) == 1 {
		if f.artifact != "" || f.id != "" || len(f.bindings) > 0 {
			return nil, errors.New("give a deployment FILE or flags, not both")
		}
		return objectFileFrom(args[0], stdin, "deployment")
	}
	if f.artifact == "" {
		return nil, errors.New("give a deployment FILE, or --artifact")
	}
	parsed, err := parseBindings(f.bindings)
	if err != nil {
		return nil, err
	}
	bindings := make([]any, 0, len(parsed))
	for _, b := range parsed {
		bindings = append(bindings, p.Object{"logical_source": b.logical, "concrete_source": b.concrete})
	}
	return p.Object{"id": firstSet(f.id, f.artifact+".default"), "artifact_id": f.artifact, "artifact_version": f.version, "bindings": bindings}, nil
}

// binding is one LOGICAL=CONCRETE source binding of a flag.
type binding struct{ logical, concrete string }

// parseBindings parses --bind LOGICAL=CONCRETE values.
func parseBindings(values []string) ([]binding, error) {
	out := make([]binding, 0, len(values))
	for _, b := range values {
		logical, concrete, ok := strings.Cut(b, "=")
		if !ok || logical == "" || concrete == "" {
			return nil, fmt.Errorf("--bind %q: want LOGICAL=CONCRETE", b)
		}
		out = append(out, binding{logical, concrete})
	}
	return out, nil
}

// ptrValue is *s, "" for nil.
func ptrValue(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
