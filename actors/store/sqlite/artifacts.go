package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/mcpflow/mcpflow/actors/store"
)

// The queries of artifacts.
var (
	insertArtifact = newWriteQuery(`INSERT INTO artifacts (id, version, kind, title, description, content_hash, record)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`)
	artifactHash   = newWriteQuery(`SELECT content_hash FROM artifacts WHERE id = ? AND version = ?`)
	deleteArtifact = newWriteQuery(`DELETE FROM artifacts WHERE id = ? AND version = ?`)
	getArtifact    = newReadQuery(`SELECT record FROM artifacts WHERE id = ? AND version = ?`)
)

// SaveArtifact implements store.Artifacts: the first save of an id+version
// inserts it; later ones compare content hashes.
func (s *Store) SaveArtifact(ctx context.Context, a store.Artifact) (created bool, err error) {
	defer wrap(&err, "save artifact %q version %d", a.ID, a.Version)
	hash, err := store.ArtifactHash(a)
	if err != nil {
		return false, err
	}
	record, err := encode(a)
	if err != nil {
		return false, err
	}
	err = s.update(ctx, func(ctx context.Context, tx writeTx) error {
		n, err := rowsAffected(tx.exec(ctx, insertArtifact, a.ID, a.Version, a.Kind, a.Title, a.Description, hash, record))
		if err != nil || n == 1 {
			created = n == 1
			return err
		}
		var stored string
		err = tx.row(ctx, artifactHash, a.ID, a.Version).Scan(&stored)
		if err == nil && stored != hash {
			err = fmt.Errorf("content differs from the saved version: %w", store.ErrConflict)
		}
		return err
	})
	return created, err
}

// GetArtifact implements store.Artifacts.
func (s *Store) GetArtifact(ctx context.Context, id string, version int) (_ store.Artifact, err error) {
	defer wrap(&err, "get artifact %q version %d", id, version)
	return getOne[store.Artifact](ctx, s.reads, getArtifact, id, version)
}

// ListArtifacts implements store.Artifacts.
func (s *Store) ListArtifacts(ctx context.Context, q store.ArtifactQuery) (_ []store.Artifact, _ int, err error) {
	defer wrap(&err, "list artifacts")
	pq := pageQuery{table: "artifacts", orderBy: "id, version"}
	if q.Kind != "" {
		pq.where = append(pq.where, "kind = @kind")
		pq.args = append(pq.args, sql.Named("kind", q.Kind))
	}
	if q.Query != "" {
		var matches []string
		for _, column := range []string{"id", "title", "description", "kind"} {
			matches = append(matches, fmt.Sprintf("instr(%s(%s), @needle) > 0", foldSQL, column))
		}
		pq.where = append(pq.where, "("+strings.Join(matches, " OR ")+")")
		pq.args = append(pq.args, sql.Named("needle", strings.ToLower(q.Query)))
	}
	return listPage[store.Artifact](ctx, s.read, s.reads, pq, q.Offset, q.Limit)
}

// DeleteArtifact implements store.Artifacts.
func (s *Store) DeleteArtifact(ctx context.Context, id string, version int) (_ bool, err error) {
	defer wrap(&err, "delete artifact %q version %d", id, version)
	return s.deleteOne(ctx, deleteArtifact, id, version)
}
