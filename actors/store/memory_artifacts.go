package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
)

// artifactKey identifies one version of an artifact.
type artifactKey struct {
	id      string
	version int
}

// storedArtifact is an artifact with the hash of its content.
type storedArtifact struct {
	artifact Artifact
	hash     string
}

// SaveArtifact implements Artifacts.
func (m *Memory) SaveArtifact(_ context.Context, a Artifact) (bool, error) {
	hash, err := ArtifactHash(a)
	if err != nil {
		return false, fmt.Errorf("save artifact %q version %d: %w", a.ID, a.Version, err)
	}
	c, err := deepCopy(a)
	if err != nil {
		return false, fmt.Errorf("save artifact %q version %d: %w", a.ID, a.Version, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := artifactKey{a.ID, a.Version}
	if stored, ok := m.artifacts[key]; ok {
		if stored.hash != hash {
			return false, fmt.Errorf("save artifact %q version %d: content differs from the saved version: %w", a.ID, a.Version, ErrConflict)
		}
		return false, nil
	}
	m.artifacts[key] = storedArtifact{artifact: c, hash: hash}
	return true, nil
}

// GetArtifact implements Artifacts.
func (m *Memory) GetArtifact(_ context.Context, id string, version int) (Artifact, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	stored, ok := m.artifacts[artifactKey{id, version}]
	if !ok {
		return Artifact{}, fmt.Errorf("get artifact %q version %d: %w", id, version, ErrNotFound)
	}
	return deepCopy(stored.artifact)
}

// ListArtifacts implements Artifacts.
func (m *Memory) ListArtifacts(_ context.Context, q ArtifactQuery) ([]Artifact, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	matched := []Artifact{}
	for _, stored := range m.artifacts {
		if q.matches(stored.artifact) {
			matched = append(matched, stored.artifact)
		}
	}
	slices.SortFunc(matched, func(a, b Artifact) int {
		return cmp.Or(strings.Compare(a.ID, b.ID), cmp.Compare(a.Version, b.Version))
	})
	list, err := deepCopy(page(matched, q.Offset, q.Limit))
	if err != nil {
		return nil, 0, err
	}
	return list, len(matched), nil
}

// DeleteArtifact implements Artifacts.
func (m *Memory) DeleteArtifact(_ context.Context, id string, version int) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := artifactKey{id, version}
	_, ok := m.artifacts[key]
	delete(m.artifacts, key)
	return ok, nil
}

// matches reports whether a passes the kind filter and contains the query,
// case-folded, in its id, title, description or kind.
func (q ArtifactQuery) matches(a Artifact) bool {
	if q.Kind != "" && a.Kind != q.Kind {
		return false
	}
	fields := []string{a.ID, a.Title, a.Kind}
	if a.Description != nil {
		fields = append(fields, *a.Description)
	}
	needle := strings.ToLower(q.Query)
	return slices.ContainsFunc(fields, func(f string) bool {
		return strings.Contains(strings.ToLower(f), needle)
	})
}
