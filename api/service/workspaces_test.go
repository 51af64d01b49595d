package service_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/protocol"
)

// scaffold creates workspace id from a capability; it must be valid.
func scaffold(t *testing.T, f *fixture, id, capability string) protocol.CreateFromCapabilityResult {
	t.Helper()
	is := is.New(t)
	is.Helper()
	res := mustCall[protocol.CreateFromCapabilityResult](t, f, protocol.MethodWorkspaceFromCapability,
		`{"workspace_id":"`+id+`","capability_name":"`+capability+`"}`)
	is.Equal(res.Status, "valid") // the scaffold is valid
	return res
}

func getWorkspace(t *testing.T, f *fixture, id string) protocol.WorkspaceResult {
	t.Helper()
	return mustCall[protocol.WorkspaceResult](t, f, protocol.MethodWorkspaceGet, `{"workspace_id":"`+id+`","include_draft":true}`)
}

func codes(diags []protocol.Diagnostic) []string {
	out := make([]string, 0, len(diags))
	for _, d := range diags {
		out = append(out, d.Code)
	}
	return out
}

func hasCode(diags []protocol.Diagnostic, code string) bool {
	for _, d := range diags {
		if d.Code == code {
			return true
		}
	}
	return false
}

func TestCreateFromCapabilityScaffoldsAValidWorkspaceAtRevisionOne(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	res := mustCall[protocol.CreateFromCapabilityResult](t, f, protocol.MethodWorkspaceFromCapability,
		`{"workspace_id":"ws-echo","capability_name":"fake.one.echo","title":"Echo wrapper"}`)
	is.Equal(res.WorkspaceID, "ws-echo")
	is.Equal(res.Status, "valid")
	is.Equal(res.Revision, 1)
	is.Equal(len(res.Diagnostics), 0)
	is.Equal(res.Summary.Steps, []string{"call", "tool_error"}) // a call step and the error path
	is.Equal(res.Summary.Start, "call")
	is.Equal(res.Summary.Name, "fake_one_echo") // the default name comes from the capability
	is.Equal(res.Summary.StepCount, 2)
	is.Equal(res.Summary.RouteCount, 3) // call.ok, call.error, tool_error.ok
	is.Equal(*res.Title, "Echo wrapper")
	is.Equal(res.WrapperHints.CapabilityName, "fake.one.echo")
	is.True(res.NextActions.CanContinue)

	got := getWorkspace(t, f, "ws-echo")
	is.Equal(got.Revision, 1)
	is.Equal(got.Status, "valid")
	is.Equal(got.Draft["start"], "call") // the draft is stored
	steps := got.Draft["steps"].(map[string]any)
	is.Equal(steps["call"].(map[string]any)["use"], "fake.one.echo")

	list := mustCall[protocol.ListWorkspacesResult](t, f, protocol.MethodWorkspaceList, `{}`)
	is.Equal(len(list.Workspaces), 1)
	is.Equal(list.Workspaces[0].WorkspaceID, "ws-echo")
	is.True(list.Workspaces[0].Draft == nil) // listings leave drafts out
}

func TestCreateFromCapabilityTwiceWithOneIDIsAConflictThatChangesNothing(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-1", "fake.one.echo")
	before := getWorkspace(t, f, "ws-1")

	res := mustCall[protocol.CreateFromCapabilityResult](t, f, protocol.MethodWorkspaceFromCapability,
		`{"workspace_id":"ws-1","capability_name":"fake.one.counter","name":"other"}`)
	is.Equal(res.Status, "conflict")
	is.Equal(codes(res.Diagnostics), []string{"workspace_exists"})
	is.Equal(res.Revision, 1)                                    // the existing workspace's revision
	is.Equal(res.Summary.Name, "fake_one_echo")                  // the answer describes the existing workspace
	is.True(!res.NextActions.CanContinue)                        // nothing to continue from
	is.Equal(jsonOf(getWorkspace(t, f, "ws-1")), jsonOf(before)) // nothing changed
}

func TestCreateFromCapabilityRejectsUnknownCapabilitiesAndBadIDs(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	_, err := f.call(t, protocol.MethodWorkspaceFromCapability, `{"workspace_id":"ws-1","capability_name":"fake.one.nope"}`)
	domainError(t, err, "KeyError")
	_, err = f.call(t, protocol.MethodWorkspaceFromCapability, `{"workspace_id":"ws-1","capability_name":"fake.off.hidden_tool"}`)
	domainError(t, err, "KeyError") // a disabled connection's tool cannot be wrapped

	for _, id := range []string{"", "has space", "slash/id", "ünïcode", "semi;colon"} {
		_, err := f.call(t, protocol.MethodWorkspaceFromCapability, `{"workspace_id":`+jsonOf(id)+`,"capability_name":"fake.one.echo"}`)
		invalidParams(t, err)
	}
	_, err = f.call(t, protocol.MethodWorkspaceFromCapability, `{"workspace_id":"ws-1","capability_name":"fake.one.echo","error_message_source":42}`)
	invalidParams(t, err) // error_message_source is a path string

	list := mustCall[protocol.ListWorkspacesResult](t, f, protocol.MethodWorkspaceList, `{}`)
	is.Equal(len(list.Workspaces), 0) // no failed call created a workspace
}

func TestSetNameAndSetRouteBumpTheRevision(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-1", "fake.one.echo")

	named := mustCall[protocol.WorkspaceResult](t, f, protocol.MethodWorkspaceSetName, `{"workspace_id":"ws-1","revision":1,"name":"renamed"}`)
	is.Equal(named.Revision, 2)
	is.Equal(named.Status, "valid")
	is.Equal(named.Summary.Name, "renamed")

	routed := mustCall[protocol.WorkspaceResult](t, f, protocol.MethodWorkspaceSetRoute,
		`{"workspace_id":"ws-1","revision":2,"step_id":"call","outcome":"error","target":"__end__"}`)
	is.Equal(routed.Revision, 3)
	is.Equal(routed.Status, "valid")
	got := getWorkspace(t, f, "ws-1")
	is.Equal(got.Revision, 3)
	is.Equal(got.Draft["routes"].(map[string]any)["call"].(map[string]any)["error"], "__end__") // the route is stored

	dangling := mustCall[protocol.WorkspaceResult](t, f, protocol.MethodWorkspaceSetRoute,
		`{"workspace_id":"ws-1","revision":3,"step_id":"call","outcome":"ok","target":"later"}`)
	is.Equal(dangling.Revision, 4)       // an invalid edit still commits (forward references)
	is.Equal(dangling.Status, "invalid") // and says why
	is.True(hasCode(dangling.Diagnostics, "unknown_edge_destination"))
}

func TestAStaleRevisionIsAConflictAndLeavesTheDocumentUnchanged(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-1", "fake.one.echo")
	mustCall[protocol.WorkspaceResult](t, f, protocol.MethodWorkspaceSetName, `{"workspace_id":"ws-1","revision":1,"name":"first"}`)
	before := getWorkspace(t, f, "ws-1")

	for method, params := range map[string]string{
		protocol.MethodWorkspaceSetName:         `{"workspace_id":"ws-1","revision":1,"name":"second"}`,
		protocol.MethodWorkspaceSetRoute:        `{"workspace_id":"ws-1","revision":1,"step_id":"call","outcome":"ok","target":"x"}`,
		protocol.MethodWorkspaceSetStart:        `{"workspace_id":"ws-1","revision":3,"step_id":"tool_error"}`,
		protocol.MethodWorkspaceReplaceDocument: `{"workspace_id":"ws-1","revision":1,"draft":{"name":"gone"}}`,
	} {
		res := mustCall[protocol.WorkspaceResult](t, f, method, params)
		is.Equal(res.Status, "conflict")                                // a stale revision conflicts
		is.Equal(codes(res.Diagnostics), []string{"revision_conflict"}) // and says so
		is.Equal(res.Revision, 2)                                       // the answer carries the current revision
		is.Equal(res.Summary.Name, "first")                             // and the current document
	}
	is.Equal(jsonOf(getWorkspace(t, f, "ws-1")), jsonOf(before)) // nothing changed
}

func TestEditingAnUnknownWorkspaceIsAKeyError(t *testing.T) {
	f := newFixture(t)
	_, err := f.call(t, protocol.MethodWorkspaceSetName, `{"workspace_id":"nope","revision":1,"name":"x"}`)
	domainError(t, err, "KeyError")
	_, err = f.call(t, protocol.MethodWorkspaceGet, `{"workspace_id":"nope"}`)
	domainError(t, err, "KeyError")
	_, err = f.call(t, protocol.MethodWorkspaceValidate, `{"workspace_id":"nope"}`)
	domainError(t, err, "KeyError")
}

func TestReplaceDocumentSavesAnInvalidDraftWithDiagnostics(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-1", "fake.one.echo")

	res := mustCall[protocol.WorkspaceResult](t, f, protocol.MethodWorkspaceReplaceDocument,
		`{"workspace_id":"ws-1","revision":1,"draft":{"name":"broken","start":"a","steps":{"a":{"use":"fake.one.nope"}},"routes":{}}}`)
	is.Equal(res.Revision, 2)       // the revision still bumps
	is.Equal(res.Status, "invalid") // the draft is kept as authored, marked invalid
	is.True(hasCode(res.Diagnostics, "unknown_node_def"))
	is.Equal(res.Summary.Steps, []string{"a"})

	got := getWorkspace(t, f, "ws-1")
	is.Equal(got.Revision, 2)
	is.Equal(got.Status, "invalid")
	is.Equal(got.Draft["name"], "broken") // the invalid draft is stored
	is.True(len(got.Diagnostics) > 0)     // with its diagnostics

	garbled := mustCall[protocol.WorkspaceResult](t, f, protocol.MethodWorkspaceReplaceDocument,
		`{"workspace_id":"ws-1","revision":2,"draft":{"steps":"not an object"}}`)
	is.Equal(garbled.Revision, 3)
	is.Equal(garbled.Status, "invalid")
	is.Equal(codes(garbled.Diagnostics), []string{"draft_invalid"}) // a malformed document is a diagnostic, not an error
}

func TestValidateRefreshesTheStatusWithoutBumpingTheRevision(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-1", "web.main.search")

	// The capability disappears from the catalog: the stored status is stale.
	snaps := snapshots()
	web := snaps[2]
	web.Tools = nil
	f.registry.Put(web)
	is.Equal(getWorkspace(t, f, "ws-1").Status, "valid") // reading does not revalidate

	res := mustCall[protocol.WorkspaceResult](t, f, protocol.MethodWorkspaceValidate, `{"workspace_id":"ws-1"}`)
	is.Equal(res.Revision, 1) // validation does not bump
	is.Equal(res.Status, "invalid")
	is.True(hasCode(res.Diagnostics, "unknown_node_def"))
	got := getWorkspace(t, f, "ws-1")
	is.Equal(got.Status, "invalid") // the refreshed status is stored
	is.Equal(got.Revision, 1)

	f.registry.Put(snaps[2])
	again := mustCall[protocol.WorkspaceResult](t, f, protocol.MethodWorkspaceValidate, `{"workspace_id":"ws-1"}`)
	is.Equal(again.Status, "valid") // and recovers once the capability is back
	is.Equal(again.Revision, 1)
	is.Equal(len(again.Diagnostics), 0)
}

func TestDeleteReportsDeletedThenNotFound(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-1", "fake.one.echo")
	first := mustCall[protocol.DeleteWorkspaceResult](t, f, protocol.MethodWorkspaceDelete, `{"workspace_id":"ws-1"}`)
	is.Equal(first, protocol.DeleteWorkspaceResult{WorkspaceID: "ws-1", Deleted: true, Status: "deleted"})
	second := mustCall[protocol.DeleteWorkspaceResult](t, f, protocol.MethodWorkspaceDelete, `{"workspace_id":"ws-1"}`)
	is.Equal(second, protocol.DeleteWorkspaceResult{WorkspaceID: "ws-1", Deleted: false, Status: "not_found"})
	_, err := f.call(t, protocol.MethodWorkspaceGet, `{"workspace_id":"ws-1"}`)
	domainError(t, err, "KeyError") // the workspace is gone
}

func TestConcurrentEditsAtOneRevisionCommitExactlyOnce(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-1", "fake.one.echo")
	const writers = 8
	type answer struct {
		res any
		err error
	}
	answers := make(chan answer, writers)
	setName := f.methods[protocol.MethodWorkspaceSetName].Handler
	ctx := bounded(t)
	for i := range writers {
		go func() {
			res, err := setName(ctx, json.RawMessage(`{"workspace_id":"ws-1","revision":1,"name":"writer-`+string(rune('a'+i))+`"}`))
			answers <- answer{res, err}
		}()
	}
	won := 0
	for range writers {
		select {
		case a := <-answers:
			is.NoErr(a.err) // set_name answers
			r, ok := a.res.(protocol.WorkspaceResult)
			is.True(ok) // a workspace result
			if r.Status != "conflict" {
				won++
				is.Equal(r.Revision, 2) // the winner moved the revision on by one
			}
		case <-time.After(patience):
			is.Fail() // every writer is answered in time
		}
	}
	is.Equal(won, 1)                                 // exactly one writer wins the compare-and-set
	is.Equal(getWorkspace(t, f, "ws-1").Revision, 2) // and the revision moved once
}
