package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

// newSchedulesCommand holds the commands on schedules.
func newSchedulesCommand(r *remote) *cobra.Command {
	return newGroup("schedules", "Create, inspect, list, change, pause, trigger and delete schedules that start runs",
		newSchedulesDefineCommand(r, "create"), newSchedulesInspectCommand(r), newSchedulesListCommand(r),
		newSchedulesDefineCommand(r, "update"), newSchedulesPauseCommand(r, "pause"), newSchedulesPauseCommand(r, "unpause"),
		newSchedulesDeleteCommand(r), newSchedulesTriggerCommand(r))
}

var scheduleIDParams = idParams(func(id string) any { return p.ScheduleIDParams{ScheduleID: id} })

// scheduleTable shows a schedule with its next fires and its counts.
func scheduleTable(t *table, s p.Schedule) {
	when := s.Spec.Cron
	if s.Spec.IntervalSeconds != 0 {
		when = "every " + (time.Duration(s.Spec.IntervalSeconds) * time.Second).String()
	}
	if s.Spec.TimeZone != "" {
		when += " (" + s.Spec.TimeZone + ")"
	}
	if s.Spec.JitterSeconds != 0 {
		when += fmt.Sprintf(", jitter %s", time.Duration(s.Spec.JitterSeconds)*time.Second)
	}
	next := make([]string, 0, len(s.NextFireTimes))
	for _, ms := range s.NextFireTimes {
		next = append(next, time.UnixMilli(ms).UTC().Format(time.RFC3339))
	}
	t.pairs("schedule", s.ID, "deployment", s.DeploymentID, "spec", when, "overlap", s.Overlap,
		"catch-up window", (time.Duration(s.CatchupWindowSeconds) * time.Second).String(), "paused", s.Paused, "note", s.Note,
		"next fires", strings.Join(next, ", "))
	if s.LastFire != nil {
		t.pairs("last fire", epochMs(&s.LastFire.AtEpochMs), "last run", s.LastFire.RunID, "last outcome", s.LastFire.Outcome)
	}
	t.pairs("fired", s.Fired, "missed", s.Missed, "skipped", s.Skipped)
}

func scheduleResultTable(t *table, res p.ScheduleResult) { scheduleTable(t, res.Schedule) }

// scheduleFlags are the flags of create and update.
type scheduleFlags struct {
	cron, timeZone, overlap, input string
	every, jitter, catchup         time.Duration
	paused                         bool
}

// params builds the definition of SCHEDULE_ID DEPLOYMENT_ID.
func (f *scheduleFlags) params(cmd *cobra.Command, args []string) (any, error) {
	def := p.ScheduleDefinition{ID: args[0], DeploymentID: args[1], Overlap: f.overlap, Paused: f.paused,
		Spec: p.ScheduleSpec{Cron: f.cron, TimeZone: f.timeZone}}
	if (f.cron == "") == (f.every == 0) {
		return nil, errors.New("give --cron or --every, one of them")
	}
	if f.every%time.Second != 0 || f.jitter%time.Second != 0 || f.catchup%time.Second != 0 || f.every < 0 || f.jitter < 0 || f.catchup < 0 {
		return nil, errors.New("--every, --jitter and --catchup-window are whole, positive seconds")
	}
	def.Spec.IntervalSeconds, def.Spec.JitterSeconds = int(f.every/time.Second), int(f.jitter/time.Second)
	if cmd.Flags().Changed("catchup-window") {
		s := int(f.catchup / time.Second)
		def.CatchupWindowSeconds = &s
	}
	if f.input != "" {
		input, err := readJSONArg(f.input, cmd.InOrStdin())
		if err != nil {
			return nil, fmt.Errorf("--input: %w", err)
		}
		def.WorkflowInput = input
	}
	return p.ScheduleParams{Schedule: def}, nil
}

func newSchedulesDefineCommand(r *remote, verb string) *cobra.Command {
	var f scheduleFlags
	method, short := p.MethodSchedulesCreate, "Create a schedule that starts a deployment's runs (workflow.schedules.create)"
	if verb == "update" {
		method, short = p.MethodSchedulesUpdate, "Replace a schedule's definition, keeping its counts (workflow.schedules.update)"
	}
	cmd := showing(r, &cobra.Command{
		Use:   verb + " SCHEDULE_ID DEPLOYMENT_ID",
		Short: short,
		Long: `A schedule starts a run of DEPLOYMENT_ID with --input on each tick of
--cron (five fields, or six with seconds first; @hourly; CRON_TZ=) or
--every (an interval, ticking at its multiples since the Unix epoch). Each
run is started_by schedule:SCHEDULE_ID.

--overlap says what a tick does while the last run is still running:
skip (the default), buffer_one, allow_all or cancel_other. After a
downtime, the ticks missed within --catchup-window (5m by default) are
fired once each, in order; older ones are skipped and counted
(docs/triggers.md, "Schedules"). ` + verb + ` makes the schedule active from now.`,
		Example: `  mcpflow schedules ` + verb + ` nightly report.default --cron "0 2 * * *" --time-zone Europe/Paris --input '{"scope":"all"}'
  mcpflow schedules ` + verb + ` poll sync.default --every 30s --overlap buffer_one --jitter 5s
  mcpflow schedules ` + verb + ` tick demo.default --cron "*/10 * * * * *" --overlap allow_all --catchup-window 1h`,
		Args: cobra.ExactArgs(2),
	}, method, f.params, scheduleResultTable)
	fl := cmd.Flags()
	fl.StringVar(&f.cron, "cron", "", "a cron expression: 5 fields, or 6 with seconds first")
	fl.DurationVar(&f.every, "every", 0, "an interval (whole seconds), instead of --cron")
	fl.StringVar(&f.timeZone, "time-zone", "", "the IANA time zone of --cron (UTC by default)")
	fl.DurationVar(&f.jitter, "jitter", 0, "delay each fire by up to this much")
	fl.StringVar(&f.overlap, "overlap", "", "skip, buffer_one, allow_all or cancel_other (skip by default)")
	fl.DurationVar(&f.catchup, "catchup-window", 0, "how late a missed tick may still be fired after a downtime (5m by default)")
	fl.StringVar(&f.input, "input", "", "workflow input: a JSON object, @FILE, or @- for stdin")
	fl.BoolVar(&f.paused, "paused", false, "create it paused")
	return cmd
}

func newSchedulesInspectCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "inspect SCHEDULE_ID",
		Short:   "Show a schedule, its next 5 fires, its last fire and its counts (workflow.schedules.inspect)",
		Example: "  mcpflow schedules inspect nightly\n  mcpflow schedules inspect nightly -o json",
		Args:    cobra.ExactArgs(1),
	}, p.MethodSchedulesInspect, scheduleIDParams, scheduleTable)
}

func newSchedulesListCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "list",
		Short:   "List schedules (workflow.schedules.list)",
		Example: "  mcpflow schedules list\n  mcpflow schedules list -o json",
		Args:    cobra.NoArgs,
	}, p.MethodSchedulesList, noParams, func(t *table, res p.ListSchedulesResult) {
		t.row("SCHEDULE", "DEPLOYMENT", "PAUSED", "NEXT FIRE", "FIRED", "MISSED", "SKIPPED")
		for _, s := range res.Schedules {
			var next any
			if len(s.NextFireTimes) > 0 {
				next = epochMs(&s.NextFireTimes[0])
			}
			t.row(s.ID, s.DeploymentID, s.Paused, next, s.Fired, s.Missed, s.Skipped)
		}
	})
}

func newSchedulesPauseCommand(r *remote, verb string) *cobra.Command {
	var note string
	method, short := p.MethodSchedulesPause, "Pause a schedule, with a note (workflow.schedules.pause)"
	if verb == "unpause" {
		method, short = p.MethodSchedulesUnpause, "Unpause a schedule; the ticks of its pause are not caught up (workflow.schedules.unpause)"
	}
	cmd := showing(r, &cobra.Command{
		Use:     verb + " SCHEDULE_ID",
		Short:   short,
		Example: "  mcpflow schedules " + verb + " nightly --note \"database migration\"\n  mcpflow schedules " + verb + " nightly",
		Args:    cobra.ExactArgs(1),
	}, method, func(_ *cobra.Command, args []string) (any, error) {
		return p.PauseScheduleParams{ScheduleID: args[0], Note: note}, nil
	}, scheduleResultTable)
	cmd.Flags().StringVar(&note, "note", "", "why (shown by inspect)")
	return cmd
}

func newSchedulesDeleteCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "delete SCHEDULE_ID",
		Short:   "Delete a schedule; the runs it started are kept (workflow.schedules.delete)",
		Example: "  mcpflow schedules delete nightly",
		Args:    cobra.ExactArgs(1),
	}, p.MethodSchedulesDelete, scheduleIDParams, func(t *table, res p.DeleteScheduleResult) {
		t.pairs("schedule", res.ID, "deleted", res.Deleted)
	})
}

func newSchedulesTriggerCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "trigger SCHEDULE_ID",
		Short:   "Fire a schedule now, under its overlap policy (workflow.schedules.trigger)",
		Example: "  mcpflow schedules trigger nightly\n  mcpflow schedules trigger nightly -o json",
		Args:    cobra.ExactArgs(1),
	}, p.MethodSchedulesTrigger, scheduleIDParams, scheduleResultTable)
}
