package session

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/reply"
)

// inflight is work sent on a session.
type inflight struct {
	w         work
	cancel    context.CancelFunc
	attempt   int
	gen       int64
	transport mcp.Transport
	started   time.Time // when it was sent
	// keepTask is set for a task call (nil otherwise): once stored true,
	// the call's end leaves its task running upstream.
	keepTask *atomic.Bool
}

// start runs w on the open session in a goroutine.
func (a *Actor) start(w work) {
	if err := a.fenced(); err != nil {
		a.fail(w, err)
		return
	}
	if a.refuseReplaced(w) {
		return
	}
	var task *taskRun
	var keep *atomic.Bool
	if w.call != nil && w.call.Task != nil {
		keep = &atomic.Bool{}
		t, err := a.taskRun(*w.call, keep)
		if err != nil {
			a.fail(w, err)
			return
		}
		task = &t
	}
	run := a.nextRun
	a.nextRun++
	deadline := w.deadline()
	if deadline.IsZero() {
		deadline = time.Now().Add(a.opts.CallTimeout)
	}
	ctx, cancel := context.WithDeadline(a.ctx, deadline)
	a.running[run] = &inflight{w: w, cancel: cancel, attempt: a.attempt, gen: a.generation, transport: a.transport, started: time.Now(), keepTask: keep}
	engine, self, cs, connID, token, policy := a.engine, a.self, a.session, a.conn.ID, progressToken(run), a.inputPolicy()
	if w.list != nil {
		a.refresh.running = true
		link := a.catalogLink()
		go func() {
			defer cancel()
			snap, err := listCatalog(ctx, cs, connID)
			if err == nil && link != nil {
				if terr := listTaskSupport(ctx, link, &snap); terr != nil {
					slog.Warn("the tools' task support could not be listed; their calls are not made as tasks", "connection", connID, "err", terr)
				}
			}
			engine.Send(self, listDone{run: run, result: CatalogListed{Snapshot: snap, Error: reply.Fail(err)}, rpcErr: err})
		}()
		return
	}
	if task != nil {
		task.token = token
		if l, ok := task.link.(*httpLink); ok {
			l.ask = a.callAsker(run)
		}
		go func() {
			defer cancel()
			result, err, rpcErr := task.run(ctx)
			engine.Send(self, callDone{run: run, result: result, err: err, rpcErr: rpcErr})
		}()
		return
	}
	go func() {
		defer cancel()
		var (
			result      ToolResult
			err, rpcErr error
		)
		switch {
		case w.call != nil:
			result, err, rpcErr = callTool(ctx, cs, *w.call, token, policy)
		case w.prompt != nil:
			result, err, rpcErr = getPrompt(ctx, cs, *w.prompt, token)
		case w.complete != nil:
			result, err, rpcErr = complete(ctx, cs, *w.complete)
		default:
			result, err, rpcErr = readResource(ctx, cs, *w.read, token)
		}
		engine.Send(self, callDone{run: run, result: result, err: err, rpcErr: rpcErr})
	}()
}

func (a *Actor) onCallDone(m callDone) {
	// What the upstream reported before it answered goes first: go-sdk
	// hands notifications and answers over on goroutines of their own.
	a.onNoticed()
	f, ok := a.running[m.run]
	if !ok {
		return // answered already: its session was lost
	}
	delete(a.running, m.run)
	a.withdrawAsks(m.run, "answered first")
	a.observeCall(f, m.result.Outcome, m.err)
	r := m.result
	r.Generation, r.Instance = f.gen, a.identity().Instance
	r.Node, r.Epoch = a.tenure()
	current := f.attempt == a.attempt && a.session != nil
	switch failure := classify(m.rpcErr, f.transport); failure {
	case failNone, failProtocol:
		// An answer proves the session alive as a ping would: pings
		// missed meanwhile (a busy or starved peer) are forgiven.
		a.lastSuccess, a.missed = a.clock.Now(), 0
		if current && !a.answered {
			a.proved()
		}
		if failure == failProtocol {
			m.err = protocolError{m.err}
		}
		r.Error = a.failure(m.err)
		a.answer(f.w, r)
	case failDeadline:
		r.Error = a.failure(m.err)
		a.answer(f.w, r)
	case failUnsent:
		if !f.w.replayed {
			a.replay(f.w, m.rpcErr, current)
			return
		}
		a.answerLost(f, m.rpcErr)
		if current {
			a.dropSession(m.rpcErr, false)
		}
	case failLost:
		a.answerLost(f, m.rpcErr)
		if current {
			a.dropSession(m.rpcErr, false)
		}
	}
	a.drain()
}

// failure is err as a call's answer carries it: its text, which may be
// an upstream's own words (a JSON-RPC error's message), redacted of the
// connection's secrets and bounded (catalog.BoundReason); its code kept.
func (a *Actor) failure(err error) *reply.Failure {
	f := reply.Fail(err)
	if f != nil {
		f.Message = catalog.BoundReason(Redact(a.conn, f.Message))
	}
	return f
}

// replay sends work again, first in line, on a fresh session: the server
// refused it for an unknown session (HTTP 404 or 400, as after an upstream
// restart), or it never reached the server, so it never ran and a replay
// cannot repeat a side effect. Work that failed any other way is not
// replayed: whether it ran is unknown.
func (a *Actor) replay(w work, cause error, current bool) {
	if a.degraded {
		a.fail(w, a.degradedError())
		return
	}
	if a.loginNeeded != nil {
		a.fail(w, a.loginNeeded)
		return
	}
	w.replayed = true
	a.queue = append([]work{w}, a.queue...)
	a.scheduleSweep(w.deadline())
	if current {
		a.dropSession(cause, false) // arranges the session the replay runs on
	}
	a.drain()
}

// answerLost fails work that was in flight on a session that died.
func (a *Actor) answerLost(f *inflight, cause error) {
	err := fmt.Errorf("%w: connection %q: session generation %d ended during %s, which may or may not have run: %s",
		ErrSessionLost, a.conn.ID, f.gen, f.w.what(), Redact(a.conn, cause.Error()))
	if f.w.list != nil {
		a.refresh.running = false
		a.fail(f.w, err)
		return
	}
	node, epoch := a.tenure()
	a.answer(f.w, ToolResult{Error: reply.Fail(err), Generation: f.gen, Instance: a.identity().Instance, Node: node, Epoch: epoch})
}
