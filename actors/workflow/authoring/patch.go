package authoring

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/mcpflow/mcpflow/actors/workflow"
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

// ApplyPatch applies an RFC 6902 JSON Patch to a draft document. A patch
// that does not apply is a patch_invalid diagnostic, a result that is not
// a JSON object a draft_not_object one; either way there is no document.
//
// Operations go to evanphx/json-patch in runs, except those whose target
// or source is the whole document (path or from ""), which it does not
// handle as RFC 6902 says (it refuses to add or replace the root with a
// scalar, moves or copies to a member named "" instead of the root, and
// copies from "" the document as it was before the run): those are
// applied here, in order with the others.
func ApplyPatch(doc workflow.Object, ops []workflow.Object) (workflow.Object, *workflow.Diagnostic) {
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
	var run []workflow.Object
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
		path, pathOK := op["path"].(string)
		from, fromOK := op["from"].(string)
		toRoot := pathOK && path == "" && slices.Contains([]string{"add", "replace", "move", "copy"}, kind)
		fromRoot := fromOK && from == "" && (kind == "move" || kind == "copy") && !toRoot
		if !toRoot && !fromRoot {
			run = append(run, op)
			continue
		}
		if err := flush(); err != nil {
			return refuse(codePatchInvalid, "patch", err.Error())
		}
		var next []byte
		if toRoot {
			next, err = rootTarget(cur, op)
		} else {
			next, err = rootSource(cur, op, opts)
		}
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

// rootSource applies a copy whose from is the whole document: the
// document as patched so far is added at path. A move from the whole
// document goes nowhere: RFC 6902 forbids moving a value into one of its
// own members.
func rootSource(doc []byte, op workflow.Object, opts *jsonpatch.ApplyOptions) ([]byte, error) {
	if op["op"] == "move" {
		return nil, errors.New("the document cannot be moved into one of its own members")
	}
	add, err := json.Marshal([]any{map[string]any{"op": "add", "path": op["path"], "value": json.RawMessage(doc)}})
	if err != nil {
		return nil, err
	}
	patch, err := jsonpatch.DecodePatch(add)
	if err != nil {
		return nil, err
	}
	return patch.ApplyWithOptions(doc, opts)
}

// rootTarget applies an add, replace, move or copy whose path is the whole
// document: the document becomes the operation's value, or the value at
// its "from".
func rootTarget(doc []byte, op workflow.Object) ([]byte, error) {
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
