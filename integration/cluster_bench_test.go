package integration

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/procs"
)

// The benchmarks of this file measure issue 12's cluster on real
// `mcpflow serve` nodes sharing one real PostgreSQL, each figure next to
// its baseline in the same run:
//
//	go test -run '^$' -bench ClusterCrossNodeCall -benchtime 1000x -count 3 ./integration/
//	go test -run '^$' -bench ClusterThroughput -benchtime 3x -count 3 ./integration/
//
// The upstream is fakemcp over stdio, whose counter tool counts per
// session; its one session lives on the node that owns the connection.

// benchConn is the connection id of the cluster benchmarks' upstream.
const benchConn = "counter.default"

// benchTTL is the lease ttl of the cluster benchmarks: the default, so that
// a renewal late on the loaded machine never moves a session mid-benchmark.
const benchTTL = 10 * time.Second

// BenchmarkClusterCrossNodeCall measures what a tool call costs when the
// session it needs lives on another node. Two nodes, a and b, share one
// database; one of them owns the counter connection's session (its home,
// found from the first run). Each iteration makes a one-step counter run
// through a client of the owner (a local session) and one through a
// client of the other node (its run actor's call goes to the owner and
// its answer comes back), then a capabilities.call of the echo tool
// through each, which involves no run and no store; the order flips every
// iteration so that both see the same machine. Reported: the p50 and p90
// of each, the added cost of a cross-node call (remote p50 - local p50)
// and the ratio remote/local. PostgreSQL runs without fsync here, as in
// the cluster tests: the difference is the network and actor path, which
// no disk wait should blur.
func BenchmarkClusterCrossNodeCall(b *testing.B) {
	if testing.Short() {
		b.Skip("starts PostgreSQL and two real nodes")
	}
	is := is.New(b)
	ctx := context.Background()
	c := newTestCluster(b, benchTTL, stdioSource(benchConn, fakeMCP))
	c.startAll(b, "a", "b")
	onA := c.client(b, "a")
	deployment := buildCounterDeployment(b, onA, benchConn)
	owner := callEntry(b, runCounterOn(b, onA, deployment)).Node // the connection's home
	other := map[string]string{"a": "b", "b": "a"}[owner]
	nodes := [2]*client.Client{c.client(b, owner), c.client(b, other)} // local, remote
	_, err := nodes[1].RefreshConnectionCatalog(testContext(b), benchConn)
	is.NoErr(err) // b knows the echo tool too
	for _, n := range nodes {
		runCounterOn(b, n, deployment) // warm: each node's deployment prepared
		callEcho(ctx, b, n)
	}
	forwarded := forwardedCalls(b, c, other)

	var runs, calls [2]samples
	for i := 0; b.Loop(); i++ {
		for k := range 2 {
			side := (i + k) % 2 // a first in even iterations, b first in odd ones
			start := time.Now()
			run := runCounterOn(b, nodes[side], deployment)
			runs[side] = append(runs[side], time.Since(start))
			is.Equal(callEntry(b, run).Node, owner) // the session stays on its owner
		}
		for k := range 2 {
			side := (i + k) % 2
			start := time.Now()
			callEcho(ctx, b, nodes[side])
			calls[side] = append(calls[side], time.Since(start))
		}
	}
	is.True(forwardedCalls(b, c, other)-forwarded >= float64(2*b.N)) // each of the other node's runs and calls went to the owner
	is.Equal(forwardedCalls(b, c, owner), 0.0)                       // and none of the owner's left it

	local, remote := runs[0].percentile(.5), runs[1].percentile(.5)
	b.ReportMetric(us(local), "local-run-p50-µs")
	b.ReportMetric(us(runs[0].percentile(.9)), "local-run-p90-µs")
	b.ReportMetric(us(remote), "remote-run-p50-µs")
	b.ReportMetric(us(runs[1].percentile(.9)), "remote-run-p90-µs")
	b.ReportMetric(us(remote-local), "added-µs/run")
	b.ReportMetric(float64(remote)/float64(local), "remote/local-run")
	localCall, remoteCall := calls[0].percentile(.5), calls[1].percentile(.5)
	b.ReportMetric(us(localCall), "local-call-p50-µs")
	b.ReportMetric(us(remoteCall), "remote-call-p50-µs")
	b.ReportMetric(us(remoteCall-localCall), "added-µs/call")
}

// callEcho calls benchConn's echo tool through c's capabilities.call.
func callEcho(ctx context.Context, tb testing.TB, c *client.Client) {
	is := is.New(tb)
	is.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var res p.CapabilityCallResult
	is.NoErr(c.Call(ctx, p.MethodCapabilitiesCall, p.CallCapabilityParams{QualifiedName: benchConn + ".echo", Payload: p.Object{"message": "hi"}}, &res))
	is.Equal(res.Outcome, "ok")
}

// forwardedCalls is how many messages node id passed to a session on
// another node, from its /metrics.
func forwardedCalls(tb testing.TB, c *testCluster, id string) float64 {
	tb.Helper()
	return counterSum(scrapeMetrics(tb, c.nodes[id].url), "mcpflow_cluster_forwarded_calls_total")
}

// Sizes of BenchmarkClusterThroughput.
const (
	throughputClients = 24  // concurrent clients of each configuration
	roundRuns         = 480 // runs of one round of one configuration
	roundTimeout      = 2 * time.Minute
)

// BenchmarkClusterThroughput measures the runs per second of one counter
// deployment with 24 concurrent clients on a cluster of one node and on
// one of three nodes (the clients spread over them), each on a fresh
// database of the same PostgreSQL server. Both clusters run throughout;
// each iteration makes one round of 480 runs on each, in turns whose order
// flips every iteration, so that the machine's other work hits both
// alike (ns/op is the time of both rounds). The three nodes share one
// upstream session, on the node that owns the connection, as the one node
// does. Reported: runs/s of each, the ratio 3-node/1-node, each one's p50
// run latency, and the CPU its nodes used per run, all nodes summed (each
// node's is logged, with the CPU each cluster used while the other ran).
// PostgreSQL runs durable (fsync at each commit) and without fsync.
func BenchmarkClusterThroughput(b *testing.B) {
	if testing.Short() {
		b.Skip("starts PostgreSQL and four real nodes")
	}
	for _, pg := range []struct {
		name string
		opts []pgtest.Option
	}{{"durable", []pgtest.Option{pgtest.Durable()}}, {"nofsync", nil}} {
		b.Run("pg="+pg.name, func(b *testing.B) {
			srv := pgtest.Start(b, pg.opts...)
			one := startCounterCluster(b, srv, "solo")
			three := startCounterCluster(b, srv, "a", "b", "c")
			for i := 0; b.Loop(); i++ {
				turns := [2]*counterCluster{one, three}
				if i%2 == 1 {
					turns[0], turns[1] = three, one
				}
				for t, k := range turns {
					idle := turns[1-t]
					before := idle.cpuTimes(b)
					elapsed := k.round(b, roundRuns)
					idle.idleCPU += cpuSum(idle.cpuTimes(b)) - cpuSum(before)
					idle.idleFor += elapsed
				}
			}
			for _, k := range []*counterCluster{one, three} {
				b.Logf("%d node(s), the session on %s: CPU per run by node %v; while idle, %.1f ms/s",
					len(k.cluster.nodes), k.owner, k.perRun(), float64(k.idleCPU)/float64(time.Millisecond)/k.idleFor.Seconds())
			}
			b.ReportMetric(one.perSecond(), "1node-runs/s")
			b.ReportMetric(three.perSecond(), "3node-runs/s")
			b.ReportMetric(three.perSecond()/one.perSecond(), "3node/1node")
			b.ReportMetric(float64(one.latencies.percentile(.5))/float64(time.Millisecond), "1node-p50-ms")
			b.ReportMetric(float64(three.latencies.percentile(.5))/float64(time.Millisecond), "3node-p50-ms")
			b.ReportMetric(us(cpuSum(one.cpu))/float64(one.runs), "1node-cpu-µs/run")
			b.ReportMetric(us(cpuSum(three.cpu))/float64(three.runs), "3node-cpu-µs/run")
		})
	}
}

// counterCluster is a cluster serving the counter deployment on a
// database of its own, with throughputClients clients spread over its
// nodes, and what its rounds measured so far.
type counterCluster struct {
	cluster    *testCluster
	deployment string
	clients    []*client.Client
	owner      string // the node of the upstream session

	runs      int
	elapsed   time.Duration
	latencies samples
	cpu       map[string]time.Duration // each node's in k's rounds
	// idleCPU is what k's nodes used, summed, during the idleFor the other
	// cluster's rounds took.
	idleCPU, idleFor time.Duration
}

// startCounterCluster starts the nodes ids on a fresh database of srv,
// deploys the counter workflow, and warms every client with a run.
func startCounterCluster(b *testing.B, srv *pgtest.Server, ids ...string) *counterCluster {
	b.Helper()
	c := clusterOn(b, srv, stdioSource(benchConn, fakeMCP))
	c.startAll(b, ids...)
	k := &counterCluster{cluster: c, clients: make([]*client.Client, throughputClients), cpu: map[string]time.Duration{}}
	k.deployment = buildCounterDeployment(b, c.client(b, ids[0]), benchConn)
	for i := range k.clients {
		k.clients[i] = c.client(b, ids[i%len(ids)])
		k.owner = callEntry(b, runCounterOn(b, k.clients[i], k.deployment)).Node
	}
	return k
}

// clusterOn is a cluster of nodes serving sources on a fresh database of
// srv, with leases of benchTTL.
func clusterOn(tb testing.TB, srv *pgtest.Server, sources ...config.Connection) *testCluster {
	tb.Helper()
	return clusterOnServer(tb, srv, benchTTL, sources...)
}

// round makes n runs through the clients at once, each client starting
// its next run as soon as its last one ended, and adds them to k's tally.
// The first run that fails ends the round and fails b. It returns the
// round's time.
func (k *counterCluster) round(b *testing.B, n int) time.Duration {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), roundTimeout)
	defer cancel()
	var left atomic.Int64
	left.Store(int64(n))
	latencies := make([]samples, len(k.clients))
	errs := make([]error, len(k.clients))
	cpu := k.cpuTimes(b)
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range k.clients {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				began := time.Now()
				if err := runOnce(ctx, c, k.deployment); err != nil {
					errs[i] = err
					cancel()
					return
				}
				latencies[i] = append(latencies[i], time.Since(began))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	for id, d := range k.cpuTimes(b) {
		k.cpu[id] += d - cpu[id]
	}
	if err := errors.Join(errs...); err != nil {
		b.Fatalf("a round of %d runs on %d nodes: %v\n%s", n, len(k.cluster.nodes), err, k.cluster.logs())
	}
	k.runs += n
	k.elapsed += elapsed
	for _, l := range latencies {
		k.latencies = append(k.latencies, l...)
	}
	return elapsed
}

// perSecond is the runs per second of k's rounds.
func (k *counterCluster) perSecond() float64 { return float64(k.runs) / k.elapsed.Seconds() }

// perRun is the CPU each node used per run of k's rounds.
func (k *counterCluster) perRun() map[string]time.Duration {
	out := make(map[string]time.Duration, len(k.cpu))
	for id, d := range k.cpu {
		out[id] = (d / time.Duration(k.runs)).Round(time.Microsecond)
	}
	return out
}

// cpuTimes is the CPU time each of k's nodes has used so far.
func (k *counterCluster) cpuTimes(b *testing.B) map[string]time.Duration {
	out := make(map[string]time.Duration, len(k.cluster.nodes))
	for id, pr := range k.cluster.nodes {
		d, err := procs.CPUTime(pr.cmd.Process.Pid)
		if err != nil {
			b.Fatal(err)
		}
		out[id] = d
	}
	return out
}

// cpuSum is the sum of the durations of m.
func cpuSum(m map[string]time.Duration) time.Duration {
	var total time.Duration
	for _, d := range m {
		total += d
	}
	return total
}

// runOnce runs the deployment through c and says why unless it completed.
func runOnce(ctx context.Context, c *client.Client, deployment string) error {
	run, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{}})
	if err != nil {
		return fmt.Errorf("run %s: %w", deployment, err)
	}
	if run.Status != "completed" {
		return fmt.Errorf("run %s: %s: %v", deployment, run.Status, deref(run.Error))
	}
	return nil
}
