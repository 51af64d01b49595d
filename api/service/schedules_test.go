package service_test

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// TestSchedulesCheckTheirSpecAndShowTheirNextFires: a schedule needs an
// existing deployment, one valid spec (a cron, seconds optional, in a
// known time zone, or an interval) and a known overlap; inspect shows its
// next 5 fires, none while paused; pause and unpause keep their note;
// update keeps the creation time; trigger needs a loop; each change is an
// admin event.
func TestSchedulesCheckTheirSpecAndShowTheirNextFires(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	is.NoErr(f.store.SaveDeployment(bounded(t), store.Deployment{ID: "ci", ArtifactID: "ci", ArtifactVersion: 1}))

	for _, bad := range []struct{ schedule, code string }{
		{`{"id":"s","deployment_id":"missing","spec":{"interval_seconds":60}}`, "KeyError"},
		{`{"id":"s","deployment_id":"ci","spec":{"cron":"* * * * *","interval_seconds":60}}`, "ValueError"},
		{`{"id":"s","deployment_id":"ci","spec":{}}`, "ValueError"},
		{`{"id":"s","deployment_id":"ci","spec":{"cron":"61 * * * *"}}`, "ValueError"},
		{`{"id":"s","deployment_id":"ci","spec":{"cron":"0 * * * *","time_zone":"Mars/Olympus"}}`, "ValueError"},
		{`{"id":"s","deployment_id":"ci","spec":{"cron":"CRON_TZ=UTC 0 * * * *","time_zone":"UTC"}}`, "ValueError"},
	} {
		_, err := f.call(t, protocol.MethodSchedulesCreate, `{"schedule":`+bad.schedule+`}`)
		domainError(t, err, bad.code)
	}

	created := conforming[protocol.ScheduleResult](t, f, protocol.MethodSchedulesCreate,
		`{"schedule":{"id":"half-past","deployment_id":"ci","workflow_input":{"n":1},"spec":{"cron":"30 30 * * * *","time_zone":"Asia/Kolkata"}}}`)
	s := created.Schedule
	is.Equal(s.Overlap, "skip")           // the default
	is.Equal(s.CatchupWindowSeconds, 300) // the default
	is.Equal(len(s.NextFireTimes), 5)     // the next 5
	is.Equal(s.NextFireTimes[1]-s.NextFireTimes[0], int64(time.Hour/time.Millisecond))
	at := time.UnixMilli(s.NextFireTimes[0]).In(time.FixedZone("IST", 5*3600+1800))
	is.Equal([]int{at.Minute(), at.Second()}, []int{30, 30}) // seconds first, in the zone
	is.True(s.LastFire == nil)
	_, err := f.call(t, protocol.MethodSchedulesCreate, `{"schedule":{"id":"half-past","deployment_id":"ci","spec":{"interval_seconds":60}}}`)
	domainError(t, err, "ValueError") // ids are unique

	paused := conforming[protocol.ScheduleResult](t, f, protocol.MethodSchedulesPause, `{"schedule_id":"half-past","note":"db migration"}`)
	is.True(paused.Schedule.Paused)
	is.Equal(paused.Schedule.Note, "db migration")
	is.Equal(len(paused.Schedule.NextFireTimes), 0) // a paused schedule fires nothing
	unpaused := conforming[protocol.ScheduleResult](t, f, protocol.MethodSchedulesUnpause, `{"schedule_id":"half-past","note":"done"}`)
	is.True(!unpaused.Schedule.Paused)
	is.Equal(len(unpaused.Schedule.NextFireTimes), 5)

	updated := conforming[protocol.ScheduleResult](t, f, protocol.MethodSchedulesUpdate,
		`{"schedule":{"id":"half-past","deployment_id":"ci","spec":{"interval_seconds":90},"overlap":"buffer_one","catchup_window_seconds":0}}`)
	is.Equal(updated.Schedule.CreatedAtEpochMs, s.CreatedAtEpochMs)
	is.Equal(updated.Schedule.NextFireTimes[0]%90_000, int64(0)) // an interval ticks at its multiples since the epoch
	inspected := conforming[protocol.Schedule](t, f, protocol.MethodSchedulesInspect, `{"schedule_id":"half-past"}`)
	listed := conforming[protocol.ListSchedulesResult](t, f, protocol.MethodSchedulesList, `{}`)
	is.Equal(listed.Schedules, []protocol.Schedule{inspected})

	_, err = f.call(t, protocol.MethodSchedulesTrigger, `{"schedule_id":"half-past"}`)
	domainError(t, err, "RuntimeError") // this fixture runs no scheduling loop

	deleted := conforming[protocol.DeleteScheduleResult](t, f, protocol.MethodSchedulesDelete, `{"schedule_id":"half-past"}`)
	is.True(deleted.Deleted)
	_, err = f.call(t, protocol.MethodSchedulesInspect, `{"schedule_id":"half-past"}`)
	domainError(t, err, "KeyError")

	events, err := f.store.ListEvents(bounded(t), 0, 100)
	is.NoErr(err)
	var kinds []string
	for _, e := range events {
		if strings.HasPrefix(e.Kind, "schedule_") {
			kinds = append(kinds, e.Kind)
		}
	}
	is.Equal(kinds, []string{"schedule_created", "schedule_paused", "schedule_unpaused", "schedule_updated", "schedule_deleted"})
}
