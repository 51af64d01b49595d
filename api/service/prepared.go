package service

import (
	"context"
	"sync/atomic"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/schema"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// prepared is a deployment made ready to start runs: its record, the
// artifact it pins, its dependency diagnostics, its compiled input schema
// and its run setup, resolved once and shared, read-only, by every run
// start until what it was resolved against changes.
type prepared struct {
	deployment store.Deployment
	artifact   store.Artifact
	diags      []protocol.DependencyDiag
	// stored are diags as the run record keeps them.
	stored []workflow.Object
	// input checks a run's workflow input; inputErr says why the input
	// schema does not compile.
	input    *schema.Compiled
	inputErr error
	// setup is the run setup, or setupErr why there is none.
	setup    runSetup
	setupErr error
}

// version is what a prepared deployment was resolved against: the
// deployment and artifact records, the catalogs, and the connections.
type version struct{ records, catalogs, sources uint64 }

// preparedDeployments keeps deployments prepared, each at the version it
// was resolved at (see versioned).
type preparedDeployments struct {
	versioned[string, version, *prepared]
	// records is bumped after every write of a deployment or an artifact
	// (the effective connections have their own: Connections.Version).
	records atomic.Uint64
}

// current is the version now.
func (s *Service) current() version {
	v := version{records: s.prepared.records.Load(), sources: s.Connections.Version()}
	if s.Catalogs != nil {
		v.catalogs = s.Catalogs.Version()
	}
	return v
}

// recordsChanged is called after a deployment or an artifact was written.
func (s *Service) recordsChanged() { s.prepared.records.Add(1) }

// setConnections replaces the effective connections.
func (s *Service) setConnections(conns []config.Connection) { s.Connections.Set(conns) }

// prepare returns deployment id ready to start runs: kept from an earlier
// start when nothing it depends on changed since, else resolved now. Only
// a failure to load it is an error. A deployment that cannot run is
// prepared with its diagnostics or setup error, and one whose setup
// failed is not kept: the failure may be passing.
func (s *Service) prepare(ctx context.Context, id string) (*prepared, error) {
	at := s.current()
	if p, ok := s.prepared.get(id, at); ok {
		return p, nil
	}
	p, err := s.resolve(ctx, id)
	if err == nil && p.setupErr == nil {
		s.prepared.put(id, at, p)
	}
	return p, err
}

// resolve loads deployment id and resolves it against the catalogs and
// connections now.
func (s *Service) resolve(ctx context.Context, id string) (*prepared, error) {
	d, a, err := s.deployment(ctx, id)
	if err != nil {
		return nil, err
	}
	p := &prepared{deployment: d, artifact: a, diags: s.checkDependencies(d, a)}
	if p.stored, err = storedDiags(p.diags); err != nil {
		return nil, err
	}
	p.input, p.inputErr = schema.Default.Compile(a.InputSchema)
	p.setup, p.setupErr = s.setup(ctx, d, a)
	return p, nil
}

// storedDiags are diagnostics as a run record keeps them.
func storedDiags(diags []protocol.DependencyDiag) ([]workflow.Object, error) {
	stored := make([]workflow.Object, 0, len(diags))
	for _, dg := range diags {
		obj, err := toObject(dg)
		if err != nil {
			return nil, err
		}
		stored = append(stored, obj)
	}
	return stored, nil
}
