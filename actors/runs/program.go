package runs

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/schema"
)

// maxSubgraphArtifacts bounds the subgraph tree one run loads.
const maxSubgraphArtifacts = 256

// program is an artifact's plan with every child plan its subgraphs
// reference, recursively, checked and indexed once (see loadProgram) and
// kept with the artifact version.
func (m *Manager) program(ctx context.Context, a store.Artifact) (workflow.Program, error) {
	return m.cachedProgram(a, func() (workflow.Program, error) { return m.loadProgram(ctx, a) })
}

// loadProgram loads an artifact's plan with every child plan its
// subgraphs reference, recursively; a reference cycle or a missing child
// is an error.
func (m *Manager) loadProgram(ctx context.Context, a store.Artifact) (workflow.Program, error) {
	p := workflow.Program{Root: a.Plan, Children: map[string]workflow.Plan{}}
	var load func(plan workflow.Plan, path []string) error
	load = func(plan workflow.Plan, path []string) error {
		for _, ref := range plan.Subgraphs() {
			key := ref.Key()
			for _, k := range path {
				if k == key {
					return invalid("subgraph cycle: %v -> %s", path, key)
				}
			}
			if _, done := p.Children[key]; done {
				continue
			}
			if ref.ArtifactID == nil || ref.Version == nil {
				return invalid("subgraph %s: only saved artifacts ({artifact_id, version}) can run", key)
			}
			if len(p.Children) >= maxSubgraphArtifacts {
				return invalid("more than %d subgraph artifacts", maxSubgraphArtifacts)
			}
			child, err := m.Artifact(ctx, *ref.ArtifactID, *ref.Version)
			if err != nil {
				return storeErr(err, fmt.Sprintf("subgraph artifact %s", key))
			}
			p.Children[key] = child.Plan
			if err := load(child.Plan, append(path, key)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := load(a.Plan, []string{a.ID + "@" + fmt.Sprint(a.Version)}); err != nil {
		return workflow.Program{}, err
	}
	// Checked and indexed once, for all the runs of this setup. An invalid
	// plan stays unprepared: each of its runs fails on it, recorded.
	if ready, err := p.Prepare(); err == nil {
		p = ready
	}
	return p, nil
}

// Setup is how the runs of one deployment run: what a run actor needs
// beyond its record. It is shared, read only.
type Setup struct {
	program workflow.Program
	targets map[string]run.Target
	sources func(logical string) (string, bool)
	// sessions are the session scopes the deployment's bindings ask for
	// (store.SessionDeployment, store.SessionRun), by connection; a
	// connection missing here uses its shared session.
	sessions map[string]string
	// strict are the connections whose bindings say
	// "on_session_replaced": "fail".
	strict  map[string]bool
	options workflow.Options
	// timeout is each run's overall deadline from its start, 0 for none.
	timeout time.Duration
}

// Setup resolves a deployment's program: its targets under the
// deployment's bindings, and the execution options that enforce each
// capability's schemas.
func (m *Manager) Setup(ctx context.Context, d store.Deployment, a store.Artifact) (*Setup, error) {
	prog, err := m.program(ctx, a)
	if err != nil {
		return nil, err
	}
	return m.setupOf(d, prog)
}

// setupOf resolves program prog under deployment d's bindings.
func (m *Manager) setupOf(d store.Deployment, prog workflow.Program) (*Setup, error) {
	targets, err := run.Resolve(prog, d.Bindings, m.isConnection)
	if err != nil {
		return nil, invalid("deployment %q: %v", d.ID, err)
	}
	// The contracts of what the program calls, as the catalogs have them
	// now: found through the registry's indexes, so that a run start costs
	// what its program uses, however many sources are configured.
	byName := make(map[string]catalog.Capability, len(targets))
	for name, t := range targets {
		var c catalog.Capability
		var ok bool
		if t.Builtin != nil || t.Resource {
			c, ok = workflow.BuiltinCapability(name)
		} else if m.cfg.Connections.Enabled(t.Connection) {
			c, ok = m.cfg.Catalogs.Tool(t.Connection, t.Tool)
		}
		if ok {
			byName[name] = c
		}
	}
	contracts := func(name string) (catalog.Capability, bool) {
		c, ok := byName[name]
		return c, ok
	}
	bound, sessions := map[string]string{}, map[string]string{}
	var strict map[string]bool
	for _, b := range d.Bindings {
		bound[b.LogicalSource] = b.ConcreteSource
		if b.Session == store.SessionDeployment || b.Session == store.SessionRun || b.Session == store.SessionClient {
			sessions[b.ConcreteSource] = b.Session
		}
		if b.OnSessionReplaced == store.OnReplacedFail {
			if strict == nil {
				strict = map[string]bool{}
			}
			strict[b.ConcreteSource] = true
		}
	}
	sources := func(logical string) (string, bool) {
		if conn, ok := bound[logical]; ok {
			return conn, true
		}
		return logical, m.isConnection(logical)
	}
	setup := &Setup{
		program: prog, targets: targets, sources: sources, sessions: sessions, strict: strict, timeout: m.cfg.RunDeadline,
		options: workflow.Options{MaxSteps: m.stepBudget(d), Capability: contracts, Validate: schema.Default.Validate, MaxOutputBytes: m.cfg.MaxOutputBytes},
	}
	if l := d.Limits; l != nil && l.RunTimeoutSeconds != nil {
		setup.timeout = time.Duration(*l.RunTimeoutSeconds) * time.Second
	}
	return setup, nil
}

// scopes are the session scopes of run rec's calls, by connection: its
// deployment's or its own, as the bindings ask.
func (r *Setup) scopes(rec store.Run) map[string]string {
	if len(r.sessions) == 0 {
		return nil
	}
	out := make(map[string]string, len(r.sessions))
	for conn, kind := range r.sessions {
		switch kind {
		case store.SessionRun:
			out[conn] = supervisor.RunScope(rec.ID)
		case store.SessionClient:
			out[conn] = supervisor.ClientScope(rec.ClientSession)
		default:
			out[conn] = supervisor.DeploymentScope(rec.DeploymentID)
		}
	}
	return out
}

// deadline is the run deadline from now, or zero when runs have none.
func (r *Setup) deadline(now time.Time) time.Time {
	if r.timeout <= 0 {
		return time.Time{}
	}
	return now.Add(r.timeout)
}

// Target is where the runs of the setup execute capability name.
func (r *Setup) Target(name string) (run.Target, bool) {
	t, ok := r.targets[name]
	return t, ok
}

// Capability is the contract of capability name as the setup enforces it.
func (r *Setup) Capability(name string) (catalog.Capability, bool) {
	return r.options.Capability(name)
}

// InterruptStep finds an interrupt step anywhere in the setup's program.
func (r *Setup) InterruptStep() (string, bool) {
	p := r.program
	keys := make([]string, 0, len(p.Children))
	for k := range p.Children {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	plans := []workflow.Plan{p.Root}
	for _, k := range keys {
		plans = append(plans, p.Children[k])
	}
	for _, plan := range plans {
		for _, n := range plan.Nodes {
			if n.Type == workflow.NodeInterrupt {
				return n.ID, true
			}
		}
	}
	return "", false
}
