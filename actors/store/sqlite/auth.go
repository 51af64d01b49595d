package sqlite

import (
	"context"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/store"
)

// The queries of auth records.
var (
	putAuth    = newWriteQuery(`INSERT INTO auth_records (id, record) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET record = excluded.record`)
	deleteAuth = newWriteQuery(`DELETE FROM auth_records WHERE id = ?`)
	keptAuth   = newWriteQuery(`SELECT record FROM auth_records ORDER BY id`)
	// secureDelete sets PRAGMA secure_delete to each of its values, by
	// the number PRAGMA secure_delete reads back.
	secureDelete = []writeQuery{
		newWriteQuery(`PRAGMA secure_delete = OFF`),
		newWriteQuery(`PRAGMA secure_delete = ON`),
		newWriteQuery(`PRAGMA secure_delete = FAST`),
	}
	getAuth  = newReadQuery(`SELECT record FROM auth_records WHERE id = ?`)
	listAuth = newReadQuery(`SELECT record FROM auth_records ORDER BY id`)
)

// SaveAuth implements store.AuthRecords. The payload is stored in the
// database file, which only its owner may read (see createFile), sealed
// when the store was opened with a sealer. It is sealed in the writer, so
// that a save and a ResealAuth are ordered: a save before it is re-sealed
// by it, one after it seals under the key it sealed under.
func (s *Store) SaveAuth(ctx context.Context, a store.AuthRecord) (err error) {
	defer wrap(&err, "save auth record %q", a.ID)
	if !store.ValidAuthID(a.ID) {
		return fmt.Errorf("the id is not a valid auth id: %w", store.ErrInvalid)
	}
	return s.update(ctx, func(ctx context.Context, tx writeTx) error {
		sealed, err := store.SealAuth(s.sealer, a)
		if err != nil {
			return err
		}
		record, err := encode(sealed)
		if err != nil {
			return err
		}
		_, err = tx.exec(ctx, putAuth, a.ID, record)
		return err
	})
}

// GetAuth implements store.AuthRecords.
func (s *Store) GetAuth(ctx context.Context, id string) (_ store.AuthRecord, err error) {
	defer wrap(&err, "get auth record %q", id)
	a, err := getOne[store.AuthRecord](ctx, s.reads, getAuth, id)
	if err != nil {
		return a, err
	}
	return store.OpenAuth(s.sealer, a)
}

// ListAuth implements store.AuthRecords.
func (s *Store) ListAuth(ctx context.Context) (_ []store.AuthRecord, err error) {
	defer wrap(&err, "list auth records")
	list, err := getAll[store.AuthRecord](ctx, s.reads, listAuth)
	if err != nil {
		return nil, err
	}
	return store.OpenAuths(s.sealer, list)
}

// DeleteAuth implements store.AuthRecords.
func (s *Store) DeleteAuth(ctx context.Context, id string) (_ bool, err error) {
	defer wrap(&err, "delete auth record %q", id)
	return s.deleteOne(ctx, deleteAuth, id)
}

// ResealAuth implements store.AuthResealer, through the writer: no save
// can come between its reads and its writes. The pages it frees are
// zeroed (secure_delete), so that no payload sealed under an older key, or
// in clear, is left in them.
func (s *Store) ResealAuth(ctx context.Context) (n int, err error) {
	defer wrap(&err, "seal auth records")
	if s.sealer == nil {
		return 0, fmt.Errorf("the store was opened without a sealer")
	}
	err = s.update(ctx, func(ctx context.Context, tx writeTx) error {
		n, err = s.reseal(ctx, tx)
		return err
	})
	return n, err
}

// reseal is ResealAuth within tx.
func (s *Store) reseal(ctx context.Context, tx writeTx) (n int, err error) {
	if _, err := tx.exec(ctx, secureDelete[1]); err != nil {
		return 0, err
	}
	defer func() {
		if _, reset := tx.exec(ctx, secureDelete[s.secureDelete]); reset != nil && err == nil {
			err = reset
		}
	}()
	kept, err := decodeAll[store.AuthRecord](valuesOf(ctx, tx))(tx.rows(ctx, keptAuth))
	if err != nil {
		return 0, err
	}
	for _, a := range kept {
		sealed, changed, err := store.ResealOne(s.sealer, a)
		if err != nil {
			return 0, err
		}
		if !changed {
			continue
		}
		record, err := encode(sealed)
		if err != nil {
			return 0, err
		}
		if _, err := tx.exec(ctx, putAuth, sealed.ID, record); err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

// sealAtOpen runs ResealAuth on the writer's connection before the writer
// starts, then checkpoints and truncates the write-ahead log, so that a
// store written in clear keeps no clear payload in its files once it is
// open.
func (s *Store) sealAtOpen(ctx context.Context) (err error) {
	defer wrap(&err, "seal auth records")
	if err := s.writeConn.QueryRowContext(ctx, `PRAGMA secure_delete`).Scan(&s.secureDelete); err != nil {
		return err
	}
	if s.secureDelete < 0 || s.secureDelete >= len(secureDelete) {
		return fmt.Errorf("PRAGMA secure_delete reads %d", s.secureDelete)
	}
	tx, err := s.writeConn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // a no-op once committed
	n, err := s.reseal(ctx, writeTx{stmts: s.writeStmts}.in(tx))
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	_, err = s.writeConn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}
