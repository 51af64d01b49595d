package runs

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// artifactKey names one artifact version.
type artifactKey struct {
	id      string
	version int
}

// cachedArtifact is an artifact version and, once a run needed it, its
// program: its plan with its subgraphs' plans, checked and indexed.
type cachedArtifact struct {
	artifact store.Artifact
	program  *workflow.Program
}

// artifactCache keeps the artifact versions read from the store, at the
// records version they were read at. A version names immutable content
// (saving other content under it is refused), so an entry holds until an
// artifact is deleted (the records version moves). Deployments of one
// artifact share its program.
type artifactCache = versioned[artifactKey, uint64, *cachedArtifact]

// Artifact reads an artifact version, from the cache when it is there.
func (m *Manager) Artifact(ctx context.Context, id string, version int) (store.Artifact, error) {
	key, at := artifactKey{id, version}, m.prepared.records.Load()
	if e, ok := m.artifacts.get(key, at); ok {
		return e.artifact, nil
	}
	a, err := m.cfg.Store.GetArtifact(ctx, id, version)
	if err == nil {
		m.artifacts.put(key, at, &cachedArtifact{artifact: a})
	}
	return a, err
}

// cachedProgram returns the program of artifact a, building it with
// build the first time; a program that failed to build is not kept.
func (m *Manager) cachedProgram(a store.Artifact, build func() (workflow.Program, error)) (workflow.Program, error) {
	key, at := artifactKey{a.ID, a.Version}, m.prepared.records.Load()
	if e, ok := m.artifacts.get(key, at); ok && e.program != nil {
		return *e.program, nil
	}
	p, err := build()
	if err == nil {
		m.artifacts.put(key, at, &cachedArtifact{artifact: a, program: &p})
	}
	return p, err
}
