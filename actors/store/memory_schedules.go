package store

import (
	"context"
	"fmt"
)

// CreateSchedule implements Schedules.
func (m *Memory) CreateSchedule(_ context.Context, s Schedule) error {
	if !ValidAuthID(s.ID) {
		return fmt.Errorf("create schedule %q: the id is not valid: %w", s.ID, ErrInvalid)
	}
	c, err := deepCopy(s)
	if err != nil {
		return fmt.Errorf("create schedule %q: %w", s.ID, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.schedules[s.ID]; ok {
		return fmt.Errorf("create schedule %q: %w", s.ID, ErrExists)
	}
	m.schedules[s.ID] = c
	return nil
}

// UpdateSchedule implements Schedules.
func (m *Memory) UpdateSchedule(_ context.Context, def ScheduleDef) error {
	c, err := deepCopy(def)
	if err != nil {
		return fmt.Errorf("update schedule %q: %w", def.ID, err)
	}
	return m.changeSchedule(def.ID, func(s *Schedule) { s.ScheduleDef = c })
}

// SaveScheduleState implements Schedules.
func (m *Memory) SaveScheduleState(_ context.Context, id string, st ScheduleState) error {
	return m.changeSchedule(id, func(s *Schedule) { s.State = st })
}

// changeSchedule applies change to the stored schedule id.
func (m *Memory) changeSchedule(id string, change func(*Schedule)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.schedules[id]
	if !ok {
		return fmt.Errorf("save schedule %q: %w", id, ErrNotFound)
	}
	change(&s)
	m.schedules[id] = s
	return nil
}

// GetSchedule implements Schedules.
func (m *Memory) GetSchedule(_ context.Context, id string) (Schedule, error) {
	s, err := getKeyed(m, m.schedules, id)
	if err != nil {
		return Schedule{}, fmt.Errorf("get schedule %q: %w", id, err)
	}
	return s, nil
}

// ListSchedules implements Schedules.
func (m *Memory) ListSchedules(context.Context) ([]Schedule, error) {
	return listKeyed(m, m.schedules)
}

// DeleteSchedule implements Schedules.
func (m *Memory) DeleteSchedule(_ context.Context, id string) (bool, error) {
	return deleteKeyed(m, m.schedules, id), nil
}
