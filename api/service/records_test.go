package service_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/protocol"
)

// inspectedArtifact answers artifacts.inspect of id v1 as a plain JSON object,
// the form workflow.artifacts.save accepts back.
func inspectedArtifact(t *testing.T, f *fixture, id string) map[string]any {
	t.Helper()
	return generic(t, f.raw(t, protocol.MethodArtifactsInspect, `{"artifact_id":"`+id+`","version":1}`))
}

// subgraphParentPlan is a raw plan whose one step runs artifact echo v1 as a
// subgraph.
const subgraphParentPlan = `{"name":"parent","input_schema":{"type":"object"},"state_schema":{"type":"object"},"output_schema":{"type":"object"},
	"start":"child","nodes":[{"id":"child","type":"subgraph","workflow":{"artifact_id":"echo","version":1},
	"input_schema":{"type":"object"},"output_schema":{"type":"object"},"outcomes":["ok"]}],
	"edges":[{"from":"child","outcome":"ok","to":"__end__"}]}`

func TestArtifactsSaveStoresAWholeArtifactAndIsIdempotent(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoArtifact(t, f)
	doc := inspectedArtifact(t, f, "echo")
	doc["id"] = "echo_copy"

	res := conforming[protocol.SaveArtifactResult](t, f, protocol.MethodArtifactsSave, `{"artifact":`+jsonOf(doc)+`}`)
	is.Equal(res, protocol.SaveArtifactResult{ArtifactID: "echo_copy", Version: 1, Saved: true})
	copied := inspectedArtifact(t, f, "echo_copy")
	is.Equal(jsonOf(copied), jsonOf(doc)) // stored exactly as given

	again := conforming[protocol.SaveArtifactResult](t, f, protocol.MethodArtifactsSave, `{"artifact":`+jsonOf(doc)+`}`)
	is.True(again.Saved) // the same content again is idempotent
	original := inspectedArtifact(t, f, "echo")
	again = conforming[protocol.SaveArtifactResult](t, f, protocol.MethodArtifactsSave, `{"artifact":`+jsonOf(original)+`}`)
	is.Equal(again.ArtifactID, "echo") // an inspected artifact saves back unchanged

	doc["title"] = "Another title"
	_, err := f.call(t, protocol.MethodArtifactsSave, `{"artifact":`+jsonOf(doc)+`}`)
	msg := domainError(t, err, "ValueError") // artifacts are immutable
	is.True(strings.Contains(msg, "immutable"))
	is.Equal(inspectedArtifact(t, f, "echo_copy")["title"], original["title"]) // and the saved one is unchanged
}

func TestArtifactsSaveFillsDefaultsAndAcceptsRequirementsByName(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoArtifact(t, f)
	doc := inspectedArtifact(t, f, "echo")
	reqs := doc["required_capabilities"].([]any)
	is.Equal(len(reqs), 1)
	doc["id"] = "echo_min"
	doc["required_capabilities"] = map[string]any{"fake.one.echo": reqs[0]}
	for _, optionalKey := range []string{"kind", "description", "input_schema", "output_schema", "workflow_dependencies", "created_from_catalog_version"} {
		delete(doc, optionalKey)
	}
	conforming[protocol.SaveArtifactResult](t, f, protocol.MethodArtifactsSave, `{"artifact":`+jsonOf(doc)+`}`)

	a := mustCall[protocol.Artifact](t, f, protocol.MethodArtifactsInspect, `{"artifact_id":"echo_min","version":1}`)
	is.Equal(a.Kind, "workflow")                             // the default kind
	is.Equal(a.InputSchema, planOf(t, a.Plan).InputSchema)   // the schemas default to the plan's
	is.Equal(a.OutputSchema, planOf(t, a.Plan).OutputSchema) //
	is.Equal(len(a.RequiredCapabilities), 1)                 // a map of requirements is accepted
	is.Equal(a.RequiredCapabilities[0].Ref.CapabilityKey, "echo")
	is.Equal(len(a.WorkflowDependencies), 0)
}

func TestArtifactsSaveRejectsMalformedArtifacts(t *testing.T) {
	f := newFixture(t)
	echoArtifact(t, f)
	base := inspectedArtifact(t, f, "echo")
	variant := func(change func(map[string]any)) string {
		doc := map[string]any{}
		for k, v := range base {
			doc[k] = v
		}
		doc["id"] = "variant"
		change(doc)
		return `{"artifact":` + jsonOf(doc) + `}`
	}
	for name, params := range map[string]string{
		"unknown key":      variant(func(d map[string]any) { d["surprise"] = true }),
		"no plan":          variant(func(d map[string]any) { delete(d, "plan") }),
		"no outcomes":      variant(func(d map[string]any) { delete(d, "outcomes") }),
		"bad kind":         variant(func(d map[string]any) { d["kind"] = "service" }),
		"version 0":        variant(func(d map[string]any) { d["version"] = 0 }),
		"bad id":           variant(func(d map[string]any) { d["id"] = "no/slash" }),
		"plan not decoded": variant(func(d map[string]any) { d["plan"] = map[string]any{"name": "x"} }),
		"twice required": variant(func(d map[string]any) {
			r := d["required_capabilities"].([]any)
			d["required_capabilities"] = []any{r[0], r[0]}
		}),
		"bad requirement kind": variant(func(d map[string]any) {
			r := d["required_capabilities"].([]any)[0].(map[string]any)
			changed := map[string]any{}
			for k, v := range r {
				changed[k] = v
			}
			changed["kind"] = "gadget"
			d["required_capabilities"] = []any{changed}
		}),
		"no artifact": `{"artifact":null}`,
	} {
		_, err := f.call(t, protocol.MethodArtifactsSave, params)
		if err == nil {
			t.Logf("%s: saved", name)
		}
		invalidParams(t, err)
	}

	badStart := variant(func(d map[string]any) {
		plan := clonePlan(t, d["plan"].(map[string]any))
		plan["start"] = "nowhere"
		d["plan"] = plan
	})
	_, err := f.call(t, protocol.MethodArtifactsSave, badStart)
	domainError(t, err, "ValueError") // a structurally broken plan is refused
	undeclared := variant(func(d map[string]any) { d["outcomes"] = []string{"done"} })
	_, err = f.call(t, protocol.MethodArtifactsSave, undeclared)
	domainError(t, err, "ValueError") // the plan ends with ok, which outcomes must declare
	_, err = f.call(t, protocol.MethodArtifactsInspect, `{"artifact_id":"variant","version":1}`)
	domainError(t, err, "KeyError") // nothing was saved
}

func TestArtifactsDeleteIsRefusedWhileADeploymentUsesTheVersion(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoArtifact(t, f)
	deploy(t, f, `{"id":"d2","artifact_id":"echo","artifact_version":1,"bindings":{"fake.one":"fake.one"}}`)
	deploy(t, f, `{"id":"d1","artifact_id":"echo","artifact_version":1,"bindings":{"fake.one":"fake.one"}}`)

	res := conforming[protocol.DeleteArtifactResult](t, f, protocol.MethodArtifactsDelete, `{"artifact_id":"echo","version":1}`)
	is.Equal(res, protocol.DeleteArtifactResult{ArtifactID: "echo", Version: 1, Deleted: false, BlockedByDeployments: []string{"d1", "d2"}})
	inspectedArtifact(t, f, "echo") // still there

	conforming[protocol.DeleteDeploymentResult](t, f, protocol.MethodDeploymentsDelete, `{"deployment_id":"d1"}`)
	conforming[protocol.DeleteDeploymentResult](t, f, protocol.MethodDeploymentsDelete, `{"deployment_id":"d2"}`)
	res = conforming[protocol.DeleteArtifactResult](t, f, protocol.MethodArtifactsDelete, `{"artifact_id":"echo","version":1}`)
	is.Equal(res, protocol.DeleteArtifactResult{ArtifactID: "echo", Version: 1, Deleted: true, BlockedByDeployments: []string{}})
	_, err := f.call(t, protocol.MethodArtifactsInspect, `{"artifact_id":"echo","version":1}`)
	domainError(t, err, "KeyError") // gone

	_, err = f.call(t, protocol.MethodArtifactsDelete, `{"artifact_id":"echo","version":1}`)
	domainError(t, err, "KeyError") // an unknown version
}

func TestArtifactsDeleteIsRefusedWhileADeploymentRunsTheVersionAsASubgraph(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoArtifact(t, f)
	conforming[protocol.SaveArtifactResult](t, f, protocol.MethodArtifactsSave, `{"artifact":{"id":"parent","version":1,"title":"Parent","outcomes":["ok"],"plan":`+subgraphParentPlan+`}}`)
	deploy(t, f, `{"id":"runs-parent","artifact_id":"parent","artifact_version":1}`)

	res := conforming[protocol.DeleteArtifactResult](t, f, protocol.MethodArtifactsDelete, `{"artifact_id":"echo","version":1}`)
	is.Equal(res.Deleted, false)
	is.Equal(res.BlockedByDeployments, []string{"runs-parent"}) // its runs would load echo v1
}

func TestDeploymentsDeleteDeletesOnceThenIsAKeyError(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	counterDeployment(t, f)
	run := startRun(t, f, `{"deployment_id":"count"}`)

	res := conforming[protocol.DeleteDeploymentResult](t, f, protocol.MethodDeploymentsDelete, `{"deployment_id":"count"}`)
	is.Equal(res, protocol.DeleteDeploymentResult{DeploymentID: "count", Deleted: true})
	_, err := f.call(t, protocol.MethodDeploymentsInspect, `{"deployment_id":"count"}`)
	domainError(t, err, "KeyError")
	_, err = f.call(t, protocol.MethodDeploymentsDelete, `{"deployment_id":"count"}`)
	domainError(t, err, "KeyError") // an unknown deployment

	stored := mustCall[protocol.RunResult](t, f, protocol.MethodRunsInspect, `{"run_id":"`+*run.RunID+`"}`)
	is.Equal(stored.DeploymentID, "count") // its runs keep what they pinned
}
