// Package wiretest gives tests actor engines that talk to each other as
// the nodes of a cluster do: through wire.Remote, on loopback.
package wiretest

import (
	"net"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/anthdm/hollywood/remote"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/wire"
)

// stopWait bounds the stop of a remote when its test ends.
const stopWait = 10 * time.Second

// Config is the config of an engine whose remote, a wire.Remote, listens
// on a free loopback port; the remote stops when tb ends (after whatever
// tb cleans up later, which runs first).
func Config(tb testing.TB) actor.EngineConfig {
	tb.Helper()
	is := is.New(tb)
	is.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err) // a free port
	addr := l.Addr().String()
	is.NoErr(l.Close())
	r := wire.NewRemote(addr, remote.NewConfig())
	tb.Cleanup(func() {
		stopped := make(chan struct{})
		go func() {
			r.Stop().Wait()
			close(stopped)
		}()
		select {
		case <-stopped:
		case <-time.After(stopWait):
			tb.Errorf("the remote on %s did not stop within %s", addr, stopWait)
		}
	})
	return actor.NewEngineConfig().WithRemote(r)
}

// Engine starts an engine of Config.
func Engine(tb testing.TB) *actor.Engine {
	tb.Helper()
	e, err := actor.NewEngine(Config(tb))
	is.New(tb).NoErr(err) // the engine starts
	return e
}
