package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/store"
)

// CreateWorkspace implements store.Workspaces.
func (s *Store) CreateWorkspace(ctx context.Context, w store.Workspace) (err error) {
	defer wrap(&err, "create workspace %q", w.ID)
	record, err := encode(w)
	if err != nil {
		return err
	}
	return insertNew(ctx, s.write,
		`INSERT INTO workspaces (id, revision, record) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
		w.ID, w.Revision, record)
}

// GetWorkspace implements store.Workspaces.
func (s *Store) GetWorkspace(ctx context.Context, id string) (_ store.Workspace, err error) {
	defer wrap(&err, "get workspace %q", id)
	return getOne[store.Workspace](ctx, s.read, `SELECT record FROM workspaces WHERE id = ?`, id)
}

// UpdateWorkspace implements store.Workspaces: the UPDATE compares and
// sets; when it changes nothing, the stored revision tells why.
func (s *Store) UpdateWorkspace(ctx context.Context, w store.Workspace, expectedRevision int) (err error) {
	defer wrap(&err, "update workspace %q", w.ID)
	record, err := encode(w)
	if err != nil {
		return err
	}
	return s.update(ctx, func(tx *sql.Tx) error {
		n, err := rowsAffected(tx.ExecContext(ctx,
			`UPDATE workspaces SET revision = ?, record = ? WHERE id = ? AND revision = ?`,
			w.Revision, record, w.ID, expectedRevision))
		if err != nil || n == 1 {
			return err
		}
		var revision int
		err = tx.QueryRowContext(ctx, `SELECT revision FROM workspaces WHERE id = ?`, w.ID).Scan(&revision)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("revision is %d, not %d: %w", revision, expectedRevision, store.ErrConflict)
	})
}

// ListWorkspaces implements store.Workspaces.
func (s *Store) ListWorkspaces(ctx context.Context) (_ []store.Workspace, err error) {
	defer wrap(&err, "list workspaces")
	return getAll[store.Workspace](ctx, s.read, `SELECT record FROM workspaces ORDER BY id`)
}

// DeleteWorkspace implements store.Workspaces.
func (s *Store) DeleteWorkspace(ctx context.Context, id string) (_ bool, err error) {
	defer wrap(&err, "delete workspace %q", id)
	return s.deleteOne(ctx, `DELETE FROM workspaces WHERE id = ?`, id)
}
