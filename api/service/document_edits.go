package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/schema"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// Draft diagnostic codes of a patch that could not be applied.
const (
	codePatchInvalid   = "patch_invalid"
	codeDraftNotObject = "draft_not_object"
)

// maxPatchBytes bounds how much a patch may grow a document, so that a
// short patch copying a subtree onto itself over and over cannot exhaust
// memory.
const maxPatchBytes = 16 << 20

// revise runs one revision-checked edit whose content depends on the stored
// document: a stale revision answers "conflict" and changes nothing;
// otherwise next computes the new document from a copy of the stored one,
// and s.edit commits it (its compare-and-set turns a writer that committed
// in between into a conflict too). next returns nil to answer the
// workspace as it is, without bumping its revision (an edit with nothing
// to do), or an error to refuse the edit, which then changes nothing.
func (s *Service) revise(ctx context.Context, id string, revision int, next func(doc workflow.Object) (workflow.Object, error)) (protocol.WorkspaceResult, error) {
	ws, err := s.Store.GetWorkspace(ctx, id)
	if err != nil {
		return protocol.WorkspaceResult{}, storeErr(err, fmt.Sprintf("draft workspace %q", id))
	}
	if ws.Revision != revision {
		return conflictResult(ws, revision), nil
	}
	doc, err := toObject(ws.Draft)
	if err != nil {
		return protocol.WorkspaceResult{}, err
	}
	changed, err := next(doc)
	switch {
	case err != nil:
		return protocol.WorkspaceResult{}, err
	case changed == nil:
		return workspaceResult(ws, false), nil
	}
	return s.edit(ctx, id, revision, func(doc workflow.Object) {
		clear(doc)
		maps.Copy(doc, changed)
	})
}

// sameJSON reports whether two JSON values are equal (encoding/json sorts
// object keys, so equal values encode alike).
func sameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

// applyPatch applies an RFC 6902 JSON Patch to a draft document. A patch
// that does not apply is a patch_invalid diagnostic, a result that is not
// a JSON object a draft_not_object one; either way there is no document.
//
// Operations go to evanphx/json-patch in runs, except those whose target
// is the whole document (path ""), which it does not handle as RFC 6902
// says (it refuses to add or replace the root with a scalar, and moves or
// copies to a member named "" instead of the root): those are applied
// here, in order with the others.
func applyPatch(doc workflow.Object, ops []protocol.Object) (workflow.Object, *workflow.Diagnostic) {
	refuse := func(code, path, message string) (workflow.Object, *workflow.Diagnostic) {
		return nil, &workflow.Diagnostic{Code: code, Path: path, Message: message}
	}
	cur, err := json.Marshal(doc)
	if err != nil {
		return refuse(codePatchInvalid, "patch", err.Error())
	}
	opts := jsonpatch.NewApplyOptions()
	opts.SupportNegativeIndices = false // RFC 6902: an index is a non-negative integer or "-"
	opts.AccumulatedCopySizeLimit = maxPatchBytes
	opts.EscapeHTML = false
	var run []protocol.Object
	flush := func() error {
		if len(run) == 0 {
			return nil
		}
		data, err := json.Marshal(run)
		if err != nil {
			return err
		}
		run = nil
		patch, err := jsonpatch.DecodePatch(data)
		if err != nil {
			return err
		}
		cur, err = patch.ApplyWithOptions(cur, opts)
		return err
	}
	for i, op := range ops {
		kind, _ := op["op"].(string)
		if path, ok := op["path"].(string); !ok || path != "" || !slices.Contains([]string{"add", "replace", "move", "copy"}, kind) {
			run = append(run, op)
			continue
		}
		if err := flush(); err != nil {
			return refuse(codePatchInvalid, "patch", err.Error())
		}
		next, err := rootTarget(cur, op)
		if err != nil {
			return refuse(codePatchInvalid, "patch", fmt.Sprintf("operation %d (%s of the whole document): %v", i, kind, err))
		}
		cur = next
		if len(cur) > maxPatchBytes {
			return refuse(codePatchInvalid, "patch", fmt.Sprintf("the patched draft is larger than %d bytes", maxPatchBytes))
		}
	}
	if err := flush(); err != nil {
		return refuse(codePatchInvalid, "patch", err.Error())
	}
	var patched any
	if err := json.Unmarshal(cur, &patched); err != nil {
		return refuse(codePatchInvalid, "patch", err.Error())
	}
	obj, ok := patched.(map[string]any)
	if !ok {
		return refuse(codeDraftNotObject, "", "patched draft must be a JSON object")
	}
	return obj, nil
}

// rootTarget applies an add, replace, move or copy whose path is the whole
// document: the document becomes the operation's value, or the value at
// its "from".
func rootTarget(doc []byte, op protocol.Object) ([]byte, error) {
	if op["op"] == "add" || op["op"] == "replace" {
		value, ok := op["value"]
		if !ok {
			return nil, errors.New(`missing "value"`)
		}
		return json.Marshal(value)
	}
	from, ok := op["from"].(string)
	if !ok {
		return nil, errors.New(`missing "from"`)
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, err
	}
	if from != "" && !strings.HasPrefix(from, "/") {
		return nil, fmt.Errorf("from %q is not a JSON pointer", from)
	}
	for _, tok := range strings.Split(from, "/")[1:] {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch x := v.(type) {
		case map[string]any:
			if v, ok = x[tok]; !ok {
				return nil, fmt.Errorf("from %q does not exist", from)
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) || (tok != "0" && strings.HasPrefix(tok, "0")) {
				return nil, fmt.Errorf("from %q does not exist", from)
			}
			v = x[i]
		default:
			return nil, fmt.Errorf("from %q does not exist", from)
		}
	}
	return json.Marshal(v)
}

// patchDraft answers workflow.drafts.patch: it patches a draft document
// that is not stored anywhere and validates the result.
func (s *Service) patchDraft(_ context.Context, p protocol.PatchDraftParams) (protocol.PatchDraftResult, error) {
	switch {
	case p.Draft == nil:
		return protocol.PatchDraftResult{}, invalidParams("invalid params: draft must be a JSON object")
	case p.Patch == nil:
		return protocol.PatchDraftResult{}, invalidParams("invalid params: patch must be a list of operations")
	}
	patched, refused := applyPatch(p.Draft, p.Patch)
	if refused != nil {
		return protocol.PatchDraftResult{Status: statusInvalid, Diagnostics: []workflow.Diagnostic{*refused}}, nil
	}
	plan, diags, err := s.compileDocument(patched)
	switch {
	case err != nil:
		return protocol.PatchDraftResult{}, err
	case plan == nil:
		return protocol.PatchDraftResult{Status: statusInvalid, Diagnostics: diags, Draft: patched}, nil
	}
	return protocol.PatchDraftResult{Status: statusValid, Diagnostics: diags, Draft: patched, CompiledPlan: plan}, nil
}

// patchWorkspace answers workflow.draft_workspaces.patch. A patch that
// cannot be applied is not a revision: the answer is the workspace with
// status "invalid" and the patch's diagnostic, and nothing is stored.
func (s *Service) patchWorkspace(ctx context.Context, p protocol.PatchWorkspaceParams) (protocol.DraftEditResult, error) {
	if p.Patch == nil {
		return protocol.DraftEditResult{}, invalidParams("invalid params: patch must be a list of operations")
	}
	var refused *workflow.Diagnostic
	var current workflow.Object
	res, err := s.stepEdit(ctx, p.WorkspaceID, p.Revision, func(doc workflow.Object) error {
		patched, d := applyPatch(doc, p.Patch)
		if d != nil {
			refused, current = d, doc
			return nil
		}
		clear(doc)
		maps.Copy(doc, patched)
		return nil
	})
	if err == nil && refused != nil {
		res.Status, res.Diagnostics = statusInvalid, []workflow.Diagnostic{*refused}
		res.NextActions = afterEdit(res.WorkspaceResult, current)
	}
	return res, err
}

// checkSchemaParam refuses a contract schema that is not valid JSON Schema
// (the reference's ValueError).
func checkSchemaParam(name string, s workflow.Object) error {
	if err := schema.Default.Check(s); err != nil {
		return invalid("%s is not valid JSON Schema: %v", name, err)
	}
	return nil
}

// checkWorkflowOutcomes refuses an empty outcome list, a blank outcome and
// outcomes that are equal once trimmed.
func checkWorkflowOutcomes(outcomes []string) error {
	if len(outcomes) == 0 {
		return invalid("workflow outcomes must contain at least one value")
	}
	seen := map[string]bool{}
	for _, o := range outcomes {
		t := strings.TrimSpace(o)
		if t == "" {
			return invalid("workflow outcomes must not contain blank values")
		}
		if seen[t] {
			return invalid("workflow outcomes must be unique, and %q is there twice", t)
		}
		seen[t] = true
	}
	return nil
}

// setContract answers workflow.draft_workspaces.set_contract: each schema
// or outcome list given replaces the draft's whole one (merging JSON
// Schemas would make removing a required field or a reducer ambiguous).
// The values are checked before the revision, as the reference does.
func (s *Service) setContract(ctx context.Context, p protocol.SetContractParams) (protocol.DraftEditResult, error) {
	fields := map[string]workflow.Object{"input_schema": p.InputSchema, "state_schema": p.StateSchema, "output_schema": p.OutputSchema}
	given := 0
	for _, name := range []string{"input_schema", "state_schema", "output_schema"} {
		if fields[name] == nil {
			continue
		}
		given++
		if err := checkSchemaParam(name, fields[name]); err != nil {
			return protocol.DraftEditResult{}, err
		}
	}
	if p.Outcomes != nil {
		given++
		if err := checkWorkflowOutcomes(p.Outcomes); err != nil {
			return protocol.DraftEditResult{}, err
		}
	}
	if given == 0 {
		return protocol.DraftEditResult{}, invalid("set_contract requires at least one of input_schema, state_schema, output_schema and outcomes")
	}
	return s.stepEdit(ctx, p.WorkspaceID, p.Revision, func(doc workflow.Object) error {
		for name, value := range fields {
			if value != nil {
				doc[name] = value
			}
		}
		if p.Outcomes != nil {
			doc["outcomes"] = p.Outcomes
		}
		return nil
	})
}

// createEmpty answers workflow.draft_workspaces.create_empty: a workspace
// at revision 1 whose draft has the contract and no steps yet (so it is
// invalid until a start step exists).
func (s *Service) createEmpty(ctx context.Context, p protocol.CreateEmptyParams) (protocol.DraftEditResult, error) {
	if err := checkRecordID("workspace_id", p.WorkspaceID); err != nil {
		return protocol.DraftEditResult{}, err
	}
	if p.Name == "" {
		return protocol.DraftEditResult{}, invalidParams("invalid params: name must not be empty")
	}
	schemas := map[string]workflow.Object{"input_schema": p.InputSchema, "state_schema": p.StateSchema, "output_schema": p.OutputSchema}
	doc := workflow.Object{"name": p.Name, "output": []any{}, "start": "", "steps": workflow.Object{}, "routes": workflow.Object{}}
	for _, name := range []string{"input_schema", "state_schema", "output_schema"} {
		value := schemas[name]
		if value == nil {
			value = workflow.Object{"type": "object", "properties": workflow.Object{}}
		} else if err := checkSchemaParam(name, value); err != nil {
			return protocol.DraftEditResult{}, err
		}
		doc[name] = value
	}
	outcomes := p.Outcomes
	if outcomes == nil {
		outcomes = []string{workflow.OutcomeOK}
	}
	if err := checkWorkflowOutcomes(outcomes); err != nil {
		return protocol.DraftEditResult{}, err
	}
	doc["outcomes"] = outcomes
	doc, err := toObject(doc)
	if err != nil {
		return protocol.DraftEditResult{}, err
	}
	diags := s.validateDocument(doc)
	now := s.now().UnixMilli()
	ws := store.Workspace{
		ID: p.WorkspaceID, Revision: 1, Title: p.Title, Draft: doc,
		Status: statusOf(diags), Diagnostics: diags, CreatedAtMs: now, UpdatedAtMs: now,
	}
	what := fmt.Sprintf("draft workspace %q", p.WorkspaceID)
	switch err := s.Store.CreateWorkspace(ctx, ws); {
	case errors.Is(err, store.ErrExists):
		existing, getErr := s.Store.GetWorkspace(ctx, p.WorkspaceID)
		if getErr != nil {
			return protocol.DraftEditResult{}, storeErr(getErr, what)
		}
		res := workspaceResult(existing, false)
		res.Status = statusConflict
		res.Diagnostics = []workflow.Diagnostic{{Code: "workspace_exists", Path: "workspace_id", Message: fmt.Sprintf("workspace %q already exists", p.WorkspaceID)}}
		return protocol.DraftEditResult{WorkspaceResult: res, NextActions: afterEdit(res, existing.Draft)}, nil
	case err != nil:
		return protocol.DraftEditResult{}, storeErr(err, what)
	}
	res := workspaceResult(ws, false)
	return protocol.DraftEditResult{WorkspaceResult: res, NextActions: afterEdit(res, doc)}, nil
}

// createWrapper answers workflow.draft_workspaces.create_wrapper: it is
// create_artifact with the kind fixed to "wrapper".
func (s *Service) createWrapper(ctx context.Context, p protocol.CreateWrapperParams) (any, error) {
	return s.createArtifact(ctx, protocol.CreateArtifactParams{
		WorkspaceID: p.WorkspaceID, ArtifactID: p.ArtifactID, Version: p.Version, Title: p.Title, Outcomes: p.Outcomes,
		Kind: ptr(kindWrapper), Description: p.Description, RequiredCapabilities: p.RequiredCapabilities,
		SourceBindings: p.SourceBindings, CreatedFromCatalogVersion: p.CreatedFromCatalogVersion,
	})
}

// removeRoute answers workflow.draft_workspaces.remove_route. Removing a
// route that does not exist changes nothing and keeps the revision.
func (s *Service) removeRoute(ctx context.Context, p protocol.RemoveRouteParams) (protocol.DraftEditResult, error) {
	return s.stepEdit(ctx, p.WorkspaceID, p.Revision, func(doc workflow.Object) error {
		routes, err := objectAt(doc, "routes", "draft routes")
		if err != nil {
			return err
		}
		stepRoutes, err := objectAt(routes, p.StepID, fmt.Sprintf("routes of step %q", p.StepID))
		if err != nil {
			return err
		}
		delete(stepRoutes, p.Outcome)
		return nil
	})
}

// removeStep answers workflow.draft_workspaces.remove_step: the step and
// its own routes go; routes into it stay, dangling, for the author to
// repoint (the diagnostics say where). Removing a step that does not exist
// changes nothing and keeps the revision.
func (s *Service) removeStep(ctx context.Context, p protocol.RemoveStepParams) (protocol.DraftEditResult, error) {
	return s.stepEdit(ctx, p.WorkspaceID, p.Revision, func(doc workflow.Object) error {
		steps, err := objectAt(doc, "steps", "draft steps")
		if err != nil {
			return err
		}
		if _, ok := steps[p.StepID]; !ok {
			return nil
		}
		delete(steps, p.StepID)
		if routes, ok := doc["routes"].(map[string]any); ok {
			delete(routes, p.StepID)
		}
		return nil
	})
}

// removeBinding answers workflow.draft_workspaces.remove_binding: it drops
// the step's input bindings whose target, and output bindings whose
// source, is one of those named. Naming none is a ValueError; naming only
// bindings that are not there changes nothing and keeps the revision.
func (s *Service) removeBinding(ctx context.Context, p protocol.RemoveBindingParams) (protocol.DraftEditResult, error) {
	if len(p.Inputs) == 0 && len(p.Outputs) == 0 {
		return protocol.DraftEditResult{}, invalid("pass at least one input or output binding to remove")
	}
	return s.stepEdit(ctx, p.WorkspaceID, p.Revision, func(doc workflow.Object) error {
		step, err := stepOf(doc, p.StepID)
		if err != nil {
			return err
		}
		for _, side := range []struct {
			key, field string
			names      []string
		}{{"input", "target", p.Inputs}, {"output", "source", p.Outputs}} {
			kept, removed, err := withoutBindings(step, p.StepID, side.key, side.field, side.names)
			if err != nil {
				return err
			}
			if removed {
				step[side.key] = kept
			}
		}
		return nil
	})
}

// withoutBindings filters the binding list step[key], dropping the bindings
// whose node-local path at field is one of names (compared in canonical
// form, so "a.b" matches {"root": "local", "parts": ["a", "b"]}).
func withoutBindings(step workflow.Object, id, key, field string, names []string) ([]any, bool, error) {
	raw, ok := step[key]
	if !ok || raw == nil || len(names) == 0 {
		return nil, false, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, false, invalid("%s bindings of step %q must be a list", key, id)
	}
	drop := map[string]bool{}
	for _, n := range names {
		drop[localText(n)] = true
	}
	kept := make([]any, 0, len(list))
	for _, item := range list {
		b, ok := item.(map[string]any)
		if !ok {
			return nil, false, invalid("%s binding entries of step %q must be objects", key, id)
		}
		if !drop[storedLocalText(b[field])] {
			kept = append(kept, item)
		}
	}
	return kept, len(kept) != len(list), nil
}

// localText is the canonical form of a node-local path, or s itself when
// it does not parse.
func localText(s string) string {
	if p := workflow.LocalOf(s); p.Err() == nil {
		return p.String()
	}
	return s
}

// storedLocalText is the canonical form of a stored node-local path
// (string or structural), "" when it is neither.
func storedLocalText(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	var p workflow.LocalPath
	if err := json.Unmarshal(data, &p); err != nil || p.Err() != nil {
		if s, ok := v.(string); ok {
			return s
		}
		return ""
	}
	return p.String()
}

// objectAt returns doc[key] as an object, creating none: a missing or null
// key reads as an empty object that is not attached; any other non-object
// value is a ValueError naming what.
func objectAt(doc workflow.Object, key, what string) (workflow.Object, error) {
	switch v := doc[key].(type) {
	case nil:
		return workflow.Object{}, nil
	case map[string]any:
		return v, nil
	default:
		return nil, invalid("%s must be an object", what)
	}
}

// stepOf finds step id in a draft document: a missing step is a KeyError,
// a step that is not an object a ValueError.
func stepOf(doc workflow.Object, id string) (workflow.Object, error) {
	steps, err := objectAt(doc, "steps", "draft steps")
	if err != nil {
		return nil, err
	}
	raw, ok := steps[id]
	if !ok {
		return nil, notFound("unknown draft step %q", id)
	}
	step, ok := raw.(map[string]any)
	if !ok {
		return nil, invalid("draft step %q must be an object", id)
	}
	return step, nil
}

// useStepOf finds step id and the capability it uses: a step of another
// kind is a ValueError.
func useStepOf(doc workflow.Object, id string) (workflow.Object, string, error) {
	step, err := stepOf(doc, id)
	if err != nil {
		return nil, "", err
	}
	use, _ := step[workflow.KindUse].(string)
	if use == "" {
		return nil, "", invalid("draft step %q does not declare a capability use", id)
	}
	return step, use, nil
}
