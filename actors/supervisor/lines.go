package supervisor

import (
	"context"
	"maps"
	"sync/atomic"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcpflow/mcpflow/actors/session"
)

// Lines are the direct lines from callers (runs, direct calls) to the
// supervisor's live shared session actors: a tool call goes over its
// connection's open line straight to the session actor's inbox, one actor
// hop fewer than through the supervisor's. A call the line cannot take
// goes to the supervisor, which routes it as it always did: one not yet
// spawned, scoped, degraded, owned by another node, or stopping.
//
// The fence is each line's door. hollywood drops in silence a message
// that reaches a stopped actor, and one queued far enough behind its
// poison pill; so the supervisor closes a session actor's door before it
// poisons it, and enqueues the pill only once the last caller that
// entered has left, its message in the inbox ahead of the pill, where
// the actor handles it as it handles one the supervisor forwarded. A
// session actor that panics bars its own door as it reports the panic,
// so that a call sent after the report reaches the supervisor after it
// too, and goes to the successor, as it did before lines. A caller that
// finds the door closed or barred, or no door, asks the supervisor.
//
// The supervisor, and only it, opens and closes doors, from its inbox:
// the map is copied on each change and read without a lock.
type Lines struct {
	doors atomic.Pointer[map[string]*door]
}

// NewLines returns lines with none open.
func NewLines() *Lines {
	l := &Lines{}
	l.doors.Store(&map[string]*door{})
	return l
}

// Call sends m to the session actor of its connection over the open line,
// or to supervisor when the line cannot take it (a scoped call: lines go
// to shared sessions only). A nil Lines sends every call to supervisor.
func (l *Lines) Call(e *actor.Engine, supervisor *actor.PID, m session.CallTool) {
	if m.Scope != "" || !l.send(e, m.Connection, m) {
		e.Send(supervisor, m)
	}
}

// send sends msg through the open door of connection id and reports
// whether it did: false with no door, a closed one, or a tenure (in a
// cluster) its node's clock says has ended, which the supervisor places
// again.
func (l *Lines) send(e *actor.Engine, id string, msg any) bool {
	if l == nil {
		return false
	}
	d := (*l.doors.Load())[id]
	if d == nil || !d.enter() {
		return false
	}
	defer d.leave()
	if d.tenure != nil && !d.tenure.Valid() {
		return false
	}
	e.Send(d.pid, msg)
	return true
}

// open opens the line of connection id to its new session actor pid,
// which holds tenure in a cluster (nil otherwise).
func (l *Lines) open(id string, pid *actor.PID, tenure session.Tenure) {
	if l == nil {
		return
	}
	l.swap(func(doors map[string]*door) { doors[id] = &door{pid: pid, tenure: tenure} })
}

// bar refuses every call from now on at the door of connection id's
// session actor pid, if it is still open: pid panicked, and the
// supervisor, told so, is to replace it. Safe from any goroutine.
func (l *Lines) bar(id string, pid *actor.PID) {
	if l == nil {
		return
	}
	if d := (*l.doors.Load())[id]; d != nil && d.pid.Equals(pid) {
		d.state.Or(doorBarred)
	}
}

// close closes the line of connection id to its session actor pid and
// poisons the actor once no caller is sending to it: at once, or when the
// last one leaves. The context ends when the actor has stopped.
func (l *Lines) close(id string, pid *actor.PID, poison func() context.Context) context.Context {
	var d *door
	if l != nil {
		if open := (*l.doors.Load())[id]; open != nil && open.pid.Equals(pid) {
			d = open
			l.swap(func(doors map[string]*door) { delete(doors, id) })
		}
	}
	if d == nil {
		return poison()
	}
	return d.close(poison)
}

// swap replaces the doors with a copy that change edited.
func (l *Lines) swap(change func(map[string]*door)) {
	doors := maps.Clone(*l.doors.Load())
	change(doors)
	l.doors.Store(&doors)
}

// door is the way into one session actor: how many callers are sending
// through it, and whether it is barred or closed. One atomic word holds
// them all, so that exactly one of the closer and the callers sees the
// closed door empty, and that one poisons the actor.
type door struct {
	pid    *actor.PID
	tenure session.Tenure
	// state is the number of callers inside (doorInside), with doorBarred
	// set once the actor panicked and doorClosed once the supervisor
	// closed the door.
	state atomic.Int64
	// stop enqueues the actor's poison pill. It is written before
	// doorClosed is set, and read only by whoever sees the door closed
	// and empty.
	stop func()
}

// The bits of door.state: the callers inside are counted below
// doorBarred.
const (
	doorBarred = int64(1) << 61
	doorClosed = int64(1) << 62
	doorInside = doorBarred - 1
)

// enter lets a caller in, unless the door is barred or closed.
func (d *door) enter() bool {
	for {
		s := d.state.Load()
		if s&(doorBarred|doorClosed) != 0 {
			return false
		}
		if d.state.CompareAndSwap(s, s+1) {
			return true
		}
	}
}

// leave lets a caller out; the last one out of a closed door stops the
// actor.
func (d *door) leave() {
	if s := d.state.Add(-1); s&doorClosed != 0 && s&doorInside == 0 {
		d.stop()
	}
}

// close closes the door; the actor is poisoned now if nobody is inside,
// or by the last caller to leave. The context ends when the actor has
// stopped.
func (d *door) close(poison func() context.Context) context.Context {
	stopped, cancel := context.WithCancel(context.Background())
	d.stop = func() { context.AfterFunc(poison(), cancel) }
	if s := d.state.Or(doorClosed); s&doorInside == 0 {
		d.stop()
	}
	return stopped
}
