// Package supervisortest gives tests a real supervisor that stops when
// they end, with session timeouts short enough for a test.
package supervisortest

import (
	"context"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
)

// stopWait bounds the supervisor's stop when its test ends.
const stopWait = 10 * time.Second

// Options are the default options with a test's session timeouts: 5 s
// to connect and per call, 1 s to close.
func Options() supervisor.Options {
	opts := supervisor.DefaultOptions()
	opts.Session.ConnectTimeout, opts.Session.CallTimeout, opts.Session.CloseTimeout = 5*time.Second, 5*time.Second, time.Second
	return opts
}

// Spawn spawns a supervisor on e of conns, reached through factory, that
// saves catalogs to catalogs; it stops, within stopWait, when tb ends.
func Spawn(tb testing.TB, e *actor.Engine, conns []config.Connection, factory session.TransportFactory, catalogs store.Catalogs, opts supervisor.Options) *supervisor.Handle {
	tb.Helper()
	sup := supervisor.Spawn(e, conns, factory, catalogs, opts)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stopWait)
		defer cancel()
		is.New(tb).NoErr(sup.Stop(ctx)) // the supervisor stops
	})
	return sup
}
