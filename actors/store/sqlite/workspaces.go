package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/store"
)

// The queries of workspaces.
var (
	insertWorkspace   = newWriteQuery(`INSERT INTO workspaces (id, revision, record) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`)
	updateWorkspace   = newWriteQuery(`UPDATE workspaces SET revision = ?, record = ? WHERE id = ? AND revision = ?`)
	workspaceRevision = newWriteQuery(`SELECT revision FROM workspaces WHERE id = ?`)
	deleteWorkspace   = newWriteQuery(`DELETE FROM workspaces WHERE id = ?`)
	getWorkspace      = newReadQuery(`SELECT record FROM workspaces WHERE id = ?`)
	listWorkspaces    = newReadQuery(`SELECT record FROM workspaces ORDER BY id`)
)

// CreateWorkspace implements store.Workspaces.
func (s *Store) CreateWorkspace(ctx context.Context, w store.Workspace) (err error) {
	defer wrap(&err, "create workspace %q", w.ID)
	record, err := encode(w)
	if err != nil {
		return err
	}
	return s.update(ctx, func(ctx context.Context, tx writeTx) error {
		return insertNew(ctx, tx, insertWorkspace, w.ID, w.Revision, record)
	})
}

// GetWorkspace implements store.Workspaces.
func (s *Store) GetWorkspace(ctx context.Context, id string) (_ store.Workspace, err error) {
	defer wrap(&err, "get workspace %q", id)
	return getOne[store.Workspace](ctx, s.reads, getWorkspace, id)
}

// UpdateWorkspace implements store.Workspaces: the UPDATE compares and
// sets; when it changes nothing, the stored revision tells why.
func (s *Store) UpdateWorkspace(ctx context.Context, w store.Workspace, expectedRevision int) (err error) {
	defer wrap(&err, "update workspace %q", w.ID)
	record, err := encode(w)
	if err != nil {
		return err
	}
	return s.update(ctx, func(ctx context.Context, tx writeTx) error {
		n, err := rowsAffected(tx.exec(ctx, updateWorkspace, w.Revision, record, w.ID, expectedRevision))
		if err != nil || n == 1 {
			return err
		}
		var revision int
		err = tx.row(ctx, workspaceRevision, w.ID).Scan(&revision)
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
	return getAll[store.Workspace](ctx, s.reads, listWorkspaces)
}

// DeleteWorkspace implements store.Workspaces.
func (s *Store) DeleteWorkspace(ctx context.Context, id string) (_ bool, err error) {
	defer wrap(&err, "delete workspace %q", id)
	return s.deleteOne(ctx, deleteWorkspace, id)
}
