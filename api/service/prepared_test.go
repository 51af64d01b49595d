package service

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// codes are the codes of diags.
func codes(diags []runs.Diagnostic) []string {
	out := []string{}
	for _, d := range diags {
		out = append(out, d.Code)
	}
	return out
}

// A deployment is resolved once and reused by every run start, and
// resolved again after a change of anything it was resolved against: the
// deployment itself, the catalogs, the connections.
func TestRunStartsShareOnePreparedDeploymentUntilWhatItUsesChanges(t *testing.T) {
	is := is.New(t)
	s := manySources(t, 10)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	prepare := func() *runs.Prepared {
		t.Helper()
		p, err := s.Runs.Prepare(ctx, "d")
		is.NoErr(err) // the deployment loads
		return p
	}

	first := prepare()
	is.Equal(codes(first.Diagnostics), []string{})
	is.True(prepare() == first) // a second run start reuses the first's resolution

	// The deployment is saved again, bound to another source.
	other := "src00007.default"
	_, err := s.Methods()[protocol.MethodDeploymentsSave].Handler(ctx, json.RawMessage(
		`{"deployment":{"id":"d","artifact_id":"echo","artifact_version":1,"bindings":[{"logical_source":"`+usedSource+`","concrete_source":"`+other+`"}]}}`))
	is.NoErr(err) // the deployment is rebound
	rebound := prepare()
	is.True(rebound != first)
	is.Equal(target(t, rebound, usedSource+".echo").Connection, other) // the next run start calls the new binding
	is.True(prepare() == rebound)

	// The catalog of the bound source loses the tool.
	s.Catalogs.Put(catalog.Snapshot{ConnectionID: other, MaxAgeSeconds: 300, Tools: []catalog.Tool{{Name: "counter"}}})
	is.Equal(codes(prepare().Diagnostics), []string{"capability_missing"}) // the next run start sees the catalog as it is now

	// The bound source is removed from the effective connections.
	kept := s.connections()[:0:0]
	for _, c := range s.connections() {
		if c.ID != other {
			kept = append(kept, c)
		}
	}
	s.Connections.Set(kept)                                            // as an apply does
	is.Equal(codes(prepare().Diagnostics), []string{"source_missing"}) // and the connections as they are now
}

// target is where the setup of prepared deployment p executes capability
// name.
func target(t *testing.T, p *runs.Prepared, name string) run.Target {
	t.Helper()
	is := is.New(t)
	setup, err := p.Setup()
	is.NoErr(err) // the deployment has a run setup
	tg, ok := setup.Target(name)
	is.True(ok) // the setup resolves the capability
	return tg
}

// countingStore counts the artifact reads that reach the store.
type countingStore struct {
	store.Store
	artifactReads atomic.Int64
}

func (c *countingStore) GetArtifact(ctx context.Context, id string, version int) (store.Artifact, error) {
	c.artifactReads.Add(1)
	return c.Store.GetArtifact(ctx, id, version)
}

// Deployments of one artifact version share it: it is read from the store
// once, and its program built once, until an artifact is deleted.
func TestDeploymentsOfOneArtifactReadItOnce(t *testing.T) {
	is := is.New(t)
	counted := &countingStore{Store: store.NewMemory()}
	s := manySourcesOn(t, 10, counted)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := s.Methods()[protocol.MethodDeploymentsSave].Handler(ctx, json.RawMessage(
		`{"deployment":{"id":"d2","artifact_id":"echo","artifact_version":1,"bindings":[{"logical_source":"`+usedSource+`","concrete_source":"`+usedSource+`"}]}}`))
	is.NoErr(err) // a second deployment of the artifact
	counted.artifactReads.Store(0)

	for _, id := range []string{"d", "d2", "d", "d2"} {
		p, err := s.Runs.Prepare(ctx, id)
		is.NoErr(err)
		_, err = p.Setup()
		is.NoErr(err)
	}
	is.Equal(counted.artifactReads.Load(), int64(1)) // both deployments' run starts read the artifact once

	s.recordsChanged() // as after an artifact is deleted
	_, err = s.Runs.Prepare(ctx, "d")
	is.NoErr(err)
	is.Equal(counted.artifactReads.Load(), int64(2)) // and again after a change of the records
}
