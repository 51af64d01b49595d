package runs

import (
	"context"
	"fmt"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcpflow/mcpflow/actors/guard"
	"github.com/mcpflow/mcpflow/actors/run"
)

// Nodes is what the manager knows of the other nodes of its cluster; nil
// on a node alone.
type Nodes interface {
	// Peers returns the PIDs of the run desks (DeskAt) of the other live
	// nodes, never this node's own.
	Peers() []*actor.PID
}

// The run desk's actor kind and id: its PID's id is "runs/desk" on every
// node.
const (
	deskKind = "runs"
	deskID   = "desk"
)

// DeskAt is the PID of the run desk of the node whose engine has address
// (its actor remote's host:port).
func DeskAt(address string) *actor.PID { return actor.NewPID(address, deskKind+"/"+deskID) }

// Desk is a node's run desk: the actor that other nodes address, knowing
// only a run's id, to reach the actor of a run this node runs. It answers
// run.CancelByID by forwarding a run.Cancel to the run's actor; a run that
// is not live here is ignored.
type Desk struct {
	engine *actor.Engine
	pid    *actor.PID
}

// SpawnDesk spawns the node's run desk on the manager's engine; Stop
// ends it. One node has one desk.
func (m *Manager) SpawnDesk() *Desk {
	pid := m.cfg.Engine.Spawn(guard.Producer(func() actor.Receiver { return desk{m} }, nil), deskKind,
		actor.WithID(deskID))
	return &Desk{engine: m.cfg.Engine, pid: pid}
}

// PID is the desk's PID.
func (d *Desk) PID() *actor.PID { return d.pid }

// Stop stops the desk; it returns when it is gone or ctx ends.
func (d *Desk) Stop(ctx context.Context) error {
	select {
	case <-d.engine.Poison(d.pid).Done():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop run desk: %w", ctx.Err())
	}
}

// desk is the run desk's actor.
type desk struct{ m *Manager }

// Receive forwards each cancel, and each answer to an upstream interrupt,
// to the run's actor, if the run is live here.
func (d desk) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case run.CancelByID:
		if pid := d.m.liveRun(m.RunID); pid != nil {
			c.Send(pid, run.Cancel{Reason: m.Reason, Reply: m.Reply})
		}
	case run.AnswerByID:
		if pid := d.m.liveRun(m.RunID); pid != nil {
			c.Send(pid, m.Answer)
		}
	}
}

// liveRun is the actor of run id's current incarnation, if it is live on
// this node; nil otherwise.
func (m *Manager) liveRun(id string) *actor.PID {
	if live, ok := m.live.Load(id); ok {
		return live.(*liveRun).pid.Load()
	}
	return nil
}
