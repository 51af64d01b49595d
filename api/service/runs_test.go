package service_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// counterDeployment saves artifact "counter" over fake.one.counter and
// deployment "count" bound to fake.one.
func counterDeployment(t *testing.T, f *fixture) {
	t.Helper()
	scaffold(t, f, "ws-counter", "fake.one.counter")
	saveArtifact(t, f, "ws-counter", "counter", "")
	deploy(t, f, `{"id":"count","artifact_id":"counter","artifact_version":1,"bindings":{"fake.one":"fake.one"}}`)
}

func startRun(t *testing.T, f *fixture, params string) protocol.RunResult {
	t.Helper()
	return mustCall[protocol.RunResult](t, f, protocol.MethodRunsStart, params)
}

// waitRun polls runs.inspect until the run leaves status running.
func waitRun(t *testing.T, f *fixture, id string) protocol.RunResult {
	t.Helper()
	return poll.Value(t, "run "+id+" finishes", patience, func() (protocol.RunResult, bool) {
		r := mustCall[protocol.RunResult](t, f, protocol.MethodRunsInspect, `{"run_id":"`+id+`"}`)
		return r, r.Status != "running"
	})
}

func TestRunsStartOfAnUnrunnableDeploymentStoresNoRun(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoArtifact(t, f)
	deploy(t, f, `{"id":"d","artifact_id":"echo","artifact_version":1,"bindings":{"fake.one":"fake.off"}}`)

	raw := generic(t, f.raw(t, protocol.MethodRunsStart, `{"deployment_id":"d","workflow_input":{"message":"hi"}}`))
	is.Equal(raw["status"], "unrunnable")
	v, present := raw["run_id"]
	is.True(present) // run_id is always in the answer
	is.Equal(v, nil) // and null when no run started
	res := startRun(t, f, `{"deployment_id":"d","workflow_input":{"message":"hi"}}`)
	is.Equal(diagCodes(res.Diagnostics), []string{"error:source_disabled"}) // the answer says why
	is.Equal(*res.NextActions.RecommendedNextTool, protocol.MethodDeploymentsValidate)

	list := mustCall[protocol.ListRunsResult](t, f, protocol.MethodRunsList, `{}`)
	is.Equal(list.Total, 0) // no run was stored
	is.Equal(len(list.Runs), 0)
}

func TestRunsStartRejectsInputThatViolatesTheArtifactsInputSchema(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoArtifact(t, f)
	deploy(t, f, `{"id":"d","artifact_id":"echo","artifact_version":1,"bindings":{"fake.one":"fake.one"}}`)
	for _, input := range []string{`{}`, `{"message":5}`} {
		_, err := f.call(t, protocol.MethodRunsStart, `{"deployment_id":"d","workflow_input":`+input+`}`)
		invalidParams(t, err)
	}
	_, err := f.call(t, protocol.MethodRunsStart, `{"deployment_id":"d"}`)
	invalidParams(t, err) // no input is an empty object, which lacks message
	_, err = f.call(t, protocol.MethodRunsStart, `{"deployment_id":"nope"}`)
	domainError(t, err, "KeyError")                                                           // an unknown deployment
	is.Equal(mustCall[protocol.ListRunsResult](t, f, protocol.MethodRunsList, `{}`).Total, 0) // no run was stored
}

func TestRunsStartCompletesARunOverTheFakeCounterAndSharesItsSession(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	counterDeployment(t, f)

	first := startRun(t, f, `{"deployment_id":"count"}`)
	is.Equal(first.Status, "completed")
	is.True(first.RunID != nil)
	is.Equal(*first.Outcome, "ok")
	is.Equal(first.Output, protocol.Object{"count": float64(1)}) // the fake counter's first count
	is.Equal(first.TraceCount, 1)
	is.Equal(first.DeploymentID, "count")
	is.Equal(first.ArtifactID, "counter")
	is.Equal(first.ArtifactVersion, 1)
	is.True(first.Error == nil)
	is.True(!first.NextActions.CanContinue)

	second := startRun(t, f, `{"deployment_id":"count","trace_range":{"start":0,"limit":5}}`)
	is.Equal(second.Status, "completed")
	is.Equal(second.Output, protocol.Object{"count": float64(2)}) // the next run continues the connection's upstream session
	is.True(*second.RunID != *first.RunID)
	is.Equal(len(second.Trace), 1) // a trace range returns the trace with the answer
	is.Equal(second.Trace[0].NodeID, "call")
	is.Equal(second.Trace[0].Outcome, "ok")
	is.Equal(second.Trace[0].NextNodeID, "__end__")
	is.Equal(*second.TraceTruncated, false)

	stored := mustCall[protocol.RunResult](t, f, protocol.MethodRunsInspect, `{"run_id":"`+*first.RunID+`"}`)
	is.Equal(stored.Status, "completed") // the run is stored as answered
	is.Equal(stored.Output, first.Output)
	is.True(stored.Trace == nil) // inspect leaves the trace out
}

func TestRunsStartThroughALogicalSourceBinding(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-1", "fake.one.echo")
	saveArtifact(t, f, "ws-1", "echo", `,"source_bindings":{"talker":"fake.one"}`)
	deploy(t, f, `{"id":"d","artifact_id":"echo","artifact_version":1,"bindings":{"talker":"fake.one"}}`)
	res := startRun(t, f, `{"deployment_id":"d","workflow_input":{"message":"hello"}}`)
	is.Equal(res.Status, "completed")
	is.Equal(res.Output, protocol.Object{"message": "hello"}) // the logical source resolves to its binding

	deploy(t, f, `{"id":"unbound","artifact_id":"echo","artifact_version":1,"bindings":{"fake.one":"fake.one"}}`)
	un := startRun(t, f, `{"deployment_id":"unbound","workflow_input":{"message":"hello"}}`)
	is.Equal(un.Status, "unrunnable") // the logical source must be bound
	is.Equal(diagCodes(un.Diagnostics), []string{"error:binding_missing"})
}

func TestRunsStartWithoutRunWaitAnswersRunningWithAStoredRun(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	f.svc.RunWait = 0
	counterDeployment(t, f)

	res := startRun(t, f, `{"deployment_id":"count"}`)
	is.Equal(res.Status, "running") // answered once committed, not finished
	is.True(res.RunID != nil)
	is.Equal(*res.NextActions.RecommendedNextTool, protocol.MethodRunsInspect)
	stored, err := f.store.GetRun(bounded(t), *res.RunID)
	is.NoErr(err) // the run is already in the store
	is.Equal(stored.DeploymentID, "count")

	final := waitRun(t, f, *res.RunID)
	is.Equal(final.Status, "completed") // and goes on to finish
	is.Equal(final.Output, protocol.Object{"count": float64(1)})
}

func TestRunsInspectAndTraceOfAnUnknownRunAreKeyErrors(t *testing.T) {
	f := newFixture(t)
	_, err := f.call(t, protocol.MethodRunsInspect, `{"run_id":"run_nope"}`)
	domainError(t, err, "KeyError")
	_, err = f.call(t, protocol.MethodRunsTrace, `{"run_id":"run_nope","trace_range":{}}`)
	domainError(t, err, "KeyError")
}

func TestRunsListFiltersByStatusAndPages(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	counterDeployment(t, f)
	scaffold(t, f, "ws-fail", "fake.one.fail")
	saveArtifact(t, f, "ws-fail", "fail", "")
	deploy(t, f, `{"id":"fail","artifact_id":"fail","artifact_version":1,"bindings":{"fake.one":"fake.one"}}`)

	completed := map[string]bool{}
	for range 3 {
		r := startRun(t, f, `{"deployment_id":"count"}`)
		is.Equal(r.Status, "completed")
		completed[*r.RunID] = true
	}
	failed := startRun(t, f, `{"deployment_id":"fail"}`)
	is.Equal(failed.Status, "failed") // a tool error routes to tool_error, which fails the run
	is.Equal(*failed.Error, `step "tool_error": fail failed: fake failure`)
	is.Equal(*failed.NextActions.RecommendedNextTool, protocol.MethodRunsTrace)

	all := mustCall[protocol.ListRunsResult](t, f, protocol.MethodRunsList, `{}`)
	is.Equal(all.Total, 4)
	onlyFailed := mustCall[protocol.ListRunsResult](t, f, protocol.MethodRunsList, `{"status":"failed"}`)
	is.Equal(onlyFailed.Total, 1)
	is.Equal(onlyFailed.Runs[0].RunID, *failed.RunID)
	is.Equal(onlyFailed.Runs[0].DeploymentID, "fail")

	page1 := mustCall[protocol.ListRunsResult](t, f, protocol.MethodRunsList, `{"status":"completed","limit":2}`)
	is.Equal(page1.Total, 3)
	is.Equal(len(page1.Runs), 2)
	is.Equal(page1.Limit, 2)
	is.Equal(*page1.NextCursor, "2")
	page2 := mustCall[protocol.ListRunsResult](t, f, protocol.MethodRunsList, `{"status":"completed","limit":2,"cursor":"2"}`)
	is.Equal(len(page2.Runs), 1)
	is.True(page2.NextCursor == nil) // the last page
	is.Equal(*page2.Cursor, "2")     // the cursor is echoed
	seen := map[string]bool{}
	for _, r := range append(page1.Runs, page2.Runs...) {
		is.Equal(r.Status, "completed")
		seen[r.RunID] = true
	}
	is.Equal(seen, completed) // the pages cover every completed run once

	none := mustCall[protocol.ListRunsResult](t, f, protocol.MethodRunsList, `{"status":"interrupted"}`)
	is.Equal(none.Total, 0)
	_, err := f.call(t, protocol.MethodRunsList, `{"cursor":"x"}`)
	domainError(t, err, "ValueError") // a bad cursor
}

// countTwice is a three-step draft: two counter calls and an end step.
const countTwice = `{"name":"count_twice","input_schema":{"type":"object"},"state_schema":{"type":"object"},
	"output_schema":{"type":"object","properties":{"first":{"type":"integer"},"second":{"type":"integer"}}},
	"outcomes":["ok","error"],"start":"first",
	"steps":{"first":{"use":"fake.one.counter","output":[{"source":"count","target":"state.first"}]},
		"second":{"use":"fake.one.counter","output":[{"source":"count","target":"state.second"}]},
		"done":{"end":{}},"failed":{"end":{"outcome":"error"}}},
	"routes":{"first":{"ok":"second","error":"failed"},"second":{"ok":"done","error":"failed"}}}`

func TestRunsTraceReturnsTheRequestedRange(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-1", "fake.one.counter")
	replaced := mustCall[protocol.WorkspaceResult](t, f, protocol.MethodWorkspaceReplaceDocument, `{"workspace_id":"ws-1","revision":1,"draft":`+countTwice+`}`)
	is.Equal(replaced.Status, "valid")
	is.Equal(replaced.Revision, 2)
	mustCall[protocol.SavedArtifact](t, f, protocol.MethodWorkspaceCreateArtifact, `{"workspace_id":"ws-1","artifact_id":"twice","version":1,"title":"T","outcomes":["ok","error"]}`)
	deploy(t, f, `{"id":"twice","artifact_id":"twice","artifact_version":1,"bindings":{"fake.one":"fake.one"}}`)

	run := startRun(t, f, `{"deployment_id":"twice"}`)
	is.Equal(run.Status, "completed")
	is.Equal(run.Output, protocol.Object{"first": float64(1), "second": float64(2)})
	is.Equal(run.TraceCount, 3) // two calls and the end step

	middle := mustCall[protocol.RunResult](t, f, protocol.MethodRunsTrace, `{"run_id":"`+*run.RunID+`","trace_range":{"start":1,"limit":1}}`)
	is.Equal(len(middle.Trace), 1)
	is.Equal(middle.Trace[0].NodeID, "second")
	is.Equal(middle.Trace[0].NextNodeID, "done")
	is.Equal(middle.Trace[0].StateChanges, protocol.Object{"state.second": float64(2)})
	is.Equal(*middle.TraceStart, 1)
	is.Equal(*middle.TraceLimit, 1)
	is.Equal(*middle.TraceTruncated, true) // an entry follows the range

	tail := mustCall[protocol.RunResult](t, f, protocol.MethodRunsTrace, `{"run_id":"`+*run.RunID+`","trace_range":{"start":2,"limit":10}}`)
	is.Equal(len(tail.Trace), 1)
	is.Equal(tail.Trace[0].NodeID, "done")
	is.Equal(tail.Trace[0].StepType, "end")
	is.Equal(*tail.TraceTruncated, false)

	whole := mustCall[protocol.RunResult](t, f, protocol.MethodRunsTrace, `{"run_id":"`+*run.RunID+`","trace_range":{}}`)
	is.Equal(len(whole.Trace), 3) // the default range covers a short trace
	is.Equal(*whole.TraceStart, 0)
	is.Equal(whole.Trace[0].NodeID, "first")
}

func TestAWorkflowOfBuiltinsNeedsNoBindingAndRunsInPlace(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	res := scaffold(t, f, "ws-const", "wf.std.constant")
	is.Equal(res.Summary.Steps, []string{"call"}) // a built-in declares no error outcome
	saved := saveArtifact(t, f, "ws-const", "const", "")
	is.Equal(saved.RequiredLogicalSources, []string{}) // nothing to bind
	deploy(t, f, `{"id":"const","artifact_id":"const","artifact_version":1}`)
	is.Equal(validate(t, f, "const").Status, "runnable")

	run := startRun(t, f, `{"deployment_id":"const","workflow_input":{"value":{"nested":[1,2]}}}`)
	is.Equal(run.Status, "completed")
	is.Equal(run.Output, protocol.Object{"value": map[string]any{"nested": []any{float64(1), float64(2)}}}) // the value passes through
}

func TestDeploymentsValidateWithALiveCheckProbesTheUpstream(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoArtifact(t, f)
	deploy(t, f, `{"id":"d","artifact_id":"echo","artifact_version":1,"bindings":{"fake.one":"fake.one"}}`)
	res := mustCall[protocol.ValidateDeploymentResult](t, f, protocol.MethodDeploymentsValidate, `{"deployment_id":"d","live_check":true}`)
	is.Equal(res.Status, "runnable")
	is.Equal(len(res.Diagnostics), 0) // the fake upstream answers
	_, err := f.store.GetCatalog(bounded(t), "fake.one")
	is.NoErr(err) // the probe stored a fresh catalog
}
