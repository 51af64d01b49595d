package runs_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
)

// A live check probes each bound, enabled connection an artifact's
// requirements use: one that answers adds nothing, one whose probe fails
// is source_unreachable, naming the logical ref that needs it; a
// requirement of a source the deployment does not bind probes nothing.
func TestLiveCheckProbesTheBoundConnectionsAnArtifactNeeds(t *testing.T) {
	is := is.New(t)
	n := newNode(t, config.Connection{Kind: "mcp", ID: "fake.gone", Transport: config.Transport{Kind: "inmemory"}})
	a := store.Artifact{RequiredCapabilities: []store.RequiredCapability{
		{Ref: store.CapabilityRef{Source: "fake.one", CapabilityKey: "counter"}},
		{Ref: store.CapabilityRef{Source: "gone", CapabilityKey: "echo"}},
		{Ref: store.CapabilityRef{Source: "unbound", CapabilityKey: "echo"}},
	}}
	d := store.Deployment{Bindings: []store.Binding{
		{LogicalSource: "fake.one", ConcreteSource: "fake.one"},
		{LogicalSource: "gone", ConcreteSource: "fake.gone"},
	}}
	diags := n.manager.LiveCheck(bounded(t), d, a)
	is.Equal(len(diags), 1) // fake.one answers; the unbound source is not probed
	is.Equal(diags[0].Code, "source_unreachable")
	is.Equal(diags[0].LogicalRef, "gone.echo")
	is.Equal(*diags[0].BoundSource, "fake.gone")
	is.Equal(len(n.manager.LiveCheck(bounded(t), store.Deployment{}, a)), 0) // nothing bound, nothing probed
}
