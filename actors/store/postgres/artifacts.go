package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpflow/mcpflow/actors/store"
)

// SaveArtifact implements store.Artifacts: the first save of an id+version
// inserts it; later ones compare content hashes.
func (s *Store) SaveArtifact(ctx context.Context, a store.Artifact) (created bool, err error) {
	defer wrap(&err, "save artifact %q version %d", a.ID, a.Version)
	created, err = saveArtifact(ctx, s.pool, a)
	return created, s.announced(err, ChangeRecords, "")
}

// saveArtifact does the work of SaveArtifact on q. The INSERT and the
// SELECT are separate statements: a concurrent first save of the same
// version makes the INSERT wait for it, and the SELECT then sees it.
func saveArtifact(ctx context.Context, q querier, a store.Artifact) (bool, error) {
	hash, err := store.ArtifactHash(a)
	if err != nil {
		return false, err
	}
	record, err := encode(a)
	if err != nil {
		return false, err
	}
	tag, err := q.Exec(ctx,
		`INSERT INTO artifacts (id, version, kind, folded, content_hash, record)
		 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
		a.ID, a.Version, a.Kind, folded(a), hash, record)
	if err != nil || tag.RowsAffected() == 1 {
		return err == nil, err
	}
	var stored string
	err = q.QueryRow(ctx,
		`SELECT content_hash FROM artifacts WHERE id = $1 AND version = $2`, a.ID, a.Version).Scan(&stored)
	if err == nil && stored != hash {
		err = fmt.Errorf("content differs from the saved version: %w", store.ErrConflict)
	}
	return false, err
}

// folded is what an artifact query matches: the id, title, description
// and kind, lower-cased as store.ArtifactQuery does it.
func folded(a store.Artifact) []string {
	fields := []string{a.ID, a.Title, a.Kind}
	if a.Description != nil {
		fields = append(fields, *a.Description)
	}
	for i, f := range fields {
		fields[i] = strings.ToLower(f)
	}
	return fields
}

// GetArtifact implements store.Artifacts.
func (s *Store) GetArtifact(ctx context.Context, id string, version int) (_ store.Artifact, err error) {
	defer wrap(&err, "get artifact %q version %d", id, version)
	return getOne[store.Artifact](ctx, s.pool,
		`SELECT record FROM artifacts WHERE id = $1 AND version = $2`, id, version)
}

// ListArtifacts implements store.Artifacts.
func (s *Store) ListArtifacts(ctx context.Context, q store.ArtifactQuery) (_ []store.Artifact, _ int, err error) {
	defer wrap(&err, "list artifacts")
	pq := pageQuery{table: "artifacts", orderBy: "id, version"}
	if q.Kind != "" {
		pq.filter("kind = %s", q.Kind)
	}
	if q.Query != "" {
		pq.filter("EXISTS (SELECT FROM unnest(folded) AS f WHERE strpos(f, %s) > 0)", strings.ToLower(q.Query))
	}
	return listPage[store.Artifact](ctx, s.pool, pq, q.Offset, q.Limit)
}

// DeleteArtifact implements store.Artifacts.
func (s *Store) DeleteArtifact(ctx context.Context, id string, version int) (_ bool, err error) {
	defer wrap(&err, "delete artifact %q version %d", id, version)
	deleted, err := s.deleteOne(ctx, `DELETE FROM artifacts WHERE id = $1 AND version = $2`, id, version)
	return deleted, s.announced(err, ChangeRecords, "")
}
