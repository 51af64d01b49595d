package session

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/mcpflow/mcpflow/actors/reply"
)

// Sealer seals the upstream session id a task's TaskRef keeps, and opens
// it again after a restart (actors/secrets.Keyring implements it).
type Sealer interface {
	Seal(aad, plaintext []byte) (string, error)
	Open(aad []byte, value string) ([]byte, error)
}

// taskAAD binds a sealed upstream session id to its use and connection.
func (a *Actor) taskAAD() []byte { return []byte("mcpflow task session v1 " + a.conn.ID) }

// noteTaskOrigin makes the TaskRef part of the session just opened: a
// random key that names it, its generation and protocol version, and its
// HTTP session id, sealed, where it has one and a Sealer is set.
func (a *Actor) noteTaskOrigin() {
	key := make([]byte, 12)
	_, _ = rand.Read(key) // never fails (crypto/rand)
	a.taskOrigin = TaskRef{Generation: a.generation, Session: hex.EncodeToString(key), ProtocolVersion: a.session.InitializeResult().ProtocolVersion}
	if _, ok := a.transport.(*httpTransport); !ok || a.session.ID() == "" || a.opts.Sealer == nil {
		return
	}
	sealed, err := a.opts.Sealer.Seal(a.taskAAD(), []byte(a.session.ID()))
	if err != nil {
		slog.Warn("the session's id cannot be sealed: its tasks will not survive a restart", "connection", a.conn.ID, "err", err)
		return
	}
	a.taskOrigin.Upstream = sealed
}

// taskRun prepares the task call of call on the open session: on the
// session itself, or (a task created on a session this actor no longer
// holds, as after a restart) on that one, by its HTTP session id. A
// task that cannot be reached any more fails with ErrTaskLost.
func (a *Actor) taskRun(call CallTool, keep *atomic.Bool) (taskRun, error) {
	linker, ok := a.transport.(taskLinker)
	version := a.session.InitializeResult().ProtocolVersion
	if !ok || version >= statelessEra {
		return taskRun{}, fmt.Errorf("connection %q: %w: its session (%s, protocol %s) cannot run MCP tasks: mcpflow calls tasks over stdio and streamable HTTP sessions of protocol 2025-11-25 and before",
			a.conn.ID, ErrProtocol, a.conn.Transport.Kind, version)
	}
	sessionID := a.session.ID()
	if ref := call.Task.Resume; ref != nil && ref.Session != a.taskOrigin.Session {
		var err error
		if sessionID, err = a.earlierSession(*ref); err != nil {
			return taskRun{}, err
		}
		version = ref.ProtocolVersion
	}
	link, err := linker.taskLink(sessionID, version)
	if err != nil {
		return taskRun{}, fmt.Errorf("connection %q: %w", a.conn.ID, err)
	}
	engine, to := a.engine, call.Reply
	t := a.transport
	return taskRun{
		link: link, call: call, origin: a.taskOrigin, stopping: a.ctx, keep: keep,
		created: func(ref TaskRef) {
			if call.Task.Tell {
				reply.Send(engine, to, TaskCreated{CorrelationID: to.Correlation, Task: ref})
			}
		},
		leave: func() { keepUpstream(t) },
	}, nil
}

// earlierSession is the HTTP session id of the session ref's task was
// created on, which this actor no longer holds.
func (a *Actor) earlierSession(ref TaskRef) (string, error) {
	lost := func(why string) error {
		return fmt.Errorf("%w: connection %q: task %s was created on session generation %d, which has ended: %s",
			ErrTaskLost, a.conn.ID, ref.ID, ref.Generation, why)
	}
	if _, ok := a.transport.(*httpTransport); !ok {
		return "", lost("a stdio server's tasks end with its process")
	}
	if ref.Upstream == "" || a.opts.Sealer == nil {
		return "", lost("its HTTP session id was not kept")
	}
	id, err := a.opts.Sealer.Open(a.taskAAD(), ref.Upstream)
	if err != nil {
		return "", lost(fmt.Sprintf("its HTTP session id cannot be opened (%v)", err))
	}
	return string(id), nil
}

// keepUpstream keeps t's upstream session when t closes: a task left
// running on it goes on, and a restarted mcpflow polls it there.
func keepUpstream(t any) {
	if h, ok := t.(*httpTransport); ok {
		h.keep.Store(true)
	}
}

// catalogLink is the link a catalog listing reads the tools' task
// support on: the open session's, where it can carry tasks; nil
// otherwise.
func (a *Actor) catalogLink() taskLink {
	linker, ok := a.transport.(taskLinker)
	if !ok || a.session.InitializeResult().ProtocolVersion >= statelessEra {
		return nil
	}
	link, err := linker.taskLink(a.session.ID(), a.session.InitializeResult().ProtocolVersion)
	if err != nil {
		return nil
	}
	return link
}
