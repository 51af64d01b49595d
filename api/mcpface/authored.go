package mcpface

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/api/protocol"
)

// authored is what an authoring tool reads of a method's result to say
// it as text: the fields of a workspace, an edit, a compile, a saved
// artifact and a saved deployment, each present where the method
// answers it.
type authored struct {
	WorkspaceID            string                     `json:"workspace_id"`
	Revision               int                        `json:"revision"`
	Status                 string                     `json:"status"`
	Diagnostics            []protocol.Diagnostic      `json:"diagnostics"`
	Summary                *protocol.WorkspaceSummary `json:"summary"`
	Draft                  protocol.Object            `json:"draft"`
	CompiledPlan           json.RawMessage            `json:"compiled_plan"`
	NextActions            *protocol.NextActions      `json:"next_actions"`
	Saved                  *bool                      `json:"saved"`
	ArtifactID             string                     `json:"artifact_id"`
	Version                int                        `json:"version"`
	RequiredLogicalSources []string                   `json:"required_logical_sources"`
	SuggestedBindings      map[string]string          `json:"suggested_bindings"`
	DeploymentID           string                     `json:"deployment_id"`
	ArtifactVersion        int                        `json:"artifact_version"`
}

// nextCall is the call an authoring tool advises next: a tool of the
// face and its arguments, as complete as the server's advice is.
type nextCall struct {
	Tool      string          `json:"tool"`
	Arguments protocol.Object `json:"arguments"`
	Reason    string          `json:"reason,omitempty"`
}

// authoredResult is an authoring method's result as a tool result: the
// result whole as structuredContent, with next_call where there is one;
// as text, what the CLI shows of it (the workspace's revision, status
// and summary, each diagnostic with its repair hint, the saved artifact
// or deployment) and the next call as this face's tool; any other result
// (a list, a capability) as readable JSON. An artifact not saved (the
// draft is invalid) is a tool error.
func authoredResult(raw json.RawMessage) *mcp.CallToolResult {
	var a authored
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &a) != nil || json.Unmarshal(raw, &fields) != nil {
		return &mcp.CallToolResult{Content: []mcp.Content{textBlock(readableRaw(raw))}, StructuredContent: raw}
	}
	var b strings.Builder
	next := a.next()
	switch {
	case a.DeploymentID != "":
		fmt.Fprintf(&b, "Deployed %s (artifact %s v%d). It is offered as a tool of this server, %s (unless the deployment names its tool), as soon as the tool list changes (notifications/tools/list_changed); call it with the workflow's input.",
			a.DeploymentID, a.ArtifactID, a.ArtifactVersion, toolName(a.DeploymentID))
	case a.Saved != nil && *a.Saved:
		fmt.Fprintf(&b, "Saved artifact %s v%d.", a.ArtifactID, a.Version)
		if len(a.RequiredLogicalSources) > 0 {
			fmt.Fprintf(&b, " It needs the sources %s, each bound to a connection when it is deployed.", strings.Join(a.RequiredLogicalSources, ", "))
		}
	case a.Status != "" || a.WorkspaceID != "" || len(a.CompiledPlan) > 0:
		a.workspaceText(&b)
	default:
		return &mcp.CallToolResult{Content: []mcp.Content{textBlock(readableRaw(raw))}, StructuredContent: raw}
	}
	if next != nil {
		fmt.Fprintf(&b, "\nnext: %s %s", next.Tool, compactJSON(next.Arguments))
		if next.Reason != "" {
			fmt.Fprintf(&b, "\n  (%s)", next.Reason)
		}
		fields["next_call"] = mustJSON(next)
	}
	unsaved := a.Saved != nil && !*a.Saved
	return &mcp.CallToolResult{Content: []mcp.Content{textBlock(b.String())}, StructuredContent: mustJSON(fields), IsError: unsaved}
}

// workspaceText says a workspace or a draft as `mcpflow draft` does: its
// revision, status and summary, then each diagnostic with its repair
// hint; then the document or the plan, where the result has them.
func (a authored) workspaceText(b *strings.Builder) {
	switch {
	case a.Saved != nil:
		fmt.Fprintf(b, "Not saved: workspace %s (revision %d) is %s.", a.WorkspaceID, a.Revision, a.Status)
	case a.WorkspaceID != "":
		fmt.Fprintf(b, "workspace %s: revision %d, status %s", a.WorkspaceID, a.Revision, a.Status)
	case a.Status == "": // a compile's plan: the draft is valid
		b.WriteString("compiled: the draft is valid")
	default:
		fmt.Fprintf(b, "draft: status %s", a.Status)
	}
	if s := a.Summary; s != nil {
		fmt.Fprintf(b, "\nname: %v; start: %v; steps: %s", orDash(s.Name), orDash(s.Start), orDash(strings.Join(s.Steps, ", ")))
	}
	if len(a.Diagnostics) == 0 {
		b.WriteString("\ndiagnostics: none")
	} else {
		b.WriteString("\ndiagnostics:")
	}
	for _, d := range a.Diagnostics {
		severity := "error"
		if !d.IsError() {
			severity = d.Severity
		}
		fmt.Fprintf(b, "\n- %s %s at %s: %s", severity, d.Code, orDash(d.Path), d.Message)
		if d.RepairHint != nil && *d.RepairHint != "" {
			fmt.Fprintf(b, "\n  hint: %s", *d.RepairHint)
			for _, h := range toolHints {
				if strings.Contains(*d.RepairHint, h.command) {
					fmt.Fprintf(b, "\n  with these tools: %s", h.tools)
				}
			}
		}
	}
	if a.Draft != nil {
		fmt.Fprintf(b, "\ndraft document:\n%s", readable(a.Draft))
	}
	if len(a.CompiledPlan) > 0 && string(a.CompiledPlan) != "null" {
		fmt.Fprintf(b, "\ncompiled plan:\n%s", readableRaw(a.CompiledPlan))
	}
}

// toolHints say, for each command of the CLI a repair hint names, the
// authoring tool that does the same.
var toolHints = []struct{ command, tools string }{
	{"mcpflow draft bind", toolDraftBind + ` op bind (step_id, source_path input.FIELD, target_path FIELD), or op inputs (step_id, bindings [{"target":"FIELD","path":"PATH"}] or [{"target":"FIELD","value":VALUE}])`},
	{"mcpflow draft contract set", toolDraft + " op contract"},
	{"mcpflow caps inspect", toolSearchCapabilities + " op inspect (qualified_name)"},
	{"mcpflow caps list", toolSearchCapabilities + " op search"},
	{"mcpflow schema draft", toolDraft + " op get (include_draft) shows the document"},
	{"mcpflow schema plan", toolDraft + " op compile shows the plan"},
}

// next is the call the result advises, as a tool of this face: the
// server's next action (with its first example's request, where it gives
// one), or, after a save, the deploy.
func (a authored) next() *nextCall {
	if a.Saved != nil && *a.Saved && a.ArtifactID != "" && a.DeploymentID == "" {
		return &nextCall{Tool: toolPublish, Reason: "deploy it, each logical source bound to a connection (the server's suggestion)",
			Arguments: protocol.Object{"op": "deploy", "artifact_id": a.ArtifactID, "artifact_version": a.Version, "bindings": nonNil(a.SuggestedBindings)}}
	}
	n := a.NextActions
	if n == nil || n.RecommendedNextTool == nil || *n.RecommendedNextTool == "" {
		return nil
	}
	method, request := *n.RecommendedNextTool, protocol.Object{}
	if a.WorkspaceID != "" {
		request["workspace_id"] = a.WorkspaceID
	}
	if len(n.PatchExamples) > 0 && n.PatchExamples[0].Tool == method {
		request = n.PatchExamples[0].Request
	}
	tool, args, ok := argsFor(method, request)
	if !ok {
		return nil // a method no authoring tool calls
	}
	return &nextCall{Tool: tool, Arguments: args, Reason: n.Reason}
}

// argsFor is the authoring tool that calls method, and its arguments for
// the method's params request: op, then the params, those of a use step
// beside its id, revision and routes in spec.
func argsFor(method string, request protocol.Object) (string, protocol.Object, bool) {
	for _, t := range authoring {
		for _, o := range t.ops {
			if !slices.ContainsFunc(o.variants, func(v variant) bool { return v.method == method }) {
				continue
			}
			args := protocol.Object{"op": o.name}
			if method != protocol.MethodWorkspaceAddStepFromCapability {
				for k, v := range request {
					args[k] = v
				}
				return t.name, args, true
			}
			args["kind"] = "use"
			spec := protocol.Object{}
			for k, v := range request {
				switch k {
				case "workspace_id", "revision", "step_id", "routes":
					args[k] = v
				default:
					spec[k] = v
				}
			}
			if len(spec) > 0 {
				args["spec"] = spec
			}
			return t.name, args, true
		}
	}
	return "", nil, false
}

func orDash(v any) any {
	if v == nil || v == "" {
		return "-"
	}
	return v
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// compactJSON is v as one line of JSON, <, > and & as themselves.
func compactJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
