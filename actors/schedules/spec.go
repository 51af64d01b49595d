package schedules

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/mcpflow/mcpflow/actors/store"
)

// MaxJitter bounds a spec's jitter, and MaxInterval its interval.
const (
	MaxJitter   = 24 * time.Hour
	MaxInterval = 366 * 24 * time.Hour
)

// parser reads five fields or six (seconds first), descriptors such as
// @hourly and @every, and a CRON_TZ= or TZ= prefix.
var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Spec is a compiled store.ScheduleSpec: the ticks it names, and the
// jitter each fire is delayed by.
type Spec struct {
	cron     cron.Schedule // nil for an interval
	interval time.Duration
	jitter   time.Duration
}

// Compile checks spec and compiles it: exactly one of cron and
// interval_seconds, a known time zone, a jitter within MaxJitter.
func Compile(spec store.ScheduleSpec) (Spec, error) {
	if spec.JitterSeconds < 0 || time.Duration(spec.JitterSeconds)*time.Second > MaxJitter {
		return Spec{}, fmt.Errorf("jitter_seconds must be between 0 and %d", int(MaxJitter/time.Second))
	}
	out := Spec{jitter: time.Duration(spec.JitterSeconds) * time.Second}
	switch {
	case spec.Cron != "" && spec.IntervalSeconds != 0:
		return Spec{}, errors.New("a spec is a cron expression or an interval, not both")
	case spec.IntervalSeconds != 0:
		out.interval = time.Duration(spec.IntervalSeconds) * time.Second
		if out.interval < time.Second || out.interval > MaxInterval {
			return Spec{}, fmt.Errorf("interval_seconds must be between 1 and %d", int(MaxInterval/time.Second))
		}
		if spec.TimeZone != "" {
			if _, err := time.LoadLocation(spec.TimeZone); err != nil {
				return Spec{}, fmt.Errorf("time_zone %q: %w", spec.TimeZone, err)
			}
		}
		return out, nil
	case spec.Cron == "":
		return Spec{}, errors.New("a spec needs a cron expression or interval_seconds")
	}
	expr := spec.Cron
	if spec.TimeZone != "" {
		if strings.HasPrefix(expr, "CRON_TZ=") || strings.HasPrefix(expr, "TZ=") {
			return Spec{}, errors.New("give the time zone as time_zone or as the cron's CRON_TZ= prefix, not both")
		}
		expr = "CRON_TZ=" + spec.TimeZone + " " + expr
	}
	sched, err := parser.Parse(expr)
	if err != nil {
		return Spec{}, fmt.Errorf("cron %q: %w", spec.Cron, err)
	}
	out.cron = sched
	if out.Next(time.Unix(0, 0)).IsZero() {
		return Spec{}, fmt.Errorf("cron %q never fires", spec.Cron)
	}
	return out, nil
}

// Next is the first tick strictly after t; zero if there is none. An
// interval's ticks are the multiples of the interval since the Unix
// epoch, so that every node and every restart names the same ticks.
func (s Spec) Next(t time.Time) time.Time {
	if s.cron != nil {
		return s.cron.Next(t)
	}
	n := s.interval.Nanoseconds()
	return time.Unix(0, (t.UnixNano()/n+1)*n)
}

// FireAt is when the tick of schedule id is fired: the tick delayed by
// its jitter, a fixed fraction of the spec's jitter drawn from a hash of
// the schedule and the tick, so that every node draws the same.
func (s Spec) FireAt(id string, tick time.Time) time.Time {
	if s.jitter <= 0 {
		return tick
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d", id, tick.UnixNano())
	return tick.Add(time.Duration(h.Sum64() % uint64(s.jitter)))
}

// NextFires lists the next n fire times of schedule id after t.
func (s Spec) NextFires(id string, t time.Time, n int) []time.Time {
	out := make([]time.Time, 0, n)
	for tick := s.Next(t); !tick.IsZero() && len(out) < n; tick = s.Next(tick) {
		out = append(out, s.FireAt(id, tick))
	}
	return out
}
