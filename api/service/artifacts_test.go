package service_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// saveArtifact saves workspace ws as artifact id version 1 with outcomes
// ["ok"] and any extra params (a JSON fragment starting with a comma).
func saveArtifact(t *testing.T, f *fixture, ws, id, extra string) protocol.SavedArtifact {
	t.Helper()
	is := is.New(t)
	is.Helper()
	res := mustCall[protocol.SavedArtifact](t, f, protocol.MethodWorkspaceCreateArtifact,
		`{"workspace_id":"`+ws+`","artifact_id":"`+id+`","version":1,"title":"T","outcomes":["ok"]`+extra+`}`)
	is.True(res.Saved) // the artifact is saved
	return res
}

func TestCreateArtifactSavesTheRequirementsAndSuggestsBindings(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-echo", "fake.one.echo")
	res := mustCall[protocol.SavedArtifact](t, f, protocol.MethodWorkspaceCreateArtifact,
		`{"workspace_id":"ws-echo","artifact_id":"echo","version":1,"title":"Echo","outcomes":["ok"],"description":"echoes"}`)
	is.Equal(res, protocol.SavedArtifact{
		ArtifactID: "echo", Version: 1, Saved: true,
		RequiredLogicalSources: []string{"fake.one"},                      // wf.std built-ins need no binding
		SuggestedBindings:      map[string]string{"fake.one": "fake.one"}, // a configured, enabled connection of that name
	})

	a := mustCall[protocol.Artifact](t, f, protocol.MethodArtifactsInspect, `{"artifact_id":"echo","version":1}`)
	is.Equal(a.Kind, "workflow") // the default kind
	is.Equal(a.Outcomes, []string{"ok"})
	is.Equal(a.InputSchema["required"], []any{"message"})
	is.Equal(len(a.RequiredCapabilities), 1) // only the tool: built-ins are not requirements
	req := a.RequiredCapabilities[0]
	is.Equal(req.Ref.Source, "fake.one")
	is.Equal(req.Ref.CapabilityKey, "echo")
	is.Equal(req.Kind, "node_spec")
	inHash, err := catalog.SchemaHash(echoTool().InputSchema)
	is.NoErr(err)
	is.Equal(*req.InputSchemaHash, inHash) // the observed input schema's hash
	is.Equal(*req.ObservedConcreteSource, "fake.one")
	is.True(req.ObservedAtEpochMs != nil)

	list := mustCall[protocol.ListArtifactsResult](t, f, protocol.MethodArtifactsList, `{}`)
	is.Equal(list.Total, 1)
	is.Equal(list.Nodes[0].Name, "workflow.echo.v1")
	is.Equal(list.Nodes[0].RequiredSources, []string{"fake.one"})
}

func TestCreateArtifactFromAnInvalidWorkspaceSavesNothing(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-1", "fake.one.echo")
	mustCall[protocol.WorkspaceResult](t, f, protocol.MethodWorkspaceSetRoute,
		`{"workspace_id":"ws-1","revision":1,"step_id":"call","outcome":"ok","target":"nowhere"}`)

	res := mustCall[protocol.CreateArtifactResult](t, f, protocol.MethodWorkspaceCreateArtifact,
		`{"workspace_id":"ws-1","artifact_id":"a1","version":1,"title":"T","outcomes":["ok"]}`)
	is.True(!res.Saved) // saved: false
	is.Equal(res.Status, "invalid")
	is.Equal(res.WorkspaceID, "ws-1")
	is.Equal(res.Revision, 2)
	is.True(hasCode(res.Diagnostics, "unknown_edge_destination")) // the diagnostics say why

	_, err := f.call(t, protocol.MethodArtifactsInspect, `{"artifact_id":"a1","version":1}`)
	domainError(t, err, "KeyError") // nothing was saved
}

func TestCreateArtifactFromAnUnknownWorkspaceIsAKeyError(t *testing.T) {
	f := newFixture(t)
	_, err := f.call(t, protocol.MethodWorkspaceCreateArtifact, `{"workspace_id":"nope","artifact_id":"a1","version":1,"title":"T","outcomes":["ok"]}`)
	domainError(t, err, "KeyError")
	_, err = f.call(t, protocol.MethodWorkspaceCreateArtifact, `{"workspace_id":"nope","artifact_id":"bad id","version":1,"title":"T","outcomes":["ok"]}`)
	invalidParams(t, err) // artifact ids are record ids
}

func TestSavingTheSameArtifactAgainFromTheSameWorkspaceIsIdempotent(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	f.svc.Now = ticking() // every save observes the catalog at a later time
	scaffold(t, f, "ws-1", "fake.one.echo")
	saveArtifact(t, f, "ws-1", "a1", "")
	first := mustCall[protocol.Artifact](t, f, protocol.MethodArtifactsInspect, `{"artifact_id":"a1","version":1}`)

	again := saveArtifact(t, f, "ws-1", "a1", "")
	is.True(again.Saved) // the same content again is accepted
	is.Equal(again.RequiredLogicalSources, []string{"fake.one"})
	is.Equal(jsonOf(mustCall[protocol.Artifact](t, f, protocol.MethodArtifactsInspect, `{"artifact_id":"a1","version":1}`)), jsonOf(first)) // and the stored artifact is unchanged
}

func TestSavingAnArtifactVersionFromAChangedWorkspaceViolatesImmutability(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-1", "fake.one.echo")
	saveArtifact(t, f, "ws-1", "a1", "")
	first := mustCall[protocol.Artifact](t, f, protocol.MethodArtifactsInspect, `{"artifact_id":"a1","version":1}`)
	mustCall[protocol.WorkspaceResult](t, f, protocol.MethodWorkspaceSetName, `{"workspace_id":"ws-1","revision":1,"name":"changed"}`)

	_, err := f.call(t, protocol.MethodWorkspaceCreateArtifact, `{"workspace_id":"ws-1","artifact_id":"a1","version":1,"title":"T","outcomes":["ok"]}`)
	msg := domainError(t, err, "ValueError")
	is.True(strings.Contains(msg, "immutable"))                                                                                             // the message explains artifacts are immutable
	is.Equal(jsonOf(mustCall[protocol.Artifact](t, f, protocol.MethodArtifactsInspect, `{"artifact_id":"a1","version":1}`)), jsonOf(first)) // the saved version is untouched

	v2 := mustCall[protocol.SavedArtifact](t, f, protocol.MethodWorkspaceCreateArtifact, `{"workspace_id":"ws-1","artifact_id":"a1","version":2,"title":"T","outcomes":["ok"]}`)
	is.True(v2.Saved) // a new version is the way forward
	list := mustCall[protocol.ListArtifactsResult](t, f, protocol.MethodArtifactsList, `{}`)
	is.Equal(list.Total, 2)
}

func TestCreateArtifactChecksTheDeclaredOutcomes(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-1", "fake.one.echo")

	_, err := f.call(t, protocol.MethodWorkspaceCreateArtifact, `{"workspace_id":"ws-1","artifact_id":"a1","version":1,"title":"T","outcomes":["done"]}`)
	msg := domainError(t, err, "ValueError") // the plan ends with "ok", which is not declared
	is.True(strings.Contains(msg, `"ok"`))   // the message names the undeclared outcome

	_, err = f.call(t, protocol.MethodWorkspaceCreateArtifact, `{"workspace_id":"ws-1","artifact_id":"a1","version":1,"title":"T","outcomes":["ok","ok"]}`)
	invalidParams(t, err) // duplicate outcomes
	_, err = f.call(t, protocol.MethodWorkspaceCreateArtifact, `{"workspace_id":"ws-1","artifact_id":"a1","version":1,"title":"T","outcomes":["ok"," "]}`)
	invalidParams(t, err) // blank outcomes
	_, err = f.call(t, protocol.MethodWorkspaceCreateArtifact, `{"workspace_id":"ws-1","artifact_id":"a1","version":1,"title":"T","outcomes":[]}`)
	invalidParams(t, err) // no outcomes

	ok := saveArtifact(t, f, "ws-1", "a1", "")
	is.True(ok.Saved) // none of the failed attempts blocked the id
}

func TestSourceBindingsRewriteTheStepsToTheLogicalSource(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-1", "fake.one.counter")
	res := saveArtifact(t, f, "ws-1", "a1", `,"source_bindings":{"counter_src":"fake.one"}`)
	is.Equal(res.RequiredLogicalSources, []string{"counter_src"})
	is.Equal(res.SuggestedBindings, map[string]string{}) // no connection is named counter_src

	a := mustCall[protocol.Artifact](t, f, protocol.MethodArtifactsInspect, `{"artifact_id":"a1","version":1}`)
	uses := map[string]string{}
	for _, n := range planOf(t, a.Plan).Nodes {
		uses[n.ID] = n.Node
	}
	is.Equal(uses["call"], "counter_src.counter")        // the tool step names the logical source
	is.Equal(uses["tool_error"], "wf.std.runtime_error") // built-ins keep their name
	is.Equal(len(a.RequiredCapabilities), 1)
	req := a.RequiredCapabilities[0]
	is.Equal(req.Ref, protocol.CapabilityRef{Source: "counter_src", CapabilityKey: "counter"})
	is.Equal(*req.ObservedConcreteSource, "fake.one") // observed through the binding
	is.True(req.OutputSchemaHash != nil)
}
