package schedules_test

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/schedules"
	"github.com/mcpflow/mcpflow/actors/store"
)

func TestCronTicksWithSecondsInATimeZone(t *testing.T) {
	is := is.New(t)
	paris, err := time.LoadLocation("Europe/Paris")
	is.NoErr(err)
	for _, spec := range []store.ScheduleSpec{
		{Cron: "15 30 2 * * *", TimeZone: "Europe/Paris"}, // six fields, seconds first
		{Cron: "CRON_TZ=Europe/Paris 15 30 2 * * *"},
	} {
		s, err := schedules.Compile(spec)
		is.NoErr(err)
		next := s.Next(time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC))
		is.True(next.Equal(time.Date(2026, 12, 8, 2, 30, 15, 0, paris))) // 02:30:15 in Paris
	}
	five, err := schedules.Compile(store.ScheduleSpec{Cron: "0 * * * *"}) // five fields: minutes first, UTC
	is.NoErr(err)
	is.True(five.Next(time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)).Equal(time.Date(2026, 12, 7, 13, 0, 0, 0, time.UTC)))
}

func TestIntervalsTickAtTheirMultiplesSinceTheEpoch(t *testing.T) {
	is := is.New(t)
	s, err := schedules.Compile(store.ScheduleSpec{IntervalSeconds: 7})
	is.NoErr(err)
	next := s.Next(time.Unix(100, 0))
	is.True(next.Equal(time.Unix(105, 0)))
	is.True(s.Next(next).Equal(time.Unix(112, 0))) // strictly after
}

// Jitter delays a fire by less than the spec's jitter, by the same amount
// for the same schedule and tick (every node draws the same), and keeps
// the tick, which names the run, as it is.
func TestJitterIsBoundedAndTheSameOnEveryDraw(t *testing.T) {
	is := is.New(t)
	s, err := schedules.Compile(store.ScheduleSpec{IntervalSeconds: 60, JitterSeconds: 10})
	is.NoErr(err)
	delays := map[time.Duration]bool{}
	for i := range 50 {
		tick := time.Unix(int64(60*i), 0)
		at := s.FireAt("s1", tick)
		is.True(!at.Before(tick) && at.Sub(tick) < 10*time.Second)
		is.Equal(s.FireAt("s1", tick), at)
		delays[at.Sub(tick)] = true
	}
	is.True(len(delays) > 1) // it varies from tick to tick
	is.Equal(len(s.NextFires("s1", time.Unix(0, 0), 5)), 5)
}
