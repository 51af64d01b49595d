package integration

import (
	"context"
	"errors"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// startInFlight starts n runs of deployment through each of clients,
// without waiting for them to end (wait false: answered once created,
// before the first step runs), each waiting ms in its tool, and returns
// their ids.
func startInFlight(t *testing.T, clients []*client.Client, deployment string, n, ms int) []string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	wait := false
	var ids []string
	for _, c := range clients {
		for range n {
			run, err := c.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{"ms": ms}, Wait: &wait})
			is.NoErr(err) // acknowledged
			ids = append(ids, *run.RunID)
		}
	}
	return ids
}

// probeUntilServed starts counter runs through clients in turn, each
// given a second, until one completes; it returns that run and when it
// was started.
func probeUntilServed(t *testing.T, clients []*client.Client, deployment string, within time.Duration) (p.RunResult, time.Time) {
	t.Helper()
	deadline := time.Now().Add(within)
	for i := 0; time.Now().Before(deadline); i++ {
		ctx, cancel := context.WithTimeout(testContext(t), time.Second)
		started := time.Now()
		run, err := clients[i%len(clients)].RunDeployment(ctx, p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{},
			TraceRange: &p.TraceRange{Limit: ptr(10)}})
		cancel()
		if err == nil && run.Status == "completed" {
			return run, started
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Logf("probe %d: %v", i, err)
		}
		if err == nil {
			t.Logf("probe %d: %s %s", i, run.Status, deref(run.Error))
		}
		<-time.After(100 * time.Millisecond) // probe interval
	}
	t.Fatalf("no run was served within %s", within)
	return p.RunResult{}, time.Time{}
}

// callEntries reads the trace of every run in the store through c: the
// entries of the calls that reached a session.
func callEntries(t *testing.T, c *client.Client) []p.TraceEntry {
	t.Helper()
	is := is.New(t)
	is.Helper()
	ctx := testContext(t)
	list, err := c.ListRuns(ctx, p.ListRunsParams{Limit: ptr(100)})
	is.NoErr(err)
	var out []p.TraceEntry
	for _, r := range list.Runs {
		var res p.RunResult
		is.NoErr(c.Call(ctx, p.MethodRunsTrace, p.TraceParams{RunID: r.RunID, TraceRange: p.TraceRange{Limit: ptr(100)}}, &res))
		for _, e := range res.Trace {
			if e.Generation > 0 {
				out = append(out, e)
			}
		}
	}
	return out
}

// oneSessionAtATime checks, from the traces, that no connection ever had
// two live sessions: each session generation belongs to one node under
// one lease epoch, and a later generation never has an earlier epoch.
func oneSessionAtATime(t *testing.T, entries []p.TraceEntry) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	type tenure struct {
		node  string
		epoch int64
	}
	byGen := map[int64]tenure{}
	for _, e := range entries {
		got := tenure{e.Node, e.Epoch}
		if prev, ok := byGen[e.Generation]; ok && prev != got {
			t.Logf("generation %d served by %+v and %+v", e.Generation, prev, got)
			is.Fail() // one generation, one node and epoch
		}
		byGen[e.Generation] = got
	}
	gens := make([]int64, 0, len(byGen))
	for g := range byGen {
		gens = append(gens, g)
	}
	slices.Sort(gens)
	for i := 1; i < len(gens); i++ {
		is.True(byGen[gens[i]].epoch >= byGen[gens[i-1]].epoch) // a later session, a later or the same tenure
	}
}

// others are the nodes of ids but node.
func others(ids []string, node string) []string {
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == node })
}

// ownedCluster is three nodes serving one stateful stdio connection, its
// counter and sleep deployments, and the owner of the connection's
// session after a first run.
type ownedCluster struct {
	*testCluster
	counter, sleeper string
	first            p.TraceEntry // the first run's call
	owner            string
	survivors        []string // the other two nodes
}

func startOwnedCluster(t *testing.T) ownedCluster {
	t.Helper()
	c := newTestCluster(t, clusterTTL, stdioSource("counter.default", fakeMCP))
	ids := []string{"a", "b", "c"}
	c.startAll(t, ids...)
	onA := c.client(t, "a")
	o := ownedCluster{testCluster: c,
		counter: buildCounterDeployment(t, onA, "counter.default"),
		sleeper: buildToolDeploymentFor(t, onA, "counter.default", "sleep"),
	}
	o.first = callEntry(t, runCounterOn(t, onA, o.counter))
	o.owner = o.first.Node
	o.survivors = others(ids, o.owner)
	return o
}

func TestClusterFailoverWhenTheOwningNodeIsKilled(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	c := startOwnedCluster(t)
	counter, sleeper, first, owner, survivors := c.counter, c.sleeper, c.first, c.owner, c.survivors
	clients := map[string]*client.Client{}
	for _, id := range []string{"a", "b", "c"} {
		clients[id] = c.client(t, id)
	}
	survivorClients := []*client.Client{clients[survivors[0]], clients[survivors[1]]}

	inFlight := startInFlight(t, []*client.Client{clients[owner], clients[survivors[0]], clients[survivors[1]]}, sleeper, 3, 20_000)
	// Runs in a step that is safe to repeat (idle: idempotentHint), on the
	// owner and on a survivor: they must resume and complete.
	idler := buildToolDeploymentFor(t, clients[survivors[0]], "counter.default", "idle")
	repeatable := startInFlight(t, []*client.Client{clients[owner], clients[survivors[0]]}, idler, 2, 2_000)
	c.nodes[owner].kill(t)
	killed := time.Now()

	served, started := probeUntilServed(t, survivorClients, counter, clusterTTL+15*time.Second)
	failover := time.Since(killed)
	entry := callEntry(t, served)
	t.Logf("failover: a run started %s after the kill of owner %s was served by %s in %s (lease ttl %s)",
		started.Sub(killed).Round(time.Millisecond), owner, entry.Node, failover.Round(time.Millisecond), clusterTTL)
	is.True(failover <= clusterTTL+5*time.Second) // within the lease time plus 5 s
	is.True(entry.Node != owner)                  // on a survivor's session
	is.True(entry.Generation > first.Generation)  // a new session
	is.True(entry.Epoch > first.Epoch)            // under a new tenure
	for _, cl := range survivorClients {          // and every survivor's runs use it
		e := callEntry(t, runCounterOn(t, cl, counter))
		is.Equal(e.Node, entry.Node)
		is.Equal(e.Generation, entry.Generation)
	}

	for _, id := range repeatable { // recovered or retried on the new session, they complete
		run := settled(t, survivorClients[0], id)
		if run.Status != "completed" {
			t.Logf("run %s of a step safe to repeat: %s %s", id, run.Status, deref(run.Error))
		}
		is.Equal(run.Status, "completed")
	}
	for _, id := range inFlight { // every acknowledged run is there and ends
		run := settled(t, survivorClients[0], id)
		is.True(slices.Contains([]string{"completed", "failed", "interrupted"}, run.Status))
		if run.Status == "failed" {
			t.Logf("run %s: %s", id, deref(run.Error))
		}
	}
	oneSessionAtATime(t, callEntries(t, survivorClients[0]))
	is.Equal(c.upstreams(), 1) // the survivors share one upstream server
}

func TestClusterPartitionedOwnerIsFencedWhenItComesBack(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	c := startOwnedCluster(t)
	counter, sleeper, first, owner, survivors := c.counter, c.sleeper, c.first, c.owner, c.survivors
	ownerClient := c.client(t, owner)
	survivorClients := []*client.Client{c.client(t, survivors[0]), c.client(t, survivors[1])}

	// A run of the owner's own, in its tool while the owner is stopped:
	// its call ends upstream meanwhile, and the owner would commit it
	// when it wakes.
	stale := startInFlight(t, []*client.Client{ownerClient}, sleeper, 1, 2*int(clusterTTL/time.Millisecond))[0]
	// A start is acknowledged once the run is created, before its first
	// step (issue 27): its call is in flight, and so committed as such,
	// once the owner's session counts it.
	poll.For(t, "the stale run's call in flight on the owner", 10*time.Second, func() bool {
		return callsInFlight(t, ownerClient)["counter.default"] == 1
	})
	pr := c.nodes[owner]
	is.NoErr(pr.cmd.Process.Signal(syscall.SIGSTOP))
	stopped := time.Now()
	served, _ := probeUntilServed(t, survivorClients, counter, clusterTTL+15*time.Second)
	taken := callEntry(t, served)
	t.Logf("leases of stopped %s taken over in %s: %s serves generation %d, epoch %d", owner,
		time.Since(stopped).Round(time.Millisecond), taken.Node, taken.Generation, taken.Epoch)
	is.True(taken.Node != owner)
	is.True(taken.Epoch > first.Epoch)
	recovered := settled(t, survivorClients[0], stale) // a survivor claimed the stopped node's run
	is.Equal(recovered.Status, "failed")               // its step's outcome is unknown

	is.NoErr(pr.cmd.Process.Signal(syscall.SIGCONT))
	// Back, the owner's stale work is fenced: its run's commit is refused
	// and its lost tenure sends nothing upstream; it serves again through
	// the new owner.
	e := callEntry(t, runCounterOn(t, ownerClient, counter))
	is.Equal(e.Node, taken.Node)
	is.Equal(e.Generation, taken.Generation)
	waitForLog(t, pr, "run claimed by another node", 20*time.Second)
	again, err := survivorClients[0].InspectRun(testContext(t), stale)
	is.NoErr(err)
	is.Equal(again.Status, recovered.Status) // the survivor's record stands
	is.Equal(deref(again.Error), deref(recovered.Error))
	oneSessionAtATime(t, callEntries(t, survivorClients[0]))
}
