package postgres

import (
	"context"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/store"
)

// The large values of a run's records are kept once per run in
// run_values (store.Values), which its packed records, trace entries and
// events refer to by key. A commit inserts only those not stored yet;
// they go with the run (ON DELETE CASCADE).

// queueValues queues in b the insert of the values of run id that q (the
// commit's transaction) does not hold yet: it asks which it holds first,
// so that a value is sent to the database once.
func queueValues(ctx context.Context, q querier, b *pgx.Batch, id string, values store.Values) error {
	if len(values) == 0 {
		return nil
	}
	rows, err := q.Query(ctx, `SELECT key FROM run_values WHERE run_id = $1 AND key = ANY($2)`, id, slices.Collect(maps.Keys(values)))
	if err != nil {
		return err
	}
	held, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	var keys, texts []string
	for _, key := range slices.Sorted(maps.Keys(values)) {
		if !slices.Contains(held, key) {
			keys, texts = append(keys, key), append(texts, values[key])
		}
	}
	if len(keys) > 0 {
		b.Queue(`INSERT INTO run_values (run_id, key, value) SELECT $1, * FROM unnest($2::text[], $3::text[])`, id, keys, texts)
	}
	return nil
}

// valuesOf returns the lookup that store.Unpack takes, reading the values
// through q.
func valuesOf(ctx context.Context, q querier) store.ValueLookup {
	return func(run string, keys []string) (map[string]string, error) {
		rows, err := q.Query(ctx, `SELECT key, value FROM run_values WHERE run_id = $1 AND key = ANY($2)`, run, keys)
		if err != nil {
			return nil, err
		}
		found := make(map[string]string, len(keys))
		var key, value string
		_, err = pgx.ForEachRow(rows, []any{&key, &value}, func() error {
			found[key] = value
			return nil
		})
		return found, err
	}
}
