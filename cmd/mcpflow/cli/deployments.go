package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

// The deployments group reads, checks and deletes deployments; `mcpflow
// deploy` saves them.
func newDeploymentsCommand(r *remote) *cobra.Command {
	return newGroup("deployments", "List, inspect, validate and delete deployments (save one with 'mcpflow deploy')",
		newDeploymentsListCommand(r), newDeploymentsInspectCommand(r), newDeploymentsValidateCommand(r), newDeploymentsDeleteCommand(r))
}

// deploymentParams are the params of a method that takes the DEPLOYMENT
// argument.
var deploymentParams = idParams(func(id string) any { return p.DeploymentIDParams{DeploymentID: id} })

func newDeploymentsListCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "list",
		Short:   "List deployments (workflow.deployments.list)",
		Example: "  mcpflow deployments list\n  mcpflow deployments list -o json",
		Args:    cobra.NoArgs,
	}, p.MethodDeploymentsList, noParams, func(t *table, res p.ListDeploymentsResult) {
		t.row("DEPLOYMENT", "ARTIFACT", "BINDINGS", "DRIFT POLICY")
		for _, d := range res.Deployments {
			t.row(d.ID, fmt.Sprintf("%s v%d", d.ArtifactID, d.ArtifactVersion), d.BindingCount, d.DriftPolicy)
		}
	})
}

func newDeploymentsInspectCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "inspect DEPLOYMENT",
		Short:   "Show a deployment: its artifact and bindings (workflow.deployments.inspect)",
		Long:    "Show a deployment. With -o json: the deployment, in the form 'mcpflow deploy FILE' takes.",
		Example: "  mcpflow deployments inspect counter_workflow.default\n  mcpflow deployments inspect counter_workflow.default -o json > deployment.json",
		Args:    cobra.ExactArgs(1),
	}, p.MethodDeploymentsInspect, deploymentParams, func(t *table, d p.Deployment) {
		t.pairs("deployment", d.ID, "artifact", fmt.Sprintf("%s v%d", d.ArtifactID, d.ArtifactVersion), "drift policy", d.DriftPolicy)
		if d.Limits != nil {
			t.pairs("max steps", d.Limits.MaxSteps, "run timeout (s)", d.Limits.RunTimeoutSeconds)
		}
		if d.MCP != nil {
			t.pairs("mcp tool", d.MCP.ToolName, "mcp hidden", d.MCP.Hidden)
		}
		if len(d.Bindings) > 0 {
			t.line("")
			t.row("LOGICAL SOURCE", "CONCRETE SOURCE", "SESSION")
			for _, b := range d.Bindings {
				t.row(b.LogicalSource, b.ConcreteSource, firstSet(b.Session, "shared"))
			}
		}
	})
}

func newDeploymentsValidateCommand(r *remote) *cobra.Command {
	var live bool
	cmd := &cobra.Command{
		Use:   "validate DEPLOYMENT",
		Short: "Check a deployment's bindings against the live sources (workflow.deployments.validate)",
		Long: `Check that a deployment can run now: each source its artifact requires is
bound, configured, enabled, its session works (not failing to connect,
degraded or waiting for a login) and has the capability, with the schemas
the artifact was saved against. --live-check also reaches each upstream.
The diagnostics say what to repair ('mcpflow explain CODE' says more).
Exits 1 when the deployment cannot run now.`,
		Example: "  mcpflow deployments validate counter_workflow.default --live-check",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return r.do(cmd, func(ctx context.Context, c *conn) error {
				res, err := callShow(ctx, c, p.MethodDeploymentsValidate, p.ValidateDeploymentParams{DeploymentID: args[0], LiveCheck: live},
					func(t *table, res p.ValidateDeploymentResult) {
						t.pairs("deployment", res.DeploymentID, "artifact", fmt.Sprintf("%s v%d", res.ArtifactID, res.ArtifactVersion), "status", res.Status)
						diagnosticRows(t, res.Diagnostics)
					})
				if err != nil || res.Status == "runnable" {
					return err
				}
				return fmt.Errorf("deployment %s is %s now: fix the error diagnostics above, then validate again", res.DeploymentID, res.Status)
			})
		},
	}
	cmd.Flags().BoolVar(&live, "live-check", false, "also connect to each bound upstream and list its tools")
	return cmd
}

func newDeploymentsDeleteCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "delete DEPLOYMENT",
		Short:   "Delete a deployment; its runs keep what they pinned (workflow.deployments.delete)",
		Example: "  mcpflow deployments delete counter_workflow.default",
		Args:    cobra.ExactArgs(1),
	}, p.MethodDeploymentsDelete, deploymentParams, func(t *table, res p.DeleteDeploymentResult) {
		t.pairs("deployment", res.DeploymentID, "deleted", res.Deleted)
	})
}
