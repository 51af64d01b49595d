package sqlite

import (
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/mcpflow/mcpflow/actors/store"
)

// The queries of run_values: the large values of a run's records, each
// kept once per run (store.Values), which the packed records, trace
// entries and events of the run refer to by key. A commit inserts only
// those not stored yet; they go with the run (ON DELETE CASCADE).
var (
	hasValue    = newWriteQuery(`SELECT EXISTS (SELECT 1 FROM run_values WHERE run_id = ? AND key = ?)`)
	insertValue = newWriteQuery(`INSERT INTO run_values (run_id, key, value) VALUES (?, ?, ?)`)
	readValues  = newReadQuery(`SELECT key, value FROM run_values WHERE run_id = ? AND key IN (SELECT value FROM json_each(?))`)
	readValuesW = newWriteQuery(`SELECT key, value FROM run_values WHERE run_id = ? AND key IN (SELECT value FROM json_each(?))`)
)

// insertValues inserts in tx the values of run id that it does not hold
// yet.
func insertValues(ctx context.Context, tx writeTx, id string, values store.Values) error {
	for _, key := range slices.Sorted(maps.Keys(values)) {
		var held bool
		if err := tx.row(ctx, hasValue, id, key).Scan(&held); err != nil {
			return err
		}
		if held {
			continue
		}
		if _, err := tx.exec(ctx, insertValue, id, key, values[key]); err != nil {
			return err
		}
	}
	return nil
}

// valuesOf returns the lookup that store.Unpack takes, reading the values
// through q: on the read pool, in a read transaction or in the writer's.
func valuesOf[Q readQuery | writeQuery](ctx context.Context, q querier[Q]) store.ValueLookup {
	return func(run string, keys []string) (map[string]string, error) {
		list, err := json.Marshal(keys)
		if err != nil {
			return nil, err
		}
		var query Q
		switch any(query).(type) {
		case readQuery:
			query = Q(readValues)
		default:
			query = Q(readValuesW)
		}
		rows, err := q.rows(ctx, query, run, string(list))
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		found := make(map[string]string, len(keys))
		for rows.Next() {
			var key, value string
			if err := rows.Scan(&key, &value); err != nil {
				return nil, err
			}
			found[key] = value
		}
		return found, rows.Err()
	}
}
