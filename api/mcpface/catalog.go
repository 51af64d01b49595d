package mcpface

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// workflowTool is one deployment as a tool: its MCP definition and what
// following its runs needs.
type workflowTool struct {
	deploymentID string
	tool         *mcp.Tool
	// total is the number of steps a run can take, for progress; 0 where
	// the graph loops (a foreach, a route back), so no total is known.
	total int
	// hidden deployments are offered by no tool; the finder skips them.
	hidden bool
	// answer, when set, is the result of a run that ended (an exposed
	// tool's, gateway.go); nil answers the run's envelope.
	answer func(protocol.RunResult) *mcp.CallToolResult
}

// artifactKey names one immutable artifact version.
type artifactKey struct {
	id      string
	version int
}

// catalog reads the deployments through the API and makes each a tool.
// Artifacts are immutable, so their part of a tool is kept across reads.
type catalog struct {
	backend   Backend
	artifacts map[artifactKey]artifact
}

// load lists the deployments and describes each as a tool, named by
// assignNames, sorted by name. A deployment whose artifact cannot be read
// is left out (and said why, in the error list), not the whole list.
func (c *catalog) load(ctx context.Context, reserved func(string) bool) ([]workflowTool, []error) {
	var list protocol.ListDeploymentsResult
	if err := c.backend.Call(ctx, protocol.MethodDeploymentsList, nil, &list); err != nil {
		return nil, []error{fmt.Errorf("list deployments: %w", err)}
	}
	var (
		errs   []error
		deps   []protocol.Deployment
		arts   = map[string]artifact{}
		custom = map[string]string{}
	)
	for _, s := range list.Deployments {
		var d protocol.Deployment
		if err := c.backend.Call(ctx, protocol.MethodDeploymentsInspect, protocol.DeploymentIDParams{DeploymentID: s.ID}, &d); err != nil {
			errs = append(errs, fmt.Errorf("deployment %q: %w", s.ID, err))
			continue
		}
		a, err := c.artifact(ctx, d.ArtifactID, d.ArtifactVersion)
		if err != nil {
			errs = append(errs, fmt.Errorf("deployment %q: %w", s.ID, err))
			continue
		}
		deps, arts[d.ID] = append(deps, d), a
		if d.MCP != nil {
			custom[d.ID] = d.MCP.ToolName
		}
	}
	ids := make([]string, len(deps))
	for i, d := range deps {
		ids[i] = d.ID
	}
	names := assignNames(ids, custom, reserved)
	hints := hintCache{backend: c.backend, known: map[string]*protocol.ToolHints{}}
	tools := make([]workflowTool, 0, len(deps))
	for _, d := range deps {
		a := arts[d.ID]
		tools = append(tools, workflowTool{
			deploymentID: d.ID,
			hidden:       d.MCP != nil && d.MCP.Hidden,
			total:        stepTotal(a.plan),
			tool: &mcp.Tool{
				Name:         names[d.ID],
				Title:        cmpOr(a.Title, a.ID),
				Description:  describe(d, a),
				InputSchema:  inputSchema(a.InputSchema),
				OutputSchema: envelopeSchema,
				Annotations:  hints.floor(ctx, d, a.plan),
			},
		})
	}
	slices.SortFunc(tools, func(a, b workflowTool) int { return strings.Compare(a.tool.Name, b.tool.Name) })
	return tools, errs
}

// artifact reads one artifact version, once.
func (c *catalog) artifact(ctx context.Context, id string, version int) (artifact, error) {
	k := artifactKey{id, version}
	if a, ok := c.artifacts[k]; ok {
		return a, nil
	}
	var a artifact
	if err := c.backend.Call(ctx, protocol.MethodArtifactsInspect, protocol.InspectArtifactParams{ArtifactID: id, Version: version}, &a.Artifact); err != nil {
		return a, fmt.Errorf("artifact %s v%d: %w", id, version, err)
	}
	if err := json.Unmarshal(a.Artifact.Plan, &a.plan); err != nil {
		return a, fmt.Errorf("artifact %s v%d: plan: %w", id, version, err)
	}
	if c.artifacts == nil {
		c.artifacts = map[artifactKey]artifact{}
	}
	c.artifacts[k] = a
	return a, nil
}

// artifact is an artifact as the API answers it, with its plan decoded.
type artifact struct {
	protocol.Artifact
	plan workflow.Plan
}

// Describe is the description agents see of a deployment's tool, as the
// face offers it: for a dry run of workflow.deployments.save.
func Describe(d protocol.Deployment, a protocol.Artifact) (string, error) {
	var plan workflow.Plan
	if err := json.Unmarshal(a.Plan, &plan); err != nil {
		return "", fmt.Errorf("artifact %s v%d: plan: %w", a.ID, a.Version, err)
	}
	return describe(d, artifact{Artifact: a, plan: plan}), nil
}

// describe is the tool's description, in the artifact's words: its
// description, or, without one, its title and the tools it calls; never
// empty (hosts reject an empty one). It names nothing of mcpflow's
// inside (no deployment or artifact id, no built-in capability such as
// wf.std.runtime_error): the model reads it to choose a tool. A workflow
// that may stop for a person says what to do then.
func describe(d protocol.Deployment, a artifact) string {
	var b strings.Builder
	if a.Description != nil && strings.TrimSpace(*a.Description) != "" {
		b.WriteString(strings.TrimSpace(*a.Description))
	} else {
		fmt.Fprintf(&b, "Runs the mcpflow workflow %q", cmpOr(a.Title, a.ID))
		if tools := toolsCalled(d, a.plan); len(tools) > 0 {
			fmt.Fprintf(&b, ", which calls %s", strings.Join(tools, ", "))
		}
		b.WriteString(".")
	}
	if asksAPerson(a.plan) {
		b.WriteString(" It may stop to ask a person: then ask your user, and call mcpflow_resume_run with the answer.")
	}
	return b.String()
}

// toolsCalled lists the upstream tools a plan calls, by their own names
// (the capability's name without its source), sorted, once each. The
// built-in capabilities (wf.std, wf.recipes, wf.source) are how the
// workflow works, not what it does, and are left out.
func toolsCalled(d protocol.Deployment, p workflow.Plan) []string {
	var tools []string
	for _, n := range p.Nodes {
		if n.Type != workflow.NodeCall || n.Node == "" {
			continue
		}
		tool := n.Node
		if b, ok := bindingOf(d, n.Node); ok {
			tool = strings.TrimPrefix(n.Node, b.LogicalSource+".")
		} else if parts := strings.SplitN(n.Node, ".", 3); len(parts) == 3 {
			if config.IsReserved(parts[0] + "." + parts[1]) {
				continue
			}
			tool = parts[2]
		}
		if !slices.Contains(tools, tool) {
			tools = append(tools, tool)
		}
	}
	slices.Sort(tools)
	return tools
}

// asksAPerson reports whether a plan has an interrupt step.
func asksAPerson(p workflow.Plan) bool {
	return slices.ContainsFunc(p.Nodes, func(n workflow.Node) bool { return n.Type == workflow.NodeInterrupt })
}

// inputSchema is the artifact's input schema as MCP wants it: an object,
// spelled portably (portable).
func inputSchema(s workflow.Object) map[string]any {
	out := map[string]any{}
	for k, v := range s {
		out[k] = v
	}
	out["type"] = "object"
	out = portable(out, "", 0).(map[string]any)
	if _, ok := out["properties"]; !ok {
		out["properties"] = map[string]any{}
	}
	return out
}

// stepTotal is how many steps a run of p takes at most, or 0 when the
// graph has a foreach or a cycle, whose count is not known before.
func stepTotal(p workflow.Plan) int {
	next := map[string][]string{}
	for _, e := range p.Edges {
		next[e.From] = append(next[e.From], e.To)
	}
	for _, n := range p.Nodes {
		if n.Type == workflow.NodeForeach {
			return 0
		}
	}
	const (
		unseen = iota
		open
		closed
	)
	mark := map[string]int{}
	var cyclic func(string) bool
	cyclic = func(id string) bool {
		switch mark[id] {
		case open:
			return true
		case closed:
			return false
		}
		mark[id] = open
		for _, to := range next[id] {
			if cyclic(to) {
				return true
			}
		}
		mark[id] = closed
		return false
	}
	for _, n := range p.Nodes {
		if cyclic(n.ID) {
			return 0
		}
	}
	return len(p.Nodes)
}

func cmpOr(s, def string) string {
	if strings.TrimSpace(s) != "" {
		return s
	}
	return def
}
