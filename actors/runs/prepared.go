package runs

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/schema"
)

// Prepared is a deployment made ready to start runs: its record, the
// artifact it pins, its dependency diagnostics, its compiled input schema
// and its run setup, resolved once and shared, read-only, by every run
// start until what it was resolved against changes.
type Prepared struct {
	Deployment  store.Deployment
	Artifact    store.Artifact
	Diagnostics []Diagnostic
	// stored are the diagnostics as the run record keeps them.
	stored []workflow.Object
	// input checks a run's workflow input; inputErr says why the input
	// schema does not compile.
	input    *schema.Compiled
	inputErr error
	// setup is the run setup, or setupErr why there is none.
	setup    *Setup
	setupErr error
}

// Setup is the deployment's run setup, or why it has none.
func (p *Prepared) Setup() (*Setup, error) { return p.setup, p.setupErr }

// version is what a prepared deployment was resolved against: the
// deployment and artifact records, the catalogs, and the connections.
type version struct{ records, catalogs, sources uint64 }

// preparedDeployments keeps deployments prepared, each at the version it
// was resolved at (see versioned).
type preparedDeployments struct {
	versioned[string, version, *Prepared]
	// records is bumped after every write of a deployment or an artifact
	// (the effective connections have their own: Connections.Version).
	records atomic.Uint64
}

// current is the version now.
func (m *Manager) current() version {
	v := version{records: m.prepared.records.Load(), sources: m.cfg.Connections.Version()}
	if m.cfg.Catalogs != nil {
		v.catalogs = m.cfg.Catalogs.Version()
	}
	return v
}

// RecordsChanged is called after a deployment or an artifact was written
// (here or, in a cluster, by another node): what was prepared from the
// records is resolved again.
func (m *Manager) RecordsChanged() { m.prepared.records.Add(1) }

// Prepare returns deployment id ready to start runs: kept from an earlier
// start when nothing it depends on changed since, else resolved now. Only
// a failure to load it is an error. A deployment that cannot run is
// prepared with its diagnostics or setup error, and one whose setup
// failed is not kept: the failure may be passing.
func (m *Manager) Prepare(ctx context.Context, id string) (*Prepared, error) {
	at := m.current()
	if p, ok := m.prepared.get(id, at); ok {
		return p, nil
	}
	p, err := m.Resolve(ctx, id)
	if err == nil && p.setupErr == nil {
		m.prepared.put(id, at, p)
	}
	return p, err
}

// Resolve loads deployment id and resolves it against the catalogs and
// connections now, as Prepare does when it has it not prepared; it keeps
// nothing.
func (m *Manager) Resolve(ctx context.Context, id string) (*Prepared, error) {
	d, a, err := m.Deployment(ctx, id)
	if err != nil {
		return nil, err
	}
	return m.resolve(ctx, d, a)
}

// resolve resolves deployment d, which pins artifact a, against the
// catalogs and connections now, as Resolve does.
func (m *Manager) resolve(ctx context.Context, d store.Deployment, a store.Artifact) (*Prepared, error) {
	var err error
	p := &Prepared{Deployment: d, Artifact: a, Diagnostics: m.Dependencies(d, a)}
	if p.stored, err = storedDiags(p.Diagnostics); err != nil {
		return nil, err
	}
	p.input, p.inputErr = schema.Default.Compile(a.InputSchema)
	p.setup, p.setupErr = m.Setup(ctx, d, a)
	return p, nil
}

// Deployment loads a deployment and the artifact it pins.
func (m *Manager) Deployment(ctx context.Context, id string) (store.Deployment, store.Artifact, error) {
	d, err := m.cfg.Store.GetDeployment(ctx, id)
	if err != nil {
		return d, store.Artifact{}, storeErr(err, fmt.Sprintf("deployment %q", id))
	}
	a, err := m.Artifact(ctx, d.ArtifactID, d.ArtifactVersion)
	if err != nil {
		return d, a, storeErr(err, fmt.Sprintf("artifact %q version %d of deployment %q", d.ArtifactID, d.ArtifactVersion, id))
	}
	return d, a, nil
}
