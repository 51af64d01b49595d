package sqlite

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/store"
)

// The queries of schedules: a read merges the state into the record.
var (
	insertSchedule      = newWriteQuery(`INSERT INTO schedules (id, record, state) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`)
	updateSchedule      = newWriteQuery(`UPDATE schedules SET record = ?2 WHERE id = ?1`)
	updateScheduleState = newWriteQuery(`UPDATE schedules SET state = ?2 WHERE id = ?1`)
	deleteSchedule      = newWriteQuery(`DELETE FROM schedules WHERE id = ?`)
	getSchedule         = newReadQuery(`SELECT json_set(record, '$.state', json(state)) FROM schedules WHERE id = ?`)
	listSchedules       = newReadQuery(`SELECT json_set(record, '$.state', json(state)) FROM schedules ORDER BY id`)
)

// CreateSchedule implements store.Schedules.
func (s *Store) CreateSchedule(ctx context.Context, sc store.Schedule) (err error) {
	defer wrap(&err, "create schedule %q", sc.ID)
	if !store.ValidAuthID(sc.ID) {
		return store.ErrInvalid
	}
	record, err := encode(sc.ScheduleDef)
	if err != nil {
		return err
	}
	state, err := encode(sc.State)
	if err != nil {
		return err
	}
	return s.update(ctx, func(ctx context.Context, tx writeTx) error {
		n, err := rowsAffected(tx.exec(ctx, insertSchedule, sc.ID, record, state))
		if err == nil && n == 0 {
			return store.ErrExists
		}
		return err
	})
}

// UpdateSchedule implements store.Schedules.
func (s *Store) UpdateSchedule(ctx context.Context, def store.ScheduleDef) (err error) {
	defer wrap(&err, "update schedule %q", def.ID)
	return s.putScheduleColumn(ctx, updateSchedule, def.ID, def)
}

// SaveScheduleState implements store.Schedules.
func (s *Store) SaveScheduleState(ctx context.Context, id string, st store.ScheduleState) (err error) {
	defer wrap(&err, "save the state of schedule %q", id)
	return s.putScheduleColumn(ctx, updateScheduleState, id, st)
}

// putScheduleColumn writes v's JSON through query to schedule id;
// ErrNotFound when there is none.
func (s *Store) putScheduleColumn(ctx context.Context, query writeQuery, id string, v any) error {
	text, err := encode(v)
	if err != nil {
		return err
	}
	return s.update(ctx, func(ctx context.Context, tx writeTx) error {
		n, err := rowsAffected(tx.exec(ctx, query, id, text))
		if err == nil && n == 0 {
			return store.ErrNotFound
		}
		return err
	})
}

// GetSchedule implements store.Schedules.
func (s *Store) GetSchedule(ctx context.Context, id string) (_ store.Schedule, err error) {
	defer wrap(&err, "get schedule %q", id)
	return getOne[store.Schedule](ctx, s.reads, getSchedule, id)
}

// ListSchedules implements store.Schedules.
func (s *Store) ListSchedules(ctx context.Context) (_ []store.Schedule, err error) {
	defer wrap(&err, "list schedules")
	return getAll[store.Schedule](ctx, s.reads, listSchedules)
}

// DeleteSchedule implements store.Schedules.
func (s *Store) DeleteSchedule(ctx context.Context, id string) (_ bool, err error) {
	defer wrap(&err, "delete schedule %q", id)
	return s.deleteOne(ctx, deleteSchedule, id)
}
