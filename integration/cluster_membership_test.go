package integration

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/cluster/lease"
	"github.com/mcpflow/mcpflow/actors/cluster/membership"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// TestClusterNodeWhoseMembershipLapsedCreatesNoRun makes deterministic
// the race that failed TestClusterPartitionedOwnerIsFencedWhenItComesBack
// once: node a, stopped past its lease's ttl, wakes while another holds
// its node lease to claim its runs (here the test, as "intruder", plays
// that survivor's reaper and holds it as long as it needs), and is asked
// to start a run before it has rejoined. The run must not be created as
// a's meanwhile: the survivor's claim would take it, and a's commits of
// it would be fenced (the start's run failed, "node b has it"). The start
// waits instead, and once a rejoins it creates the run, which completes.
// Before the fence, the intruder claimed the new run.
func TestClusterNodeWhoseMembershipLapsedCreatesNoRun(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	ctx := testContext(t)
	c := newTestCluster(t, clusterTTL, stdioSource("counter.default", fakeMCP))
	c.startAll(t, "a", "b")
	onA := c.client(t, "a")
	counter := buildCounterDeployment(t, onA, "counter.default")
	runCounterOn(t, onA, counter)

	pool, err := pgxpool.New(ctx, c.dsn)
	is.NoErr(err)
	t.Cleanup(pool.Close)
	table, err := lease.New(ctx, pool)
	is.NoErr(err)
	survivor, err := postgres.Open(ctx, c.dsn, postgres.WithNode("intruder"))
	is.NoErr(err)
	t.Cleanup(func() { is.NoErr(survivor.Close()) })

	a := c.nodes["a"]
	is.NoErr(a.cmd.Process.Signal(syscall.SIGSTOP))
	var held lease.Lease
	poll.For(t, "the intruder takes the lease of stopped a", clusterTTL+15*time.Second, func() bool {
		var err error
		held, err = table.Acquire(ctx, membership.NodeKey("a"), "intruder", time.Minute)
		if err != nil && !errors.Is(err, lease.ErrHeld) { // a's, or b's while it recovers a's runs
			t.Logf("the intruder's acquire: %v", err)
			is.Fail() // refused by a holder, or taken
		}
		return err == nil
	})
	is.NoErr(a.cmd.Process.Signal(syscall.SIGCONT))

	type answer struct {
		run p.RunResult
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		wait := false
		run, err := onA.RunDeployment(ctx, p.StartRunParams{DeploymentID: counter, WorkflowInput: p.Object{}, Wait: &wait})
		answered <- answer{run, err}
	}()
	var early *answer
	poll.For(t, "a answers the start, or waits to rejoin", 20*time.Second, func() bool {
		select {
		case got := <-answered:
			early = &got
			return true
		default:
		}
		logs, _ := os.ReadFile(a.logs)
		return strings.Contains(string(logs), "run refused: this node's cluster membership lapsed")
	})
	if early != nil {
		t.Logf("a answered the start before it rejoined: run %s %s, err %v", deref(early.run.RunID), early.run.Status, early.err)
	}
	claimed, err := survivor.ClaimRuns(ctx, "a") // as the survivor holding a's lease does
	is.NoErr(err)
	is.Equal(len(claimed), 0) // a created no run while it was not a member
	is.NoErr(table.Release(ctx, held))

	got := early
	if got == nil {
		g := <-answered
		got = &g
	}
	is.NoErr(got.err) // answered once a has rejoined
	run := settled(t, onA, *got.run.RunID)
	is.Equal(run.Status, "completed") // and run by a
}
