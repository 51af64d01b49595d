package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// ping checks, every KeepAlive, that the session answers; a ping that
// fails ends the session.
func (a *Actor) ping(attempt int) {
	if attempt != a.attempt || a.session == nil || a.pinging {
		return
	}
	a.pinging = true
	engine, self, cs := a.engine, a.self, a.session
	ctx, cancel := context.WithTimeout(a.ctx, max(a.opts.KeepAlive/2, time.Millisecond))
	go func() {
		defer cancel()
		engine.Send(self, pinged{attempt: attempt, err: cs.Ping(ctx, nil)})
	}()
}

func (a *Actor) onPinged(m pinged) {
	if m.attempt != a.attempt || a.session == nil {
		return
	}
	a.pinging = false
	switch {
	case m.err == nil:
		a.lastSuccess = a.clock.Now()
	case errors.Is(m.err, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}):
		return // the server does not answer pings: stop pinging
	default:
		a.dropSession(fmt.Errorf("keepalive failed: %w", m.err), true)
		return
	}
	a.after(&a.keepTimer, a.opts.KeepAlive, keepaliveDue{attempt: m.attempt})
}
