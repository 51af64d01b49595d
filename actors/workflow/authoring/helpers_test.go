package authoring_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/authoring"
)

// fetch declares two outcomes, a required string input and two output
// fields; ping declares no outcome (so "ok" alone) and takes anything.
var (
	fetch = catalog.Capability{
		Name: "up.fetch", SourceID: "up", LocalName: "fetch", Outcomes: []string{"ok", "error"},
		InputSchema: catalog.Object{"type": "object", "required": []any{"url"},
			"properties": catalog.Object{"url": catalog.Object{"type": "string"}, "retries": catalog.Object{"type": "integer"}}},
		OutputSchema: catalog.Object{"type": "object",
			"properties": catalog.Object{"body": catalog.Object{"type": "string"}, "status": catalog.Object{"type": "integer"}}},
	}
	ping = catalog.Capability{Name: "up.ping", SourceID: "up", LocalName: "ping",
		InputSchema: catalog.Object{"type": "object"}, OutputSchema: catalog.Object{"type": "object"}}
)

// find knows fetch and ping.
func find(name string) (catalog.Capability, bool) {
	for _, c := range []catalog.Capability{fetch, ping} {
		if c.Name == name {
			return c, true
		}
	}
	return catalog.Capability{}, false
}

// emptyDraft is what create_empty makes of the name "flow".
func emptyDraft(t *testing.T) workflow.Object {
	t.Helper()
	doc, err := authoring.Empty(authoring.EmptyParams{Name: "flow"})
	is.New(t).NoErr(err)
	return doc
}

// withFetch is emptyDraft with one fetch step "get", routed to the end on
// both outcomes.
func withFetch(t *testing.T) workflow.Object {
	t.Helper()
	doc, err := authoring.AddStepFromCapability(emptyDraft(t), authoring.AddStepFromCapabilityParams{
		StepID: "get", CapabilityName: "up.fetch", Routes: map[string]string{"ok": workflow.End, "error": workflow.End},
	}, find)
	is.New(t).NoErr(err)
	return doc
}

// jsonOf is v's JSON, for comparing documents.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	is.New(t).NoErr(err)
	return string(data)
}

// at walks a document along keys.
func at(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// kindOf is the kind of an operation's refusal, 0 for any other error.
func kindOf(err error) authoring.Kind {
	var refused *authoring.Error
	if errors.As(err, &refused) {
		return refused.Kind
	}
	return 0
}

// unchanged runs op over doc and checks that doc is as it was after.
func unchanged(t *testing.T, doc workflow.Object, op func(workflow.Object) (workflow.Object, error)) (workflow.Object, error) {
	t.Helper()
	before := jsonOf(t, doc)
	next, err := op(doc)
	is.New(t).Equal(jsonOf(t, doc), before) // the operation left its document alone
	return next, err
}
