package service

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/schema"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// maxPrepared bounds how many deployments are kept prepared at once.
const maxPrepared = 1024

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
	at       version
}

// version is what a prepared deployment was resolved against: the
// deployment and artifact records, the catalogs, and the connections.
type version struct{ records, catalogs, sources uint64 }

// preparedDeployments keeps deployments prepared. An entry is used only
// while the version it was resolved at is current; each version counter
// is read before what it guards and bumped after that changes, so an entry
// resolved during a change is never used after it.
type preparedDeployments struct {
	mu      sync.Mutex
	entries map[string]*prepared
	// records is bumped after every write of a deployment or an artifact,
	// sources after every change of the effective connections.
	records, sources atomic.Uint64
}

// get returns the entry of deployment id prepared at v, if any.
func (c *preparedDeployments) get(id string, v version) (*prepared, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.entries[id]
	return p, ok && p.at == v
}

// put keeps p, evicting an arbitrary entry when full.
func (c *preparedDeployments) put(p *prepared) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]*prepared{}
	}
	if _, ok := c.entries[p.deployment.ID]; !ok && len(c.entries) >= maxPrepared {
		for id := range c.entries {
			delete(c.entries, id)
			break
		}
	}
	c.entries[p.deployment.ID] = p
}

// current is the version now.
func (s *Service) current() version {
	v := version{records: s.prepared.records.Load(), sources: s.prepared.sources.Load()}
	if s.Catalogs != nil {
		v.catalogs = s.Catalogs.Version()
	}
	return v
}

// recordsChanged is called after a deployment or an artifact was written.
func (s *Service) recordsChanged() { s.prepared.records.Add(1) }

// setConnections replaces the effective connections.
func (s *Service) setConnections(conns []config.Connection) {
	s.Connections.Set(conns)
	s.prepared.sources.Add(1)
}

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
	p, err := s.resolve(ctx, id, at)
	if err == nil && p.setupErr == nil {
		s.prepared.put(p)
	}
	return p, err
}

// resolve loads deployment id and resolves it against the catalogs and
// connections now, which are at version at or later.
func (s *Service) resolve(ctx context.Context, id string, at version) (*prepared, error) {
	d, a, err := s.deployment(ctx, id)
	if err != nil {
		return nil, err
	}
	p := &prepared{deployment: d, artifact: a, at: at, diags: s.checkDependencies(d, a)}
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
