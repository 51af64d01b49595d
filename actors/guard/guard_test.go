package guard_test

import (
	"strings"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/guard"
)

// patience bounds every wait that only a broken actor would reach.
const patience = 5 * time.Second

type (
	inc  struct{}
	boom struct{ why string }
	get  struct{}
)

// tally counts inc messages, answers get with the count and panics on boom
// after counting it, so state changed before a panic must survive it.
type tally struct{ n int }

func (a *tally) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case inc:
		a.n++
	case boom:
		a.n += 100
		panic(m.why)
	case get:
		c.Respond(a.n)
	}
}

// reports collects panics without ever blocking the reporter.
func reports() (chan guard.Panic, func(guard.Panic)) {
	ch := make(chan guard.Panic, 16)
	return ch, func(p guard.Panic) {
		select {
		case ch <- p:
		default:
		}
	}
}

func spawn(t *testing.T, report func(guard.Panic), opts ...actor.OptFunc) (*actor.Engine, *actor.PID) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	is.NoErr(err) // new engine
	pid := e.Spawn(guard.Producer(func() actor.Receiver { return &tally{} }, report), "tally", opts...)
	t.Cleanup(func() {
		select {
		case <-e.Poison(pid).Done():
		case <-time.After(patience):
			is.NewRelaxed(t).Fail() // the actor stops in time
		}
	})
	return e, pid
}

func count(t *testing.T, e *actor.Engine, pid *actor.PID) int {
	t.Helper()
	is := is.New(t)
	is.Helper()
	v, err := e.Request(pid, get{}, patience).Result()
	is.NoErr(err) // the actor answers
	n, ok := v.(int)
	is.True(ok) // with its count
	return n
}

func awaitReport(t *testing.T, ch chan guard.Panic) guard.Panic {
	t.Helper()
	is := is.New(t)
	is.Helper()
	select {
	case p := <-ch:
		return p
	case <-time.After(patience):
		is.Fail() // the panic is reported in time
		return guard.Panic{}
	}
}

func TestRecoverTurnsAPanicIntoAReportAndKeepsTheActorsState(t *testing.T) {
	is := is.New(t)
	ch, report := reports()
	e, pid := spawn(t, report)

	e.Send(pid, inc{})
	e.Send(pid, inc{})
	e.Send(pid, boom{why: "kaboom"})
	e.Send(pid, inc{})
	is.Equal(count(t, e, pid), 103) // state from before, during and after the panic survives

	p := awaitReport(t, ch)
	is.True(p.PID.Equals(pid))               // the report names the actor
	is.Equal(p.Message, boom{why: "kaboom"}) // and the message it panicked on
	is.Equal(p.Value, "kaboom")              // and the panic value
	is.True(len(p.Stack) > 0)                // with a stack
	is.True(strings.Contains(p.Error(), pid.String()))
	is.True(strings.Contains(p.Error(), "guard_test.boom"))
	is.True(strings.Contains(p.Error(), "kaboom"))
	is.Equal(len(ch), 0) // one panic, one report
}

func TestRecoverKeepsTheProcessAliveBeyondHollywoodsRestartBudget(t *testing.T) {
	is := is.New(t)
	ch, report := reports()
	// Without the guard, the first panic would exceed a budget of zero
	// restarts, which hollywood v1.0.5 does not survive.
	e, pid := spawn(t, report, actor.WithMaxRestarts(0))
	for range 3 {
		e.Send(pid, boom{why: "again"})
	}
	e.Send(pid, inc{})
	is.Equal(count(t, e, pid), 301) // the same actor instance answers after every panic
	for range 3 {
		is.Equal(awaitReport(t, ch).Value, "again") // each panic is reported
	}
}

func TestRecoverWithoutAReporterStillRecovers(t *testing.T) {
	is := is.New(t)
	e, pid := spawn(t, nil, actor.WithMaxRestarts(0))
	e.Send(pid, boom{why: "unreported"})
	e.Send(pid, inc{})
	is.Equal(count(t, e, pid), 101) // a nil report only logs
}
