package service_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/wire/wiretest"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/service"
)

// peers are the desks of a cluster's other nodes.
type peers []*actor.PID

func (p peers) Peers() []*actor.PID { return p }

// twoNodes is node A, a full service whose run desk is up, and node B, a
// service on another engine, over the same store, that knows A as its
// only peer.
func twoNodes(t *testing.T) (a *fixture, b *service.Service) {
	t.Helper()
	a = newFixtureOn(t, wiretest.Config(t))
	desk := a.svc.Runs.SpawnDesk()
	t.Cleanup(func() { is.New(t).NoErr(desk.Stop(bounded(t))) }) // the desk stops
	is.New(t).Equal(desk.PID().String(), runs.DeskAt(a.engine.Address()).String())

	e, err := actor.NewEngine(wiretest.Config(t))
	is.New(t).NoErr(err) // node B's engine
	b = &service.Service{Store: a.svc.Store}
	b.Runs = runs.New(runs.Config{Store: b.Store, Engine: e, Replies: replies(t, e), Nodes: peers{runs.DeskAt(a.engine.Address())}})
	return a, b
}

// cancelOn calls runs.cancel on svc.
func cancelOn(t *testing.T, svc *service.Service, params string) (protocol.RunResult, error) {
	t.Helper()
	res, err := svc.Methods()[protocol.MethodRunsCancel].Handler(bounded(t), json.RawMessage(params))
	if err != nil {
		return protocol.RunResult{}, err
	}
	return res.(protocol.RunResult), nil
}

// TestARunLiveOnAnotherNodeIsCancelledThroughItsDesk: node B, where the
// run is not live, asks node A's desk over the wire; A's run actor
// cancels its call and commits, and its answer comes back to B's router.
func TestARunLiveOnAnotherNodeIsCancelledThroughItsDesk(t *testing.T) {
	is := is.New(t)
	a, b := twoNodes(t)
	sleepDeployment(t, a)
	start := startAsync(a, `{"deployment_id":"nap","workflow_input":{"ms":60000}}`)
	id := runningIDs(t, a, 1)[0]

	began := time.Now()
	res, err := cancelOn(t, b, `{"run_id":"`+id+`","reason":"from node B"}`)
	is.NoErr(err) // node B cancels it
	t.Logf("runs.cancel on another node answered in %v", time.Since(began))
	is.Equal(res.Status, "cancelled") // with the final record the run committed
	is.True(strings.HasPrefix(*res.Error, "cancelled: from node B"))

	started := <-start
	is.NoErr(started.err)
	is.Equal(started.res.(protocol.RunResult).Status, "cancelled") // node A's runs.start sees the same end
	stored, err := a.store.GetRun(bounded(t), id)
	is.NoErr(err)
	is.Equal(stored.Status, "cancelled")
}

// TestARunThatIsNotRunningIsNotAskedAbout: a cancel of a run that the
// store has ended is answered from the store at once, without asking
// another node.
func TestARunThatIsNotRunningIsNotAskedAbout(t *testing.T) {
	is := is.New(t)
	a, b := twoNodes(t)
	counterDeployment(t, a)
	done := startRun(t, a, `{"deployment_id":"count"}`)
	is.Equal(done.Status, "completed")

	began := time.Now()
	_, err := cancelOn(t, b, `{"run_id":"`+*done.RunID+`"}`)
	domainError(t, err, "ValueError")       // a completed run cannot be cancelled
	is.True(time.Since(began) < patience/2) // no wait for an answer that cannot come
	_, err = cancelOn(t, b, `{"run_id":"run-none"}`)
	domainError(t, err, "KeyError") // nor can an unknown one
}
