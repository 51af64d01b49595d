package workflow_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/schema"
)

// Fixture capabilities beside counter (workflow_test.go). None of them is
// inline: the drive helper's answer func plays the tool.
var (
	// echo takes a required string and returns one.
	echo = catalog.Tool{
		Name: "echo",
		InputSchema: catalog.Object{"type": "object",
			"properties": catalog.Object{"text": catalog.Object{"type": "string"}},
			"required":   []any{"text"}},
		OutputSchema: catalog.Object{"type": "object",
			"properties": catalog.Object{"text": catalog.Object{"type": "string"}},
			"required":   []any{"text"}},
	}.Capability("fx.default")
	// anything takes and returns any object.
	anything = catalog.Tool{
		Name:         "anything",
		InputSchema:  catalog.Object{"type": "object"},
		OutputSchema: catalog.Object{"type": "object"},
	}.Capability("fx.default")
	// grade routes "pass" or "fail" instead of ok/error.
	grade = catalog.Capability{
		Name: "fx.default.grade", SourceID: "fx.default", LocalName: "grade",
		Outcomes:     []string{"pass", "fail"},
		InputSchema:  catalog.Object{"type": "object", "properties": catalog.Object{"score": catalog.Object{"type": "number"}}},
		OutputSchema: catalog.Object{"type": "object", "properties": catalog.Object{"grade": catalog.Object{"type": "string"}}},
	}
)

// fixtures finds the fixture capabilities, counter and the platform specs.
func fixtures(name string) (catalog.Capability, bool) {
	for _, c := range []catalog.Capability{echo, anything, grade} {
		if c.Name == name {
			return c, true
		}
	}
	return lookup(name)
}

// strict enforces every schema against the fixture capabilities.
var strict = workflow.Options{Capability: fixtures, Validate: schema.Default.Validate}

// parse decodes a draft written as JSON and returns its parse diagnostics.
func parse(t *testing.T, doc string) (workflow.Draft, []workflow.Diagnostic) {
	t.Helper()
	var obj workflow.Object
	if err := json.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatalf("draft is not JSON: %v\n%s", err, doc)
	}
	return workflow.ParseDraft(obj)
}

// planOf parses, validates (against the fixtures) and compiles a draft;
// warnings are allowed, errors are not.
func planOf(t *testing.T, doc string) workflow.Plan {
	t.Helper()
	d, diags := parse(t, doc)
	diags = append(diags, workflow.ValidateDraft(d, fixtures)...)
	for _, dg := range diags {
		if dg.IsError() {
			t.Fatalf("draft has an error: %s at %s: %s", dg.Code, dg.Path, dg.Message)
		}
	}
	p, err := workflow.Compile(d)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return p
}

// start begins an execution of plan with strict options.
func start(t *testing.T, prog workflow.Program, input workflow.Object) *workflow.Execution {
	t.Helper()
	e, err := workflow.NewExecution(prog, input, strict)
	is.New(t).NoErr(err)
	return e
}

// runDraft compiles doc, runs it on input to its end with answer and
// returns the execution and its trace.
func runDraft(t *testing.T, doc string, input workflow.Object, answer func(workflow.Call) workflow.Result) (*workflow.Execution, []workflow.TraceEntry) {
	t.Helper()
	e := start(t, workflow.Program{Root: planOf(t, doc)}, input)
	return e, drive(t, e, answer)
}

// echoing answers every call ok with its own input.
func echoing(c workflow.Call) workflow.Result {
	return workflow.Result{Outcome: workflow.OutcomeOK, Output: c.Input}
}

// noCalls fails the test if the execution hands out a call.
func noCalls(t *testing.T) func(workflow.Call) workflow.Result {
	return func(c workflow.Call) workflow.Result {
		t.Errorf("unexpected call of %s", c.Capability)
		return workflow.Result{Outcome: workflow.OutcomeOK}
	}
}

// hops summarizes a trace as "frame node outcome->next" lines.
func hops(trace []workflow.TraceEntry) []string {
	out := make([]string, len(trace))
	for i, e := range trace {
		out[i] = fmt.Sprintf("%s %s %s->%s", e.FrameID, e.NodeID, e.Outcome, e.NextNodeID)
	}
	return out
}

// entry returns the only trace entry of node in frame.
func entry(t *testing.T, trace []workflow.TraceEntry, frame, node string) workflow.TraceEntry {
	t.Helper()
	var found []workflow.TraceEntry
	for _, e := range trace {
		if e.FrameID == frame && e.NodeID == node {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one trace entry of %s in %s, got %d:\n%s", node, frame, len(found), strings.Join(hops(trace), "\n"))
	}
	return found[0]
}

// errHas checks that the failed execution's error contains every part.
func errHas(t *testing.T, e *workflow.Execution, parts ...string) {
	t.Helper()
	is := is.New(t)
	is.Equal(e.Status(), workflow.StatusFailed)
	for _, p := range parts {
		if !strings.Contains(e.Err(), p) {
			t.Fatalf("error %q does not contain %q", e.Err(), p)
		}
	}
}

// snapshotJSON encodes the execution's snapshot, to compare states.
func snapshotJSON(t *testing.T, e *workflow.Execution) string {
	t.Helper()
	data, err := json.Marshal(e.Snapshot())
	is.New(t).NoErr(err)
	return string(data)
}

// roundTrip restores an execution from a JSON copy of its snapshot, as a
// checkpoint does.
func roundTrip(t *testing.T, prog workflow.Program, e *workflow.Execution) *workflow.Execution {
	t.Helper()
	is := is.New(t)
	var snap workflow.Snapshot
	is.NoErr(json.Unmarshal([]byte(snapshotJSON(t, e)), &snap))
	restored, err := workflow.Restore(prog, snap, strict)
	is.NoErr(err)
	return restored
}

// ref is the artifact ref id@version and its program key.
func ref(id string, version int) (workflow.WorkflowRef, string) {
	r := workflow.WorkflowRef{ArtifactID: &id, Version: &version}
	return r, r.Key()
}
