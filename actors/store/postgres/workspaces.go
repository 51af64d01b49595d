package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/store"
)

// CreateWorkspace implements store.Workspaces.
func (s *Store) CreateWorkspace(ctx context.Context, w store.Workspace) (err error) {
	defer wrap(&err, "create workspace %q", w.ID)
	return insertWorkspace(ctx, s.pool, w)
}

// insertWorkspace inserts w; store.ErrExists if its id is taken.
func insertWorkspace(ctx context.Context, q querier, w store.Workspace) error {
	record, err := encode(w)
	if err != nil {
		return err
	}
	return insertNew(ctx, q,
		`INSERT INTO workspaces (id, revision, record) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
		w.ID, w.Revision, record)
}

// GetWorkspace implements store.Workspaces.
func (s *Store) GetWorkspace(ctx context.Context, id string) (_ store.Workspace, err error) {
	defer wrap(&err, "get workspace %q", id)
	return getOne[store.Workspace](ctx, s.pool, `SELECT record FROM workspaces WHERE id = $1`, id)
}

// UpdateWorkspace implements store.Workspaces: the UPDATE compares and
// sets (a concurrent update of the row makes it wait, then re-check the
// revision as committed); when it changes nothing, the stored revision
// tells why.
func (s *Store) UpdateWorkspace(ctx context.Context, w store.Workspace, expectedRevision int) (err error) {
	defer wrap(&err, "update workspace %q", w.ID)
	record, err := encode(w)
	if err != nil {
		return err
	}
	return s.update(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx,
			`UPDATE workspaces SET revision = $1, record = $2 WHERE id = $3 AND revision = $4`,
			w.Revision, record, w.ID, expectedRevision)
		if err != nil || tag.RowsAffected() == 1 {
			return err
		}
		var revision int
		err = tx.QueryRow(ctx, `SELECT revision FROM workspaces WHERE id = $1`, w.ID).Scan(&revision)
		if errors.Is(err, pgx.ErrNoRows) {
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
	return getAll[store.Workspace](ctx, s.pool, `SELECT record FROM workspaces ORDER BY id`)
}

// DeleteWorkspace implements store.Workspaces.
func (s *Store) DeleteWorkspace(ctx context.Context, id string) (_ bool, err error) {
	defer wrap(&err, "delete workspace %q", id)
	return s.deleteOne(ctx, `DELETE FROM workspaces WHERE id = $1`, id)
}
