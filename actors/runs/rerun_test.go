package runs_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// fourCounts is four steps a, b, c, d in a line, each calling fake.one's
// counter and appending its count to state.seen (the output): the
// session's counter counts every call the upstream took.
const fourCounts = `{"name":"four","start":"a",
	"input_schema":{"type":"object","properties":{"label":{"type":"string"}}},
	"state_schema":{"type":"object","properties":{"seen":{"type":"array","reducer":"wf.std.append"}}},
	"output_schema":{"type":"object","properties":{"seen":{}}},
	"steps":{
	  "a":{"use":"fake.one.counter","output":[{"source":"count","target":"state.seen"}]},
	  "b":{"use":"fake.one.counter","output":[{"source":"count","target":"state.seen"}]},
	  "c":{"use":"fake.one.counter","output":[{"source":"count","target":"state.seen"}]},
	  "d":{"use":"fake.one.counter","output":[{"source":"count","target":"state.seen"}]}},
	"routes":{"a":{"ok":"b","error":"__end__"},"b":{"ok":"c","error":"__end__"},"c":{"ok":"d","error":"__end__"},"d":{"ok":"__end__","error":"__end__"}}}`

// saveWorkflow saves the workflow of draft doc as versions 1 to
// versions of artifact id, and deployment id of its version 1 on
// fake.one.
func saveWorkflow(t *testing.T, n *node, id, doc string, versions int) {
	t.Helper()
	is := is.New(t)
	var obj workflow.Object
	is.NoErr(json.Unmarshal([]byte(doc), &obj))
	draft, diags := workflow.ParseDraft(obj)
	is.Equal(diags, nil)
	plan, err := workflow.Compile(draft)
	is.NoErr(err)
	ctx := bounded(t)
	for v := 1; v <= versions; v++ {
		_, err = n.store.SaveArtifact(ctx, store.Artifact{ID: id, Version: v, Title: id, Kind: "workflow", Plan: plan,
			InputSchema: plan.InputSchema, OutputSchema: plan.OutputSchema, Outcomes: plan.Outcomes})
		is.NoErr(err)
	}
	saveDeployment(t, n, id, id)
}

// saveDeployment saves deployment id of version 1 of artifact on
// fake.one.
func saveDeployment(t *testing.T, n *node, id, artifact string) {
	t.Helper()
	is.New(t).NoErr(n.store.SaveDeployment(bounded(t), store.Deployment{ID: id, ArtifactID: artifact, ArtifactVersion: 1, DriftPolicy: "allow",
		Bindings: []store.Binding{{LogicalSource: "fake.one", ConcreteSource: "fake.one"}}}))
	n.manager.RecordsChanged()
}

// ranFour is a node with fourCounts saved as versions 1 and 2 of
// artifact "four", deployment "four" of version 1, and the run
// of deployment "four" that ran it to its end: its four calls took the
// session's counts 1 to 4.
func ranFour(t *testing.T) (*node, store.Run) {
	t.Helper()
	is := is.New(t)
	n := newNode(t)
	saveWorkflow(t, n, "four", fourCounts, 2)
	res, err := n.manager.Start(bounded(t), runs.StartRequest{DeploymentID: "four", Input: workflow.Object{"label": "x"}, Wait: patience})
	is.NoErr(err)
	is.Equal(res.Run.Status, store.RunCompleted)
	is.Equal(res.Run.Output["seen"], []any{1.0, 2.0, 3.0, 4.0})
	return n, res.Run
}

// A fork from the third step replays the first two from the parent's
// trace and calls the upstream twice (c and d: counts 5 and 6), not four
// times; it names its parent and its fork point, and its trace says
// which steps it replayed.
func TestAForkFromTheThirdStepCallsOnlyTheStepsFromThere(t *testing.T) {
	is := is.New(t)
	n, parent := ranFour(t)
	ctx := bounded(t)

	res, err := n.manager.Fork(ctx, runs.ForkRequest{RunID: parent.ID, FromNode: "c", StartedBy: "test", Wait: patience})
	is.NoErr(err)
	fork := res.Run
	is.Equal(fork.Status, store.RunCompleted)
	is.Equal(fork.Output["seen"], []any{1.0, 2.0, 5.0, 6.0}) // a and b replayed; c and d called once each
	is.Equal(fork.ParentRunID, parent.ID)
	is.Equal(fork.ForkedFromNode, "c")
	is.Equal(fork.Input, parent.Input)
	trace, err := n.store.ReadTrace(ctx, fork.ID, 0, 0)
	is.NoErr(err)
	var replayed []string
	for _, e := range trace {
		if e.Replayed {
			replayed = append(replayed, e.NodeID)
		}
	}
	is.Equal(len(trace), 4)
	is.Equal(replayed, []string{"a", "b"})
}

// A fork from a step the parent never reached is refused with the steps
// that are valid, and starts nothing.
func TestAForkFromAStepTheRunNeverReachedIsRefused(t *testing.T) {
	is := is.New(t)
	n, parent := ranFour(t)
	ctx := bounded(t)
	_, err := n.manager.Fork(ctx, runs.ForkRequest{RunID: parent.ID, FromNode: "e", Wait: patience})
	var refused *runs.Error
	is.True(errors.As(err, &refused))
	is.Equal(refused.Kind, runs.InvalidParams)
	is.True(strings.Contains(refused.Message, `never reached step "e"`))
	is.True(strings.Contains(refused.Message, "[a, b, c, d]"))
	list, _, err := n.store.ListRuns(ctx, store.RunQuery{})
	is.NoErr(err)
	is.Equal(len(list), 1) // the parent alone
}

// A rerun runs the same input on the parent's version, or a newer one,
// and names its parent; an older version is refused.
func TestARerunRunsTheSameInputOnTheSameVersionOrANewerOne(t *testing.T) {
	is := is.New(t)
	n, parent := ranFour(t)
	ctx := bounded(t)

	res, err := n.manager.Rerun(ctx, runs.RerunRequest{RunID: parent.ID, Wait: patience})
	is.NoErr(err)
	is.Equal(res.Run.Status, store.RunCompleted)
	is.Equal(res.Run.Input, parent.Input)
	is.Equal(res.Run.ParentRunID, parent.ID)
	is.Equal(res.Run.ForkedFromNode, "")
	is.Equal(res.Run.ArtifactVersion, 1)
	is.Equal(res.Run.Output["seen"], []any{5.0, 6.0, 7.0, 8.0}) // every step called again

	res, err = n.manager.Rerun(ctx, runs.RerunRequest{RunID: res.Run.ID, ArtifactVersion: 2, Wait: patience})
	is.NoErr(err)
	is.Equal(res.Run.ArtifactVersion, 2)
	is.Equal(res.Run.Status, store.RunCompleted)

	_, err = n.manager.Rerun(ctx, runs.RerunRequest{RunID: res.Run.ID, ArtifactVersion: 1, Wait: patience})
	var refused *runs.Error
	is.True(errors.As(err, &refused))
	is.Equal(refused.Kind, runs.InvalidParams)
	is.True(strings.Contains(refused.Message, "params.artifact_version: version 1 is older than version 2"))
}

// loopThenCount loops over input.items calling fake.one's counter for
// each (step "each_call"), then calls it once more (step "after").
const loopThenCount = `{"name":"loop","start":"each",
	"input_schema":{"type":"object","properties":{"items":{"type":"array"}}},
	"state_schema":{"type":"object","properties":{"seen":{"type":"array","reducer":"wf.std.append"}}},
	"output_schema":{"type":"object","properties":{"seen":{}}},
	"steps":{"each":{"foreach":{"over":"input.items","as":"thing","mode":"serial","item_error":"fail"}},
	  "each_call":{"use":"fake.one.counter","output":[{"source":"count","target":"state.seen"}]},
	  "after":{"use":"fake.one.counter","output":[{"source":"count","target":"state.seen"}]}},
	"routes":{"each":{"loop":"each_call","done":"after","completed_with_errors":"after"},"each_call":{"ok":"each","error":"each"},
	  "after":{"ok":"__end__","error":"__end__"}}}`

// A fork from a step of a foreach body is refused, naming the steps of
// the main line; a run whose deployment now runs another artifact is
// not run again.
func TestAForkInsideALoopAndARerunOnAnotherArtifactAreRefused(t *testing.T) {
	is := is.New(t)
	n := newNode(t)
	ctx := bounded(t)
	saveWorkflow(t, n, "loop", loopThenCount, 1)
	res, err := n.manager.Start(ctx, runs.StartRequest{DeploymentID: "loop", Input: workflow.Object{"items": []any{"x", "y"}}, Wait: patience})
	is.NoErr(err)
	is.Equal(res.Run.Output["seen"], []any{1.0, 2.0, 3.0})

	_, err = n.manager.Fork(ctx, runs.ForkRequest{RunID: res.Run.ID, FromNode: "each_call", Wait: patience})
	var refused *runs.Error
	is.True(errors.As(err, &refused))
	is.Equal(refused.Kind, runs.InvalidParams)
	is.True(strings.Contains(refused.Message, `step "each_call" is in a foreach body`))
	is.True(strings.Contains(refused.Message, "[each, after]"))

	// The fork from after: the loop's two calls replayed, after called.
	fork, err := n.manager.Fork(ctx, runs.ForkRequest{RunID: res.Run.ID, FromNode: "after", Wait: patience})
	is.NoErr(err)
	is.Equal(fork.Run.Output["seen"], []any{1.0, 2.0, 4.0})

	// The deployment now runs another artifact: no rerun.
	saveDeployment(t, n, "loop", "count")
	_, err = n.manager.Rerun(ctx, runs.RerunRequest{RunID: res.Run.ID, Wait: patience})
	is.True(errors.As(err, &refused))
	is.Equal(refused.Kind, runs.Invalid)
	is.True(strings.Contains(refused.Message, `deployment "loop" now runs artifact "count", not "loop"`))
}
