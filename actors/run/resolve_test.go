package run_test

import (
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// planUsing is a plan whose call nodes use the given capabilities; Resolve
// only reads them.
func planUsing(capabilities ...string) workflow.Program {
	var p workflow.Plan
	for i, c := range capabilities {
		p.Nodes = append(p.Nodes, workflow.Node{ID: string(rune('a' + i)), Type: workflow.NodeCall, Node: c})
	}
	return workflow.Program{Root: p}
}

// isConnection knows two connections.
func isConnection(id string) bool { return id == "fake.one" || id == "fake.two" }

func TestResolvePicksTheLongestBoundPrefix(t *testing.T) {
	is := is.New(t)
	bindings := []store.Binding{
		{LogicalSource: "crm", ConcreteSource: "fake.one"},
		{LogicalSource: "crm.eu", ConcreteSource: "fake.two"},
	}
	targets, err := run.Resolve(planUsing("crm.lookup", "crm.eu.lookup"), bindings, isConnection)
	is.NoErr(err)
	is.Equal(targets["crm.lookup"], run.Target{Connection: "fake.one", Tool: "lookup"})
	is.Equal(targets["crm.eu.lookup"], run.Target{Connection: "fake.two", Tool: "lookup"}) // not fake.one's "eu.lookup"

	// Binding order does not matter.
	bindings[0], bindings[1] = bindings[1], bindings[0]
	targets, err = run.Resolve(planUsing("crm.eu.lookup"), bindings, isConnection)
	is.NoErr(err)
	is.Equal(targets["crm.eu.lookup"], run.Target{Connection: "fake.two", Tool: "lookup"})
}

func TestResolveMatchesWholeSourceNamesOnly(t *testing.T) {
	is := is.New(t)
	bindings := []store.Binding{{LogicalSource: "crm", ConcreteSource: "fake.one"}}
	_, err := run.Resolve(planUsing("crmx.lookup"), bindings, isConnection)
	is.True(errors.Is(err, run.ErrNotBound)) // "crm" is no prefix of source "crmx"
}

func TestResolveFallsBackToAConnectionNamedDirectly(t *testing.T) {
	is := is.New(t)
	targets, err := run.Resolve(planUsing("fake.one.echo", "fake.two.sleep"), nil, isConnection)
	is.NoErr(err)
	is.Equal(targets["fake.one.echo"], run.Target{Connection: "fake.one", Tool: "echo"})
	is.Equal(targets["fake.two.sleep"], run.Target{Connection: "fake.two", Tool: "sleep"})
}

func TestResolveMapsPlatformCapabilitiesToBuiltins(t *testing.T) {
	is := is.New(t)
	// Even a binding that would claim the name does not shadow a built-in.
	bindings := []store.Binding{{LogicalSource: "wf.std", ConcreteSource: "fake.one"}}
	targets, err := run.Resolve(planUsing(workflow.RuntimeError, "wf.std.constant"), bindings, isConnection)
	is.NoErr(err)
	for _, name := range []string{workflow.RuntimeError, "wf.std.constant"} {
		target := targets[name]
		is.True(target.Builtin != nil) // runs in place
		is.Equal(target.Connection, "")
	}
	outcome, out, err := targets["wf.std.constant"].Builtin(workflow.Object{"value": 7})
	is.NoErr(err)
	is.Equal(outcome, workflow.OutcomeOK)
	is.Equal(out, workflow.Object{"value": 7})
}

func TestResolveFailsWithErrNotBound(t *testing.T) {
	is := is.New(t)
	for _, name := range []string{"nowhere.tool", "wf.std.no_such_builtin", "fake.three.echo"} {
		_, err := run.Resolve(planUsing("fake.one.echo", name), nil, isConnection)
		is.True(errors.Is(err, run.ErrNotBound))
	}
}

func TestResolveOfAPlanWithoutCallsIsEmpty(t *testing.T) {
	is := is.New(t)
	targets, err := run.Resolve(workflow.Program{Root: workflow.Plan{Nodes: []workflow.Node{{ID: "done", Type: workflow.NodeEnd}}}}, nil, isConnection)
	is.NoErr(err)
	is.Equal(len(targets), 0)
}
