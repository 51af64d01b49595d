package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

// completeTimeout bounds what completing one word may wait for the
// server: a shell waits for it at each Tab.
const completeTimeout = 2 * time.Second

// idLister lists the ids a word may complete to, each with a short
// description, asking the server on c; prefix is the word typed so far.
type idLister func(ctx context.Context, c *conn, prefix string) ([]cobra.Completion, error)

// completeArg completes a command's first argument with the ids lister
// finds (see completeIDs), and nothing after it.
func completeArg(r *remote, lister idLister) cobra.CompletionFunc {
	ids := completeIDs(r, lister)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return ids(cmd, args, toComplete)
	}
}

// completeIDs completes a word (a flag's value) with the ids lister finds
// on the server of the command's --url and --token, within
// completeTimeout. A server that cannot be reached completes nothing
// (completion never prints an error into the shell).
func completeIDs(r *remote, lister idLister) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		ctx, cancel := context.WithTimeout(ctx, completeTimeout)
		defer cancel()
		quick := *r
		quick.timeout = min(r.timeout, completeTimeout)
		if quick.timeout <= 0 {
			quick.timeout = completeTimeout
		}
		cl, err := quick.dial(ctx)
		if err != nil {
			cobra.CompDebugln(fmt.Sprintf("complete: %v", err), true)
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer cl.Close()
		ids, err := lister(ctx, &conn{Client: cl, r: &quick, out: cmd.OutOrStdout(), err: cmd.ErrOrStderr()}, toComplete)
		if err != nil {
			cobra.CompDebugln(fmt.Sprintf("complete: %v", err), true)
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		out := ids[:0]
		for _, id := range ids {
			if strings.HasPrefix(id, toComplete) {
				out = append(out, id)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// firstArgIDs are the ids a command's first argument completes to, by the
// placeholder its usage names it with.
var firstArgIDs = map[string]idLister{"RUN": runIDs, "DEPLOYMENT": deploymentIDs, "WORKSPACE": workspaceIDs}

// completeFirstArgs gives each command of the tree whose first argument
// is a RUN, DEPLOYMENT or WORKSPACE the completion of those ids, unless
// it completes its arguments itself.
func completeFirstArgs(r *remote, cmd *cobra.Command) {
	if words := strings.Fields(cmd.Use); len(words) > 1 && cmd.ValidArgsFunction == nil {
		if lister, ok := firstArgIDs[words[1]]; ok {
			cmd.ValidArgsFunction = completeArg(r, lister)
		}
	}
	for _, sub := range cmd.Commands() {
		completeFirstArgs(r, sub)
	}
}

// completion is an id with its description, as cobra shows it.
func completion(id, description string) cobra.Completion {
	return cobra.CompletionWithDesc(id, clip(description, 60))
}

// deploymentIDs lists the deployments.
func deploymentIDs(ctx context.Context, c *conn, _ string) ([]cobra.Completion, error) {
	var res p.ListDeploymentsResult
	if err := c.Call(ctx, p.MethodDeploymentsList, p.Empty{}, &res); err != nil {
		return nil, err
	}
	out := make([]cobra.Completion, 0, len(res.Deployments))
	for _, d := range res.Deployments {
		out = append(out, completion(d.ID, fmt.Sprintf("%s v%d", d.ArtifactID, d.ArtifactVersion)))
	}
	return out, nil
}

// completeRunsLimit bounds the runs offered: the newest.
const completeRunsLimit = 100

// runIDs lists the newest runs.
func runIDs(ctx context.Context, c *conn, _ string) ([]cobra.Completion, error) {
	limit := completeRunsLimit
	var res p.ListRunsResult
	if err := c.Call(ctx, p.MethodRunsList, p.ListRunsParams{Limit: &limit}, &res); err != nil {
		return nil, err
	}
	out := make([]cobra.Completion, 0, len(res.Runs))
	for _, run := range res.Runs {
		out = append(out, completion(run.RunID, run.Status+" "+run.DeploymentID))
	}
	return out, nil
}

// workspaceIDs lists the draft workspaces.
func workspaceIDs(ctx context.Context, c *conn, _ string) ([]cobra.Completion, error) {
	var res p.ListWorkspacesResult
	if err := c.Call(ctx, p.MethodWorkspaceList, p.Empty{}, &res); err != nil {
		return nil, err
	}
	out := make([]cobra.Completion, 0, len(res.Workspaces))
	for _, ws := range res.Workspaces {
		out = append(out, completion(ws.WorkspaceID, fmt.Sprintf("%s, revision %d", ws.Status, ws.Revision)))
	}
	return out, nil
}

// completeCapabilitiesLimit bounds the capabilities offered.
const completeCapabilitiesLimit = 200

// capabilityNames lists the capabilities whose name or description holds
// what was typed.
func capabilityNames(ctx context.Context, c *conn, prefix string) ([]cobra.Completion, error) {
	limit := completeCapabilitiesLimit
	var res p.ListCapabilitiesResult
	if err := c.Call(ctx, p.MethodCapabilitiesList, p.ListCapabilitiesParams{Query: optional(prefix), Limit: &limit}, &res); err != nil {
		return nil, err
	}
	out := make([]cobra.Completion, 0, len(res.Capabilities))
	for _, cp := range res.Capabilities {
		desc := ""
		if cp.Description != nil {
			desc = *cp.Description
		}
		out = append(out, completion(cp.Name, desc))
	}
	return out, nil
}
