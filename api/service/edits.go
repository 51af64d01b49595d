package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// edit applies one revisioned change to a workspace: the caller's revision
// must be the stored one, the change commits with a compare-and-set on it,
// and the revision goes up by one even when the result is invalid (an
// author may forward-reference steps). A stale revision changes nothing and
// answers status "conflict".
func (s *Service) edit(ctx context.Context, id string, revision int, change func(doc workflow.Object)) (protocol.WorkspaceResult, error) {
	ws, err := s.Store.GetWorkspace(ctx, id)
	if err != nil {
		return protocol.WorkspaceResult{}, storeErr(err, fmt.Sprintf("draft workspace %q", id))
	}
	if ws.Revision != revision {
		return conflictResult(ws, revision), nil
	}
	doc, err := toObject(ws.Draft) // a copy to edit
	if err != nil {
		return protocol.WorkspaceResult{}, err
	}
	change(doc)
	next := ws
	next.Revision, next.Draft, next.UpdatedAtMs = revision+1, doc, s.now().UnixMilli()
	next.Diagnostics = s.validateDocument(doc)
	next.Status = statusOf(next.Diagnostics)
	return s.commitWorkspace(ctx, next, revision)
}

// commitWorkspace stores ws if the stored revision is still expected. When
// another writer committed first, it answers "conflict" with the revision
// the workspace is at now.
func (s *Service) commitWorkspace(ctx context.Context, ws store.Workspace, expected int) (protocol.WorkspaceResult, error) {
	what := fmt.Sprintf("draft workspace %q", ws.ID)
	switch err := s.Store.UpdateWorkspace(ctx, ws, expected); {
	case errors.Is(err, store.ErrConflict):
		current, getErr := s.Store.GetWorkspace(ctx, ws.ID)
		if getErr != nil {
			return protocol.WorkspaceResult{}, storeErr(getErr, what)
		}
		return conflictResult(current, expected), nil
	case err != nil:
		return protocol.WorkspaceResult{}, storeErr(err, what)
	}
	return workspaceResult(ws, false), nil
}

// validateDocument checks a stored document against the language and the
// live capabilities.
func (s *Service) validateDocument(doc workflow.Object) []workflow.Diagnostic {
	_, diags := s.checkDraft(doc)
	return diags
}

func conflictResult(ws store.Workspace, revision int) protocol.WorkspaceResult {
	r := workspaceResult(ws, false)
	r.Status = statusConflict
	r.Diagnostics = []workflow.Diagnostic{{Code: "revision_conflict", Path: "revision",
		Message: fmt.Sprintf("workspace %q is at revision %d, not %d", ws.ID, ws.Revision, revision)}}
	return r
}

func (s *Service) setName(ctx context.Context, p protocol.SetNameParams) (protocol.WorkspaceResult, error) {
	return s.edit(ctx, p.WorkspaceID, p.Revision, func(doc workflow.Object) { doc["name"] = p.Name })
}

func (s *Service) setStart(ctx context.Context, p protocol.SetStartParams) (protocol.WorkspaceResult, error) {
	return s.edit(ctx, p.WorkspaceID, p.Revision, func(doc workflow.Object) { doc["start"] = p.StepID })
}

func (s *Service) setRoute(ctx context.Context, p protocol.SetRouteParams) (protocol.WorkspaceResult, error) {
	return s.edit(ctx, p.WorkspaceID, p.Revision, func(doc workflow.Object) {
		routes, _ := doc["routes"].(map[string]any)
		if routes == nil {
			routes = workflow.Object{}
			doc["routes"] = routes
		}
		step, _ := routes[p.StepID].(map[string]any)
		if step == nil {
			step = workflow.Object{}
			routes[p.StepID] = step
		}
		step[p.Outcome] = p.Target
	})
}

func (s *Service) replaceDocument(ctx context.Context, p protocol.ReplaceDocumentParams) (protocol.WorkspaceResult, error) {
	return s.edit(ctx, p.WorkspaceID, p.Revision, func(doc workflow.Object) {
		clear(doc)
		for k, v := range p.Draft {
			doc[k] = v
		}
	})
}

// validateWorkspace refreshes a workspace's status against the current
// capabilities without bumping its revision.
func (s *Service) validateWorkspace(ctx context.Context, p protocol.WorkspaceIDParams) (protocol.WorkspaceResult, error) {
	ws, err := s.Store.GetWorkspace(ctx, p.WorkspaceID)
	if err != nil {
		return protocol.WorkspaceResult{}, storeErr(err, fmt.Sprintf("draft workspace %q", p.WorkspaceID))
	}
	diags := s.validateDocument(ws.Draft)
	ws.Diagnostics, ws.Status = diags, statusOf(diags)
	return s.commitWorkspace(ctx, ws, ws.Revision)
}

func (s *Service) listWorkspaces(ctx context.Context, _ protocol.Empty) (protocol.ListWorkspacesResult, error) {
	all, err := s.Store.ListWorkspaces(ctx)
	if err != nil {
		return protocol.ListWorkspacesResult{}, storeErr(err, "draft workspaces")
	}
	out := make([]protocol.WorkspaceResult, 0, len(all))
	for _, ws := range all {
		out = append(out, workspaceResult(ws, false))
	}
	return protocol.ListWorkspacesResult{Workspaces: out}, nil
}

func (s *Service) deleteWorkspace(ctx context.Context, p protocol.WorkspaceIDParams) (protocol.DeleteWorkspaceResult, error) {
	deleted, err := s.Store.DeleteWorkspace(ctx, p.WorkspaceID)
	if err != nil {
		return protocol.DeleteWorkspaceResult{}, storeErr(err, fmt.Sprintf("draft workspace %q", p.WorkspaceID))
	}
	status := "deleted"
	if !deleted {
		status = "not_found"
	}
	return protocol.DeleteWorkspaceResult{WorkspaceID: p.WorkspaceID, Deleted: deleted, Status: status}, nil
}
