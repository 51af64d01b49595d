// Package replytest gives tests a reply.Router that stops when they end.
package replytest

import (
	"context"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/reply"
)

// stopWait bounds the router's stop when its test ends.
const stopWait = 5 * time.Second

// Router spawns a router named name on e for the answers tb waits for;
// it stops, within stopWait, when tb ends.
func Router(tb testing.TB, e *actor.Engine, name string) *reply.Router {
	tb.Helper()
	r := reply.NewRouter(e, name)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stopWait)
		defer cancel()
		is.New(tb).NoErr(r.Stop(ctx)) // the router stops
	})
	return r
}
