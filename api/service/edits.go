package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/records"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/authoring"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// Draft workspaces are edited by the operations of package authoring,
// under the revision compare-and-set of package records; this file keeps
// what is the API's: the answers and the mapping of refusals to the API's
// errors.

// authoringErr maps an operation's refusal: malformed params are invalid
// params, a missing step or capability a KeyError, anything else a
// ValueError. Other errors pass as they are.
func authoringErr(err error) error {
	var refused *authoring.Error
	if !errors.As(err, &refused) {
		return err
	}
	switch refused.Kind {
	case authoring.Malformed:
		return invalidParams("invalid params: %s", refused.Message)
	case authoring.NotFound:
		return notFound("%s", refused.Message)
	}
	return invalid("%s", refused.Message)
}

// revise runs one revision-checked edit whose content depends on the
// stored document (records.Revise): a stale revision, or a writer that
// committed in between, answers "conflict" and changes nothing. next
// returns nil to answer the workspace as it is, without bumping its
// revision (an edit with nothing to do), or an error to refuse the edit.
func (s *Service) revise(ctx context.Context, id string, revision int, next func(doc workflow.Object) (workflow.Object, error)) (protocol.WorkspaceResult, error) {
	r, err := records.Revise(ctx, s.Store, records.Revision{ID: id, Revision: revision, Now: s.now(), Next: next, Check: s.checkDocument})
	return revised(r, revision, err)
}

// revised answers what an edit came to: a conflict with the revision the
// edit expected, or the workspace as it is now.
func revised(r records.Revised, expected int, err error) (protocol.WorkspaceResult, error) {
	switch {
	case err != nil:
		return protocol.WorkspaceResult{}, recordsErr(authoringErr(err))
	case r.Conflict:
		return conflictResult(r.Workspace, expected), nil
	}
	return workspaceResult(r.Workspace, false), nil
}

// edit applies one operation as a new revision, whether or not it changes
// the document.
func edit[P authoring.Params](s *Service, ctx context.Context, id string, revision int, op authoring.Op[P], p P) (protocol.WorkspaceResult, error) {
	return s.revise(ctx, id, revision, func(doc workflow.Object) (workflow.Object, error) {
		return op(doc, p, s.findCapability)
	})
}

// stepEdit is the shape of every step edit, over revise: p's own checks
// come first (malformed params change nothing, whatever the revision),
// then the revision (a stale one answers "conflict" whatever else is
// wrong); the operation then turns the document into the next one, or
// refuses the edit, which changes nothing. An edit that changes nothing
// answers the workspace as it is, at the same revision. The answer advises
// what to call next.
func stepEdit[P authoring.Params](s *Service, ctx context.Context, id string, revision int, op authoring.Op[P], p P) (protocol.DraftEditResult, error) {
	if err := p.Check(); err != nil {
		return protocol.DraftEditResult{}, authoringErr(err)
	}
	var after workflow.Object
	var typos []workflow.Diagnostic
	r, err := s.revise(ctx, id, revision, func(doc workflow.Object) (workflow.Object, error) {
		next, err := op(doc, p, s.findCapability)
		if err != nil {
			return nil, err
		}
		after, typos = next, nil
		if sameJSON(doc, next) {
			return nil, nil
		}
		typos = authoring.TypoWarnings(doc, next)
		return next, nil
	})
	if err != nil {
		return protocol.DraftEditResult{}, err
	}
	if r.Status != statusConflict {
		// The edit's own warnings: shown with the edit that caused them.
		r.Diagnostics = append(r.Diagnostics, apiDiagnostics(typos)...)
	}
	return protocol.DraftEditResult{WorkspaceResult: r, NextActions: afterEdit(r, after)}, nil
}

// sameJSON reports whether two JSON values are equal (encoding/json sorts
// object keys, so equal values encode alike).
func sameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

// validateDocument checks a stored document against the language and the
// live capabilities.
func (s *Service) validateDocument(doc workflow.Object) []workflow.Diagnostic {
	_, diags := s.checkDraft(doc)
	return diags
}

// checkDocument answers the diagnostics and status of a document.
func (s *Service) checkDocument(doc workflow.Object) ([]workflow.Diagnostic, string) {
	diags := s.validateDocument(doc)
	return diags, statusOf(diags)
}

func conflictResult(ws store.Workspace, revision int) protocol.WorkspaceResult {
	r := workspaceResult(ws, false)
	r.Status = statusConflict
	r.Diagnostics = []protocol.Diagnostic{{Code: "revision_conflict", Path: "revision",
		Message: fmt.Sprintf("workspace %q is at revision %d, not %d", ws.ID, ws.Revision, revision)}}
	return r
}

func (s *Service) setName(ctx context.Context, p protocol.SetNameParams) (protocol.WorkspaceResult, error) {
	return edit(s, ctx, p.WorkspaceID, p.Revision, authoring.SetName, authoring.SetNameParams{Name: p.Name})
}

func (s *Service) setStart(ctx context.Context, p protocol.SetStartParams) (protocol.WorkspaceResult, error) {
	return edit(s, ctx, p.WorkspaceID, p.Revision, authoring.SetStart, authoring.SetStartParams{StepID: p.StepID})
}

func (s *Service) setRoute(ctx context.Context, p protocol.SetRouteParams) (protocol.WorkspaceResult, error) {
	return edit(s, ctx, p.WorkspaceID, p.Revision, authoring.SetRoute,
		authoring.SetRouteParams{StepID: p.StepID, Outcome: p.Outcome, Target: p.Target})
}

func (s *Service) replaceDocument(ctx context.Context, p protocol.ReplaceDocumentParams) (protocol.WorkspaceResult, error) {
	return edit(s, ctx, p.WorkspaceID, p.Revision, authoring.ReplaceDocument, authoring.ReplaceDocumentParams{Draft: p.Draft})
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
	r, err := records.Commit(ctx, s.Store, ws, ws.Revision)
	return revised(r, ws.Revision, err)
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
