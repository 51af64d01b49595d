package node

import (
	"github.com/anthdm/hollywood/actor"
	"github.com/anthdm/hollywood/cluster"

	"github.com/mcpflow/mcpflow/actors/guard"
	"github.com/mcpflow/mcpflow/actors/supervisor"
)

// watcher follows hollywood's cluster events on the engine's event
// stream and tells the supervisor of each member that leaves, so that
// the calls it passed there fail at once instead of at their deadlines.
type watcher struct {
	self       string
	supervisor *actor.PID
	node       *Node
}

func (w *watcher) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case cluster.MemberLeaveEvent:
		if m.Member.ID != w.self {
			w.node.log.Warn("cluster member left", "member", m.Member.ID, "address", m.Member.Host)
			c.Send(w.supervisor, supervisor.NodeLeft{Node: m.Member.ID})
		}
	case cluster.MemberJoinEvent:
		if m.Member.ID != w.self {
			w.node.log.Info("cluster member joined", "member", m.Member.ID, "address", m.Member.Host)
		}
	}
}

// watch subscribes a watcher to the engine's events; unwatch ends it,
// unsubscribing first (a subscriber that stops subscribed makes
// hollywood's event stream spin).
func (n *Node) watch(sup *actor.PID) *actor.PID {
	pid := n.engine.Spawn(guard.Producer(func() actor.Receiver { return &watcher{self: n.id, supervisor: sup, node: n} }, nil),
		"cluster-events")
	n.engine.Subscribe(pid)
	return pid
}

func (n *Node) unwatch(pid *actor.PID) {
	n.engine.Unsubscribe(pid)
	<-n.engine.Poison(pid).Done()
}
