package service

import (
	"context"
	"sync"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// maxCachedArtifacts bounds the artifact versions kept in memory.
const maxCachedArtifacts = 1024

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

// artifactCache keeps artifact versions read from the store. A version
// names immutable content (saving other content under it is refused), so
// an entry holds until a version is deleted (the records version moves,
// and the cache starts again). Deployments of one artifact share its
// program. Entries are shared: read only.
type artifactCache struct {
	mu      sync.Mutex
	at      uint64 // the records version of the entries
	entries map[artifactKey]*cachedArtifact
}

// get returns the entry of key, if it is kept at records version at.
func (c *artifactCache) get(key artifactKey, at uint64) (*cachedArtifact, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at != at {
		c.at, c.entries = at, nil
	}
	e, ok := c.entries[key]
	return e, ok
}

// put keeps e under key, read at records version at, evicting an
// arbitrary entry when full.
func (c *artifactCache) put(key artifactKey, at uint64, e *cachedArtifact) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at != at {
		return // something changed since it was read
	}
	if c.entries == nil {
		c.entries = map[artifactKey]*cachedArtifact{}
	}
	if _, ok := c.entries[key]; !ok && len(c.entries) >= maxCachedArtifacts {
		for k := range c.entries {
			delete(c.entries, k)
			break
		}
	}
	c.entries[key] = e
}

// artifact reads an artifact version, from the cache when it is there.
func (s *Service) artifact(ctx context.Context, id string, version int) (store.Artifact, error) {
	key, at := artifactKey{id, version}, s.prepared.records.Load()
	if e, ok := s.artifacts.get(key, at); ok {
		return e.artifact, nil
	}
	a, err := s.Store.GetArtifact(ctx, id, version)
	if err == nil {
		s.artifacts.put(key, at, &cachedArtifact{artifact: a})
	}
	return a, err
}

// cachedProgram returns the program of artifact a, building it with
// build the first time; a program that failed to build is not kept.
func (s *Service) cachedProgram(a store.Artifact, build func() (workflow.Program, error)) (workflow.Program, error) {
	key, at := artifactKey{a.ID, a.Version}, s.prepared.records.Load()
	if e, ok := s.artifacts.get(key, at); ok && e.program != nil {
		return *e.program, nil
	}
	p, err := build()
	if err == nil {
		s.artifacts.put(key, at, &cachedArtifact{artifact: a, program: &p})
	}
	return p, err
}
