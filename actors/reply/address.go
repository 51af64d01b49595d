// Package reply owns how an answer finds its way back to whoever asked:
// the address a request carries (the asker's PID and the correlation id
// it gave the request, plain data that can cross a process boundary, never
// a Go closure), the router that hands answers to goroutines that wait
// for them (the API edge, the supervisor's handle), and the Failure an
// answer carries in place of a Go error. An answer is sent like any
// message: the replier never blocks, and an answer nobody waits for any
// more is dropped.
package reply

import "github.com/anthdm/hollywood/actor"

// Address is where the answer to a request goes: the actor that asked (or
// the Router of a goroutine that waits) and the correlation id the asker
// gave the request, which the answer carries back. The zero Address asks
// for no answer.
type Address struct {
	// Node and Actor are the asker's PID: its engine's address ("local"
	// on an engine without a remote) and its actor id.
	Node  string `json:"node,omitempty"`
	Actor string `json:"actor,omitempty"`
	// Correlation names the request among the asker's others.
	Correlation uint64 `json:"correlation,omitempty"`
}

// At addresses answers to pid, naming the request correlation.
func At(pid *actor.PID, correlation uint64) Address {
	if pid == nil {
		return Address{}
	}
	return Address{Node: pid.Address, Actor: pid.ID, Correlation: correlation}
}

// IsZero reports whether a asks for no answer.
func (a Address) IsZero() bool { return a.Actor == "" }

// PID is the asker's PID; nil for the zero Address.
func (a Address) PID() *actor.PID {
	if a.IsZero() {
		return nil
	}
	return actor.NewPID(a.Node, a.Actor)
}

// Answer is a message that answers a request: it carries the request's
// correlation id (its Address.Correlation). An answer sent unasked, such as
// a session's catalog listing after a tools/list_changed, has 0.
type Answer interface {
	Correlation() uint64
}

// Send delivers answer to to, if to asks for one. It never blocks. The
// caller sets the answer's correlation id to to.Correlation. An answer to
// a Router of e goes straight to the goroutine that waits for it.
func Send(e *actor.Engine, to Address, answer Answer) {
	if to.IsZero() {
		return
	}
	if r := localRouter(e, to); r != nil {
		r.deliver(answer)
		return
	}
	e.Send(to.PID(), answer)
}
