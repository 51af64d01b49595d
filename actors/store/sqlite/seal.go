package sqlite

import (
	"context"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/store"
)

// secureDelete sets PRAGMA secure_delete to each of its values, by the
// number PRAGMA secure_delete reads back.
var secureDelete = []writeQuery{
	newWriteQuery(`PRAGMA secure_delete = OFF`),
	newWriteQuery(`PRAGMA secure_delete = ON`),
	newWriteQuery(`PRAGMA secure_delete = FAST`),
}

// Reseal implements store.Resealer, through the writer: no save can come
// between its reads and its writes. The pages it frees are zeroed
// (secure_delete), so that no secret sealed under an older key, or in
// clear, is left in them.
func (s *Store) Reseal(ctx context.Context) (n int, err error) {
	defer wrap(&err, "seal the store's secrets")
	if s.sealer == nil {
		return 0, fmt.Errorf("the store was opened without a sealer")
	}
	err = s.update(ctx, func(ctx context.Context, tx writeTx) error {
		n, err = s.reseal(ctx, tx)
		return err
	})
	return n, err
}

// putSealed stores v's JSON as the record under key, as upsert does, once
// seal has sealed its secrets under the current key. It seals in the
// writer, so that a put and a Reseal are ordered: a put before it is
// re-sealed by it, one after it seals under the key it sealed under.
func putSealed[T any](ctx context.Context, s *Store, query writeQuery, key string, v T, seal func(store.Sealer, T) (T, error)) error {
	return s.update(ctx, func(ctx context.Context, tx writeTx) error {
		sealed, err := seal(s.sealer, v)
		if err != nil {
			return err
		}
		record, err := encode(sealed)
		if err != nil {
			return err
		}
		_, err = tx.exec(ctx, query, key, record)
		return err
	})
}

// reseal is Reseal within tx: the auth records, the source registry,
// then the webhooks.
func (s *Store) reseal(ctx context.Context, tx writeTx) (n int, err error) {
	if _, err := tx.exec(ctx, secureDelete[1]); err != nil {
		return 0, err
	}
	defer func() {
		if _, reset := tx.exec(ctx, secureDelete[s.secureDelete]); reset != nil && err == nil {
			err = reset
		}
	}()
	auths, err := resealKept(ctx, tx, s.sealer, keptAuth, putAuth, store.ResealOne, func(a store.AuthRecord) string { return a.ID })
	if err != nil {
		return 0, err
	}
	entries, err := resealKept(ctx, tx, s.sealer, keptRegistryEntries, putRegistryEntry, store.ResealEntry, func(e store.RegistryEntry) string { return e.ID })
	if err != nil {
		return 0, err
	}
	hooks, err := resealKept(ctx, tx, s.sealer, keptWebhooks, updateWebhook, store.ResealWebhook, func(h store.Webhook) string { return h.ID })
	return auths + entries + hooks, err
}

// resealKept re-seals each record the query kept reads (see
// store.ResealKept), writing back with put, by id, those it changes.
func resealKept[T any](ctx context.Context, tx writeTx, s store.Sealer, kept, put writeQuery,
	reseal func(store.Sealer, T) (T, bool, error), id func(T) string) (int, error) {
	records, err := decodeAll[T](valuesOf(ctx, tx))(tx.rows(ctx, kept))
	if err != nil {
		return 0, err
	}
	return store.ResealKept(s, records, reseal, func(r T) error {
		record, err := encode(r)
		if err != nil {
			return err
		}
		_, err = tx.exec(ctx, put, id(r), record)
		return err
	})
}

// sealAtOpen runs Reseal on the writer's connection before the writer
// starts, then checkpoints and truncates the write-ahead log, so that a
// store written in clear keeps no clear secret in its files once it is
// open.
func (s *Store) sealAtOpen(ctx context.Context) (err error) {
	defer wrap(&err, "seal the store's secrets")
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
