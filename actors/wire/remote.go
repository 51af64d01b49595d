package wire

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/anthdm/hollywood/actor"
	"github.com/anthdm/hollywood/remote"
	"google.golang.org/protobuf/proto"

	"github.com/mcpflow/mcpflow/actors/guard"
)

// gatewayKind and gatewayID name the gateway actor of every node.
const (
	gatewayKind = "wire"
	gatewayID   = "gateway"
)

// Remote is hollywood's remote layer carrying mcpflow's messages: give it
// to the engine (actor.NewEngineConfig().WithRemote). A protobuf message
// (hollywood's cluster's own) is sent as it is; any other goes in an
// Envelope to the receiving node's gateway, which delivers it to its
// target. A message that cannot be encoded is logged and dropped, as
// hollywood drops a message to an unreachable node; it never reaches
// hollywood's serializer, which would crash the process.
type Remote struct {
	inner     *remote.Remote
	advertise string
}

// NewRemote makes the remote layer of a node listening on addr.
func NewRemote(addr string, config remote.Config) *Remote {
	return &Remote{inner: remote.New(addr, config)}
}

// Advertised makes the node known by addr, where the other nodes reach it
// (behind NAT, or listening on every interface), rather than by the
// address it listens on; it returns r.
func (r *Remote) Advertised(addr string) *Remote {
	r.advertise = addr
	return r
}

// Address is the node's address: the Node of its actors' PIDs, which the
// other nodes dial to reach them.
func (r *Remote) Address() string {
	if r.advertise != "" {
		return r.advertise
	}
	return r.inner.Address()
}

// Start starts hollywood's remote and spawns the node's gateway.
func (r *Remote) Start(e *actor.Engine) error {
	if err := r.inner.Start(e); err != nil {
		return fmt.Errorf("start remote: %w", err)
	}
	e.Spawn(guard.Producer(func() actor.Receiver { return gateway{} }, nil), gatewayKind,
		actor.WithID(gatewayID))
	return nil
}

// Stop stops hollywood's remote.
func (r *Remote) Stop() *sync.WaitGroup { return r.inner.Stop() }

// Send sends msg to pid, an actor on another node.
func (r *Remote) Send(pid *actor.PID, msg any, sender *actor.PID) {
	if _, ok := msg.(proto.Message); ok {
		r.inner.Send(pid, msg, sender)
		return
	}
	env, err := Encode(pid.ID, msg)
	if err != nil {
		slog.Error("message not sent to another node", "target", pid.String(), "err", err)
		return
	}
	r.inner.Send(actor.NewPID(pid.Address, gatewayKind+"/"+gatewayID), env, sender)
}

// gateway delivers the messages of the envelopes other nodes send to their
// targets on this node.
type gateway struct{}

// Receive decodes an envelope and delivers its message, with its sender.
func (gateway) Receive(c *actor.Context) {
	env, ok := c.Message().(*Envelope)
	if !ok {
		return
	}
	msg, err := Decode(env)
	if err != nil {
		slog.Error("message from another node dropped", "target", env.GetTarget(), "err", err)
		return
	}
	e := c.Engine()
	e.SendLocal(actor.NewPID(e.Address(), env.GetTarget()), msg, c.Sender())
}
