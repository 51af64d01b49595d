package service

import (
	"context"
	"fmt"
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
func (s *Service) program(ctx context.Context, a store.Artifact) (workflow.Program, error) {
	return s.cachedProgram(a, func() (workflow.Program, error) { return s.loadProgram(ctx, a) })
}

// loadProgram loads an artifact's plan with every child plan its
// subgraphs reference, recursively; a reference cycle or a missing child
// is an error.
func (s *Service) loadProgram(ctx context.Context, a store.Artifact) (workflow.Program, error) {
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
			child, err := s.artifact(ctx, *ref.ArtifactID, *ref.Version)
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

// runSetup is what a run actor needs beyond its record.
type runSetup struct {
	program workflow.Program
	targets map[string]run.Target
	sources func(logical string) (string, bool)
	// sessions are the session scopes the deployment's bindings ask for
	// (store.SessionDeployment, store.SessionRun), by connection; a
	// connection missing here uses its shared session.
	sessions map[string]string
	options  workflow.Options
	// timeout is each run's overall deadline from its start, 0 for none.
	timeout time.Duration
}

// setup resolves a deployment's program: its targets under the
// deployment's bindings, and the execution options that enforce each
// capability's schemas.
func (s *Service) setup(ctx context.Context, d store.Deployment, a store.Artifact) (runSetup, error) {
	prog, err := s.program(ctx, a)
	if err != nil {
		return runSetup{}, err
	}
	targets, err := run.Resolve(prog, d.Bindings, s.isConnection)
	if err != nil {
		return runSetup{}, invalid("deployment %q: %v", d.ID, err)
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
		} else if s.isEnabledConnection(t.Connection) {
			c, ok = s.Catalogs.Tool(t.Connection, t.Tool)
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
	for _, b := range d.Bindings {
		bound[b.LogicalSource] = b.ConcreteSource
		if b.Session == store.SessionDeployment || b.Session == store.SessionRun {
			sessions[b.ConcreteSource] = b.Session
		}
	}
	sources := func(logical string) (string, bool) {
		if conn, ok := bound[logical]; ok {
			return conn, true
		}
		return logical, s.isConnection(logical)
	}
	setup := runSetup{
		program: prog, targets: targets, sources: sources, sessions: sessions, timeout: s.RunDeadline,
		options: workflow.Options{MaxSteps: s.MaxSteps, Capability: contracts, Validate: schema.Default.Validate},
	}
	if l := d.Limits; l != nil {
		if l.MaxSteps != nil {
			setup.options.MaxSteps = *l.MaxSteps
		}
		if l.RunTimeoutSeconds != nil {
			setup.timeout = time.Duration(*l.RunTimeoutSeconds) * time.Second
		}
	}
	return setup, nil
}

// scopes are the session scopes of run rec's calls, by connection: its
// deployment's or its own, as the bindings ask.
func (r runSetup) scopes(rec store.Run) map[string]string {
	if len(r.sessions) == 0 {
		return nil
	}
	out := make(map[string]string, len(r.sessions))
	for conn, kind := range r.sessions {
		if kind == store.SessionRun {
			out[conn] = supervisor.RunScope(rec.ID)
		} else {
			out[conn] = supervisor.DeploymentScope(rec.DeploymentID)
		}
	}
	return out
}

// deadline is the run deadline from now, or zero when runs have none.
func (r runSetup) deadline(now time.Time) time.Time {
	if r.timeout <= 0 {
		return time.Time{}
	}
	return now.Add(r.timeout)
}
