package postgres

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/store"
)

// selectSchedules reads schedules with their state merged into the record.
const selectSchedules = `SELECT (record::jsonb || jsonb_build_object('state', state::jsonb))::text FROM schedules`

// CreateSchedule implements store.Schedules.
func (s *Store) CreateSchedule(ctx context.Context, sc store.Schedule) (err error) {
	defer wrap(&err, "create schedule %q", sc.ID)
	if !store.ValidAuthID(sc.ID) {
		return store.ErrInvalid
	}
	return insertSchedule(ctx, s.pool, sc)
}

// insertSchedule inserts a new schedule with its state through q;
// ErrExists if the id is taken.
func insertSchedule(ctx context.Context, q querier, sc store.Schedule) error {
	record, err := encode(sc.ScheduleDef)
	if err != nil {
		return err
	}
	state, err := encode(sc.State)
	if err != nil {
		return err
	}
	return insertNew(ctx, q, `INSERT INTO schedules (id, record, state) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
		sc.ID, record, state)
}

// UpdateSchedule implements store.Schedules.
func (s *Store) UpdateSchedule(ctx context.Context, def store.ScheduleDef) (err error) {
	defer wrap(&err, "update schedule %q", def.ID)
	return s.putScheduleColumn(ctx, `UPDATE schedules SET record = $2 WHERE id = $1`, def.ID, def)
}

// SaveScheduleState implements store.Schedules.
func (s *Store) SaveScheduleState(ctx context.Context, id string, st store.ScheduleState) (err error) {
	defer wrap(&err, "save the state of schedule %q", id)
	return s.putScheduleColumn(ctx, `UPDATE schedules SET state = $2 WHERE id = $1`, id, st)
}

// putScheduleColumn writes v's JSON through query to schedule id;
// ErrNotFound when there is none.
func (s *Store) putScheduleColumn(ctx context.Context, query, id string, v any) error {
	text, err := encode(v)
	if err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, query, id, text)
	if err == nil && tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return err
}

// GetSchedule implements store.Schedules.
func (s *Store) GetSchedule(ctx context.Context, id string) (_ store.Schedule, err error) {
	defer wrap(&err, "get schedule %q", id)
	return getOne[store.Schedule](ctx, s.pool, selectSchedules+` WHERE id = $1`, id)
}

// ListSchedules implements store.Schedules.
func (s *Store) ListSchedules(ctx context.Context) (_ []store.Schedule, err error) {
	defer wrap(&err, "list schedules")
	return getAll[store.Schedule](ctx, s.pool, selectSchedules+` ORDER BY id`)
}

// DeleteSchedule implements store.Schedules.
func (s *Store) DeleteSchedule(ctx context.Context, id string) (_ bool, err error) {
	defer wrap(&err, "delete schedule %q", id)
	return s.deleteOne(ctx, `DELETE FROM schedules WHERE id = $1`, id)
}
