package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/store"
)

// putSealed stores v's JSON as the record under key with query (the
// table's upsert), once seal has sealed its secrets under the current
// key; without a sealer, as it is. It seals once it holds table in ROW
// EXCLUSIVE mode, which Reseal's EXCLUSIVE lock waits for and holds off:
// a put on any node is re-sealed by a Reseal that follows it, or seals
// under the key the one before it sealed under.
func putSealed[T any](ctx context.Context, s *Store, table, query, key string, v T, seal func(store.Sealer, T) (T, error)) error {
	if s.sealer == nil {
		return upsert(ctx, s.pool, query, key, v)
	}
	return s.update(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `LOCK TABLE `+table+` IN ROW EXCLUSIVE MODE`); err != nil {
			return err
		}
		sealed, err := seal(s.sealer, v)
		if err != nil {
			return err
		}
		return upsert(ctx, tx, query, key, sealed)
	})
}

// Reseal implements store.Resealer: the auth records, then the source
// registry. It holds both tables in EXCLUSIVE mode from before its reads
// to its commit: it waits for the puts and deletes in progress on every
// node, holds off new ones (reads go on), and nodes that open the store
// at once reseal one after the other.
// The old row versions stay in the tables' files until autovacuum reuses
// them, never in a pg_dump (see docs/operations.md).
func (s *Store) Reseal(ctx context.Context) (n int, err error) {
	defer wrap(&err, "seal the store's secrets")
	if s.sealer == nil {
		return 0, fmt.Errorf("the store was opened without a sealer")
	}
	err = s.update(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `LOCK TABLE auth_records, source_registry, webhooks IN EXCLUSIVE MODE`); err != nil {
			return err
		}
		auths, err := resealKept(ctx, tx, s.sealer, `SELECT record FROM auth_records ORDER BY id`, upsertAuth,
			store.ResealOne, func(a store.AuthRecord) string { return a.ID })
		if err != nil {
			return err
		}
		entries, err := resealKept(ctx, tx, s.sealer, `SELECT record FROM source_registry ORDER BY id`, upsertRegistryEntry,
			store.ResealEntry, func(e store.RegistryEntry) string { return e.ID })
		if err != nil {
			return err
		}
		hooks, err := resealKept(ctx, tx, s.sealer, `SELECT record FROM webhooks ORDER BY id`, updateWebhook,
			store.ResealWebhook, func(h store.Webhook) string { return h.ID })
		n = auths + entries + hooks
		return err
	})
	return n, err
}

// resealKept re-seals each record the query kept reads in tx (see
// store.ResealKept), writing back with the upsert put, by id, those it
// changes.
func resealKept[T any](ctx context.Context, tx pgx.Tx, s store.Sealer, kept, put string,
	reseal func(store.Sealer, T) (T, bool, error), id func(T) string) (int, error) {
	records, err := getAll[T](ctx, tx, kept)
	if err != nil {
		return 0, err
	}
	return store.ResealKept(s, records, reseal, func(r T) error { return upsert(ctx, tx, put, id(r), r) })
}
