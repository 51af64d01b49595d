package service_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// echoArtifact saves artifact "echo" v1 wrapping fake.one.echo.
func echoArtifact(t *testing.T, f *fixture) {
	t.Helper()
	scaffold(t, f, "ws-echo", "fake.one.echo")
	saveArtifact(t, f, "ws-echo", "echo", "")
}

// deploy saves a deployment document (a JSON object).
func deploy(t *testing.T, f *fixture, doc string) protocol.SaveDeploymentResult {
	t.Helper()
	is := is.New(t)
	is.Helper()
	res := mustCall[protocol.SaveDeploymentResult](t, f, protocol.MethodDeploymentsSave, `{"deployment":`+doc+`}`)
	is.True(res.Saved) // the deployment is saved
	return res
}

func validate(t *testing.T, f *fixture, id string) protocol.ValidateDeploymentResult {
	t.Helper()
	return mustCall[protocol.ValidateDeploymentResult](t, f, protocol.MethodDeploymentsValidate, `{"deployment_id":"`+id+`"}`)
}

func diagCodes(diags []protocol.DependencyDiag) []string {
	out := make([]string, 0, len(diags))
	for _, d := range diags {
		out = append(out, d.Severity+":"+d.Code)
	}
	return out
}

func TestDeploymentsSaveAcceptsIdOrDeploymentIdButNotBoth(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoArtifact(t, f)

	byID := deploy(t, f, `{"id":"d1","artifact_id":"echo","artifact_version":1,"bindings":[]}`)
	is.Equal(byID, protocol.SaveDeploymentResult{DeploymentID: "d1", ArtifactID: "echo", ArtifactVersion: 1, Saved: true})
	byDeploymentID := deploy(t, f, `{"deployment_id":"d2","artifact_id":"echo","artifact_version":1}`)
	is.Equal(byDeploymentID.DeploymentID, "d2")

	_, err := f.call(t, protocol.MethodDeploymentsSave, `{"deployment":{"id":"d3","deployment_id":"d3","artifact_id":"echo","artifact_version":1}}`)
	invalidParams(t, err) // both names at once
	_, err = f.call(t, protocol.MethodDeploymentsSave, `{"deployment":{"artifact_id":"echo","artifact_version":1}}`)
	invalidParams(t, err) // neither
	_, err = f.call(t, protocol.MethodDeploymentsSave, `{"deployment":{"id":"d3","artifact_id":"echo","artifact_version":1,"colour":"red"}}`)
	invalidParams(t, err) // unknown keys in the deployment
	_, err = f.call(t, protocol.MethodDeploymentsSave, `{"deployment":{"id":"d3","artifact_id":"echo","artifact_version":0}}`)
	invalidParams(t, err) // versions start at 1

	d := mustCall[protocol.Deployment](t, f, protocol.MethodDeploymentsInspect, `{"deployment_id":"d2"}`)
	is.Equal(d.DriftPolicy, "block")           // the default drift policy
	is.Equal(d.Bindings, []protocol.Binding{}) // no bindings is an empty list
	list := mustCall[protocol.ListDeploymentsResult](t, f, protocol.MethodDeploymentsList, `{}`)
	is.Equal(len(list.Deployments), 2) // d3 was never saved
}

func TestDeploymentsSaveAcceptsBindingsAsAListOrAMap(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoArtifact(t, f)

	deploy(t, f, `{"id":"as-list","artifact_id":"echo","artifact_version":1,"bindings":[{"logical_source":"fake.one","concrete_source":"fake.one"}]}`)
	deploy(t, f, `{"id":"as-map","artifact_id":"echo","artifact_version":1,"bindings":{"zeta":"web.main","fake.one":"fake.one"},"drift_policy":"warn"}`)

	list := mustCall[protocol.Deployment](t, f, protocol.MethodDeploymentsInspect, `{"deployment_id":"as-list"}`)
	is.Equal(list.Bindings, []protocol.Binding{{LogicalSource: "fake.one", ConcreteSource: "fake.one"}})
	m := mustCall[protocol.Deployment](t, f, protocol.MethodDeploymentsInspect, `{"deployment_id":"as-map"}`)
	is.Equal(m.Bindings, []protocol.Binding{{LogicalSource: "fake.one", ConcreteSource: "fake.one"}, {LogicalSource: "zeta", ConcreteSource: "web.main"}}) // a map becomes a list sorted by logical source
	is.Equal(m.DriftPolicy, "warn")

	summaries := mustCall[protocol.ListDeploymentsResult](t, f, protocol.MethodDeploymentsList, `{}`)
	is.Equal(summaries.Deployments, []protocol.DeploymentSummary{
		{ID: "as-list", ArtifactID: "echo", ArtifactVersion: 1, BindingCount: 1, DriftPolicy: "block"},
		{ID: "as-map", ArtifactID: "echo", ArtifactVersion: 1, BindingCount: 2, DriftPolicy: "warn"},
	})
}

func TestDeploymentsSaveRejectsBadBindingsPoliciesAndArtifacts(t *testing.T) {
	f := newFixture(t)
	echoArtifact(t, f)
	for _, doc := range []string{
		`{"id":"d","artifact_id":"echo","artifact_version":1,"bindings":[{"logical_source":"a","concrete_source":"fake.one"},{"logical_source":"a","concrete_source":"web.main"}]}`,
		`{"id":"d","artifact_id":"echo","artifact_version":1,"bindings":[{"logical_source":"a"}]}`,
		`{"id":"d","artifact_id":"echo","artifact_version":1,"bindings":{"a":""}}`,
		`{"id":"d","artifact_id":"echo","artifact_version":1,"bindings":[{"logical_source":"a","concrete_source":"b","extra":1}]}`,
		`{"id":"d","artifact_id":"echo","artifact_version":1,"bindings":"fake.one"}`,
		`{"id":"d","artifact_id":"echo","artifact_version":1,"drift_policy":"ignore"}`,
		`{"id":"bad id","artifact_id":"echo","artifact_version":1}`,
	} {
		_, err := f.call(t, protocol.MethodDeploymentsSave, `{"deployment":`+doc+`}`)
		invalidParams(t, err)
	}
	_, err := f.call(t, protocol.MethodDeploymentsSave, `{"deployment":{"id":"d","artifact_id":"nope","artifact_version":1}}`)
	domainError(t, err, "KeyError") // the artifact must exist
	_, err = f.call(t, protocol.MethodDeploymentsSave, `{"deployment":{"id":"d","artifact_id":"echo","artifact_version":2}}`)
	domainError(t, err, "KeyError") // and so must the version
	_, err = f.call(t, protocol.MethodDeploymentsInspect, `{"deployment_id":"d"}`)
	domainError(t, err, "KeyError") // nothing was saved
	_, err = f.call(t, protocol.MethodDeploymentsValidate, `{"deployment_id":"d"}`)
	domainError(t, err, "KeyError")
}

func TestDeploymentsValidateReportsEachBrokenDependency(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoArtifact(t, f)
	for _, tc := range []struct {
		name, bindings, code string
		bound                *string
	}{
		{"binding_missing", `[]`, "binding_missing", nil},
		{"source_missing", `{"fake.one":"nowhere.one"}`, "source_missing", ptr("nowhere.one")},
		{"source_disabled", `{"fake.one":"fake.off"}`, "source_disabled", ptr("fake.off")},
		{"capability_missing", `{"fake.one":"web.main"}`, "capability_missing", ptr("web.main")},
	} {
		deploy(t, f, `{"id":"`+tc.name+`","artifact_id":"echo","artifact_version":1,"bindings":`+tc.bindings+`}`)
		res := validate(t, f, tc.name)
		is.Equal(res.Status, "unrunnable")                                 // an error diagnostic makes it unrunnable
		is.Equal(diagCodes(res.Diagnostics), []string{"error:" + tc.code}) // one error, of the right kind
		dg := res.Diagnostics[0]
		is.Equal(dg.LogicalRef, "fake.one.echo")
		is.Equal(jsonOf(dg.BoundSource), jsonOf(tc.bound)) // the bound source, if any
		is.True(dg.RepairHint != nil && *dg.RepairHint != "")
		is.True(dg.Message != "")
		is.Equal(res.DeploymentID, tc.name)
		is.Equal(res.ArtifactID, "echo")
		is.Equal(*res.NextActions.RecommendedNextTool, protocol.MethodDeploymentsValidate)
	}
}

func TestDeploymentsValidateWarnsButRunsWhenTheCatalogIsMissing(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoArtifact(t, f)
	deploy(t, f, `{"id":"d","artifact_id":"echo","artifact_version":1,"bindings":{"fake.one":"spare.one"}}`)
	res := validate(t, f, "d")
	is.Equal(res.Status, "runnable") // a warning does not block
	is.Equal(diagCodes(res.Diagnostics), []string{"warning:catalog_missing"})
	is.Equal(*res.Diagnostics[0].BoundSource, "spare.one")

	ok := deploy(t, f, `{"id":"ok","artifact_id":"echo","artifact_version":1,"bindings":{"fake.one":"fake.one"}}`)
	clean := validate(t, f, ok.DeploymentID)
	is.Equal(clean.Status, "runnable")
	is.Equal(len(clean.Diagnostics), 0) // a sound deployment has no diagnostics
	is.Equal(*clean.NextActions.RecommendedNextTool, protocol.MethodRunsStart)
}

func TestDeploymentsValidateAppliesTheDriftPolicyWhenAToolSchemaChanged(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoArtifact(t, f)
	for _, policy := range []string{"block", "warn", "allow"} {
		deploy(t, f, `{"id":"`+policy+`","artifact_id":"echo","artifact_version":1,"bindings":{"fake.one":"fake.one"},"drift_policy":"`+policy+`"}`)
		is.Equal(len(validate(t, f, policy).Diagnostics), 0) // no drift before the change
	}

	// The upstream changes echo's input schema after the artifact was saved.
	changed := snapshots()[0]
	echo := echoTool()
	echo.InputSchema = obj("type", "object", "properties", obj("message", obj("type", "string"), "loud", obj("type", "boolean")), "required", []any{"message"})
	changed.Tools = []catalog.Tool{counterTool(), echo, failTool()}
	f.registry.Put(changed)

	block := validate(t, f, "block")
	is.Equal(block.Status, "unrunnable")
	is.Equal(diagCodes(block.Diagnostics), []string{"error:schema_changed"}) // drift is an error under block
	is.Equal(*block.Diagnostics[0].BoundSource, "fake.one")
	is.Equal(block.Diagnostics[0].LogicalRef, "fake.one.echo")

	warn := validate(t, f, "warn")
	is.Equal(warn.Status, "runnable")
	is.Equal(diagCodes(warn.Diagnostics), []string{"warning:schema_changed"}) // a warning under warn

	allow := validate(t, f, "allow")
	is.Equal(allow.Status, "runnable")
	is.Equal(len(allow.Diagnostics), 0) // nothing under allow

	started := mustCall[protocol.RunResult](t, f, protocol.MethodRunsStart, `{"deployment_id":"block","workflow_input":{"message":"hi"}}`)
	is.Equal(started.Status, "unrunnable") // runs.start applies the same policy
	is.Equal(diagCodes(started.Diagnostics), []string{"error:schema_changed"})
}

func ptr[T any](v T) *T { return &v }

func TestDeploymentsValidateForbidsRebindingThePlatformSource(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoArtifact(t, f)
	deploy(t, f, `{"id":"d","artifact_id":"echo","artifact_version":1,"bindings":{"fake.one":"fake.one","wf.std":"web.main"}}`)
	res := validate(t, f, "d")
	is.Equal(res.Status, "unrunnable")
	is.Equal(diagCodes(res.Diagnostics), []string{"error:platform_binding_forbidden"})
}

// deployments.validate shows the artifact's plan warnings, an error
// routed straight to the end among them, and they do not make it
// unrunnable; a scaffold's artifact has none.
func TestDeploymentsValidateShowsAnErrorRoutedToTheEnd(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoArtifact(t, f)
	deploy(t, f, `{"id":"scaffolded","artifact_id":"echo","artifact_version":1,"bindings":{"fake.one":"fake.one"}}`)
	is.Equal(diagCodes(validate(t, f, "scaffolded").Diagnostics), []string{}) // the scaffold routes error to a failing step

	scaffold(t, f, "ws-ended", "fake.one.echo")
	stepEdit(t, f, protocol.MethodWorkspaceBranch, `{"workspace_id":"ws-ended","revision":1,"step_id":"call","routes":{"error":"__end__"}}`)
	stepEdit(t, f, protocol.MethodWorkspaceRemoveStep, `{"workspace_id":"ws-ended","revision":2,"step_id":"tool_error"}`)
	saveArtifact(t, f, "ws-ended", "ended", "")
	deploy(t, f, `{"id":"ended","artifact_id":"ended","artifact_version":1,"bindings":{"fake.one":"fake.one"}}`)
	res := validate(t, f, "ended")
	is.Equal(res.Status, "runnable") // a warning informs
	is.Equal(diagCodes(res.Diagnostics), []string{"warning:error_routed_to_end"})
	is.Equal(res.Diagnostics[0].LogicalRef, "call") // the step whose error ends the run
	is.True(res.Diagnostics[0].RepairHint != nil)
}
