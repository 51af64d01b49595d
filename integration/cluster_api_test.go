package integration

// The cluster's API from any node (issue 12), on real `mcpflow serve`
// nodes sharing a real PostgreSQL: a client of one node follows and
// cancels a run another node runs, a source pinned to a node runs there
// whichever node starts its runs, and `mcpflow cluster status` and
// /metrics show the members, the leases and their owners.

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/cluster/membership"
	"github.com/mcpflow/mcpflow/actors/cluster/placement"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/metrics/metricstest"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// clusterCounter is the fakemcp connection of the cluster API tests.
const clusterCounter = "counter.default"

// TestClusterAPIFollowsARunOfAnotherNode: a run started on node a is
// followed from node c, live to its end, each event once and in order,
// as a subscription made after the end replays it from the store; an
// admin event subscription on c gets the run's start and end, which a
// committed.
func TestClusterAPIFollowsARunOfAnotherNode(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	c := servedCluster(t, stdioSource(liveSource, fakeMCP), "a", "c")
	onA := c.client(t, "a")
	dep := deployDraft(t, onA, "naps", foreachDraft("naps", liveSource+".sleep", "ms"), liveSource)
	const items, napMS = 6, 250
	naps := make([]any, items)
	for i := range naps {
		naps[i] = napMS
	}

	admin := c.client(t, "c")
	adminNotes := notifications(admin)
	asub, err := admin.SubscribeAdminEvents(testContext(t), p.SubscribeAdminEventsParams{})
	is.NoErr(err)

	run := startLive(t, onA, dep, naps)
	follower := c.client(t, "c")
	notes := notifications(follower)
	sub, err := follower.SubscribeRun(testContext(t), p.SubscribeRunParams{RunID: run})
	is.NoErr(err)
	is.Equal(sub.Status, "running") // c follows the run while a runs it
	is.True(sub.Active)
	live := runEventsUntilEnd(t, notes, sub.SubscriptionID)
	isGapless(t, live, 1)
	is.Equal(len(live), 3*items+3) // running, three per item, the foreach's done, completed
	is.Equal(live[len(live)-1].Status.Status, "completed")
	is.True(live[len(live)-1].Seq > sub.LastSequence) // the later events came live

	replaysTheSame(t, c.client(t, "c"), run, live) // what came live is what the store has

	kinds := adminRunEvents(t, adminNotes, asub, run)
	is.Equal(kinds, []string{store.EventRunStarted, store.EventRunCompleted})
	t.Logf("run %s of node a: node c followed %d events live from sequence %d on, replayed identically after the end; c's admin events: %v",
		run, len(live), sub.LastSequence+1, kinds)
}

// adminRunEvents takes the admin events of subscription sub from notes,
// in sequence order, until run has ended, and returns the kinds of those
// about run; any other notification fails the test.
func adminRunEvents(t *testing.T, notes <-chan client.Notification, sub p.SubscribeAdminEventsResult, run string) []string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var kinds []string
	seq := sub.LastSequence
	deadline := time.After(liveWait)
	for {
		select {
		case n := <-notes:
			is.Equal(n.Method, p.NotifyAdminEvent) // only admin events, no lag
			var e p.AdminEventNotification
			is.NoErr(json.Unmarshal(n.Params, &e))
			is.Equal(e.SubscriptionID, sub.SubscriptionID)
			is.True(e.Sequence > seq) // in order, after the log's end at subscribing
			seq = e.Sequence
			if e.Payload["run_id"] != run {
				continue
			}
			kinds = append(kinds, e.Kind)
			if e.Kind == store.EventRunCompleted || e.Kind == store.EventRunFailed {
				return kinds
			}
		case <-deadline:
			t.Logf("admin events of run %s within %s: %v", run, liveWait, kinds)
			is.Fail() // the run's admin events arrive through its end
		}
	}
}

// TestClusterAPICancelsARunOfAnotherNode: a run that node a runs, in a
// 30 s call, is cancelled through node c: the answer says cancelled
// within seconds, node b's follower sees the run end as cancelled, and
// inspecting it on b says so too.
func TestClusterAPICancelsARunOfAnotherNode(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	c := servedCluster(t, stdioSource(clusterCounter, fakeMCP), "a", "b", "c")
	membersSettled(t, c) // c asks the other members' desks
	onA, onB, onC := c.client(t, "a"), c.client(t, "b"), c.client(t, "c")
	sleeper := buildToolDeploymentFor(t, onA, clusterCounter, "sleep")
	const sleepMS, cancelBound = 30_000, 5 * time.Second
	run := startInFlight(t, []*client.Client{onA}, sleeper, 1, sleepMS)[0]

	notes := notifications(onB)
	sub, err := onB.SubscribeRun(testContext(t), p.SubscribeRunParams{RunID: run})
	is.NoErr(err)
	upToCall := runEventsUntil(t, notes, sub.SubscriptionID, func(events []p.RunEventNotification) bool {
		return events[len(events)-1].Kind == store.RunEventStepStarted
	}) // the call is in flight

	reason := "called off from node c"
	asked := time.Now()
	cancelled, err := onC.CancelRun(testContext(t), p.CancelRunParams{RunID: run, Reason: &reason})
	took := time.Since(asked)
	is.NoErr(err)
	t.Logf("run %s of node a, cancelled through node c in %s (its call sleeps %d ms): %s", run, took.Round(time.Millisecond), sleepMS, deref(cancelled.Error))
	is.Equal(cancelled.Status, "cancelled")
	is.True(took < cancelBound) // far below the sleep
	is.True(cancelled.Error != nil && strings.HasPrefix(*cancelled.Error, "cancelled: "+reason))

	rest := runEventsUntilEnd(t, notes, sub.SubscriptionID)
	isGapless(t, append(upToCall, rest...), 1)
	is.Equal(rest[len(rest)-1].Status.Status, "cancelled") // b's follower sees the end

	inspected, err := onB.InspectRun(testContext(t), run)
	is.NoErr(err)
	is.Equal(inspected.Status, "cancelled")
	is.Equal(deref(inspected.Error), deref(cancelled.Error))
}

// servedCluster starts nodes ids, each serving source, and prints every
// node's log if the test fails.
func servedCluster(t *testing.T, source config.Connection, ids ...string) *testCluster {
	t.Helper()
	c := newTestCluster(t, clusterTTL, source)
	logsOnFailure(t, c)
	c.startAll(t, ids...)
	return c
}

// pinnedConn is a stdio source pinned to node b.
const pinnedConn = "pinned.default"

// pinnedCluster starts nodes ids, each serving pinnedConn, once each
// knows the others.
func pinnedCluster(t *testing.T, ids ...string) *testCluster {
	t.Helper()
	pinned := stdioSource(pinnedConn, fakeMCP)
	pinned.Nodes = []string{"b"}
	c := servedCluster(t, pinned, ids...)
	membersSettled(t, c)
	return c
}

// TestClusterAPIRunsAPinnedSourceOnItsNode: a source every node knows,
// pinned to node b, runs on b's session whether a or c starts the run,
// and only b runs its upstream server; once b is killed, a run of it on a
// fails within its deadline, and once b's lease has run out the error
// names the nodes the source may run on.
func TestClusterAPIRunsAPinnedSourceOnItsNode(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	c := pinnedCluster(t, "a", "b", "c") // a and c know where b is
	onA, onC := c.client(t, "a"), c.client(t, "c")
	dep := buildCounterDeployment(t, onA, pinnedConn)
	for i, cl := range []*client.Client{onA, onC} {
		run := runCounterOn(t, cl, dep)
		is.Equal(run.Output, p.Object{"count": float64(i + 1)}) // one session
		is.Equal(callEntry(t, run).Node, "b")                   // b's
	}
	is.Equal(c.upstreamsOn("b"), 1) // b runs the upstream server
	is.Equal(c.upstreams(), 1)      // and no other node does

	c.nodes["b"].kill(t)
	killed := time.Now()
	const wanted = "runs only on nodes b, and none of them is a live member"
	bound := clusterTTL + 5*time.Second
	for i := 0; ; i++ {
		run := failedRunOn(t, onA, dep, bound)
		t.Logf("run %d, %s after b was killed: %s", i, time.Since(killed).Round(time.Millisecond), deref(run.Error))
		if run.Error != nil && strings.Contains(*run.Error, wanted) {
			break
		}
		if time.Since(killed) > bound {
			t.Logf("no run failed saying %q within %s", wanted, bound)
			is.Fail() // once b's lease ran out, the error names the pinned nodes
		}
		<-time.After(200 * time.Millisecond) // retry interval
	}
	is.Equal(c.upstreams(), 0) // no other node started the source
}

// TestClusterAPIRefreshThroughAnotherNodeIsKnownThere: a catalog refresh
// asked of node a, of a source pinned to node b, runs on b's session; once
// a answers it, a's own catalog has what the refresh fetched, so that the
// client's next request to a (authoring from the capability, say) finds
// it. Each of ten refreshes is checked.
func TestClusterAPIRefreshThroughAnotherNodeIsKnownThere(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	c := pinnedCluster(t, "a", "b")
	onA := c.client(t, "a")
	stale := 0
	for range 10 {
		refreshed, err := onA.RefreshConnectionCatalog(testContext(t), pinnedConn)
		is.NoErr(err)
		statuses, err := onA.GetConnectionStatuses(testContext(t))
		is.NoErr(err)
		is.Equal(statuses.Total, 1)
		var known int64 // when a's catalog was fetched; 0 while it has none
		if at := statuses.Statuses[0].FetchedAtEpochMs; at != nil {
			known = *at
		}
		if known < refreshed.FetchedAtEpochMs {
			t.Logf("a answered a refresh that fetched the catalog at %d ms, and then had the one fetched at %d ms", refreshed.FetchedAtEpochMs, known)
			stale++
		}
	}
	is.Equal(stale, 0) // a knows each catalog it answered a refresh with
}

// membersSettled waits until every live node of c counts them all as
// live members on its /metrics (mcpflow_cluster_members).
func membersSettled(t *testing.T, c *testCluster) {
	t.Helper()
	var live []*process
	for _, pr := range c.nodes {
		select {
		case <-pr.exited:
		default:
			live = append(live, pr)
		}
	}
	for _, pr := range live {
		settledMetrics(t, pr, func(f metricstest.Families) bool {
			members, _ := f.Value("mcpflow_cluster_members")
			return members == float64(len(live))
		})
	}
}

// logsOnFailure logs every node's log at the end of t if it failed.
func logsOnFailure(t *testing.T, c *testCluster) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("nodes' logs:\n%s", c.logs())
		}
	})
}

// failedRunOn runs the counter deployment through c, which must answer
// within bound, and returns the run, which must have failed.
func failedRunOn(t *testing.T, c *client.Client, deployment string, bound time.Duration) p.RunResult {
	t.Helper()
	is := is.New(t)
	is.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	run, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{}})
	is.NoErr(err) // answered within bound: no hang
	is.Equal(run.Status, "failed")
	return run
}

// clusterStatusJSON is what `mcpflow cluster status -o json` prints, as
// far as the tests read it.
type clusterStatusJSON struct {
	Members []struct {
		NodeID         string `json:"node_id"`
		ClusterAddress string `json:"cluster_address"`
		HTTPAddress    string `json:"http_address"`
		Live           bool   `json:"live"`
		Epoch          int64  `json:"epoch"`
		RemainingMS    int64  `json:"remaining_ms"`
	} `json:"members"`
	Leases []struct {
		Key         string `json:"key"`
		Owner       string `json:"owner"`
		Epoch       int64  `json:"epoch"`
		Live        bool   `json:"live"`
		RemainingMS int64  `json:"remaining_ms"`
		Generation  int64  `json:"generation"`
	} `json:"leases"`
}

// TestClusterAPIStatusShowsMembersLeasesAndOwners runs `mcpflow cluster
// status` on a node's config against a running cluster of three: it shows
// the three members live and the connection's lease held by the node whose
// session served a run, under the tenure and generation of the run's
// trace, as a table and as JSON.
func TestClusterAPIStatusShowsMembersLeasesAndOwners(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	ids := []string{"a", "b", "c"}
	c := servedCluster(t, stdioSource(clusterCounter, fakeMCP), ids...)
	onB := c.client(t, "b")
	entry := callEntry(t, runCounterOn(t, onB, buildCounterDeployment(t, onB, clusterCounter)))
	connKey := placement.ConnectionKey(clusterCounter)
	cli := cliTool{t: t}

	table := cli.want(0, "cluster", "status", "--config", c.configOf("a"))
	t.Logf("mcpflow cluster status:\n%s", table.stdout)
	is.True(strings.Contains(table.stdout, "3 of 3 members live")) // the summary
	rows := tableRows(table.stdout)
	for _, id := range ids {
		is.True(hasRow(rows, id, c.listen[id], httpAddr(c.nodes[id]), "yes")) // each member, live
		is.True(hasRow(rows, membership.NodeKey(id), id, "*", "yes"))         // its node lease
	}
	is.True(hasRow(rows, connKey, entry.Node, strconv.FormatInt(entry.Epoch, 10), "yes", "*", strconv.FormatInt(entry.Generation, 10)))

	res := cliJSON[clusterStatusJSON](t, cli.want(0, "cluster", "status", "--config", c.configOf("a"), "-o", "json"))
	is.Equal(len(res.Members), len(ids))
	for i, m := range res.Members {
		is.Equal(m.NodeID, ids[i]) // by node id
		is.Equal(m.ClusterAddress, c.listen[m.NodeID])
		is.Equal(m.HTTPAddress, httpAddr(c.nodes[m.NodeID]))
		is.True(m.Live)
		is.True(m.RemainingMS > 0 && m.RemainingMS <= clusterTTL.Milliseconds())
	}
	owned := 0
	for _, l := range res.Leases {
		if l.Key != connKey {
			continue
		}
		owned++
		is.Equal(l.Owner, entry.Node) // the node whose session served the run
		is.Equal(l.Epoch, entry.Epoch)
		is.Equal(l.Generation, entry.Generation)
		is.True(l.Live)
	}
	is.Equal(owned, 1) // one lease for the connection
}

// httpAddr is the host:port a node's edge serves on.
func httpAddr(pr *process) string {
	return strings.TrimPrefix(pr.httpBase(), "http://")
}

// tableRows splits a table's output into the fields of each line.
func tableRows(out string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(out, "\n") {
		rows = append(rows, strings.Fields(line))
	}
	return rows
}

// hasRow reports whether a row begins with fields ("*": any field).
func hasRow(rows [][]string, fields ...string) bool {
	for _, row := range rows {
		if len(row) >= len(fields) && matchFields(row, fields) {
			return true
		}
	}
	return false
}

// matchFields reports whether row begins with fields ("*": any field).
func matchFields(row, fields []string) bool {
	for i, f := range fields {
		if f != "*" && row[i] != f {
			return false
		}
	}
	return true
}

// TestClusterAPIMetricsShowOwnershipAndLeases: /metrics of the node that
// owns a connection shows the three members and at least its node lease
// and the connection's; another node, through which a run went, counts
// the calls it passed to the owner and holds its node lease only.
func TestClusterAPIMetricsShowOwnershipAndLeases(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	ids := []string{"a", "b", "c"}
	c := servedCluster(t, stdioSource(clusterCounter, fakeMCP), ids...)
	onA := c.client(t, "a")
	dep := buildCounterDeployment(t, onA, clusterCounter)
	owner := callEntry(t, runCounterOn(t, onA, dep)).Node
	other := others(ids, owner)[0]
	is.Equal(callEntry(t, runCounterOn(t, c.client(t, other), dep)).Node, owner) // served by the owner

	membersSettled(t, c)
	f := settledMetrics(t, c.nodes[owner], func(f metricstest.Families) bool {
		held, _ := f.Value("mcpflow_cluster_leases_held")
		return held >= 2 // its node lease and the connection's
	})
	members, _ := f.Value("mcpflow_cluster_members")
	is.Equal(members, 3.0)
	_, found := f.Value("mcpflow_cluster_forwarded_calls_total")
	is.True(!found) // the owner passed no call on

	f = scrapeMetrics(t, c.nodes[other].url)
	members, _ = f.Value("mcpflow_cluster_members")
	is.Equal(members, 3.0)
	held, _ := f.Value("mcpflow_cluster_leases_held")
	is.Equal(held, 1.0) // its node lease only
	forwarded, found := f.Value("mcpflow_cluster_forwarded_calls_total", "node", owner)
	is.True(found)
	is.True(forwarded > 0) // the run's call went to the owner
	t.Logf("owner %s; %s passed it %v calls", owner, other, forwarded)
}

// settledMetrics scrapes pr's /metrics until ok accepts them (within
// eventually's deadline) and returns them.
func settledMetrics(t *testing.T, pr *process, ok func(metricstest.Families) bool) metricstest.Families {
	t.Helper()
	var f metricstest.Families
	poll.For(t, "the cluster metrics of "+pr.url+" settle", settleWait, func() bool {
		f = scrapeMetrics(t, pr.url)
		return ok(f)
	})
	return f
}

// gateDraft counts, waits for approval, and counts again, on one stateful
// connection.
const gateDraft = `{"name":"gate","start":"first","outcomes":["ok"],
	"state_schema":{"type":"object","properties":{
		"first":{"type":"integer"},"second":{"type":"integer"},"approved":{"type":"boolean"}}},
	"output_schema":{"type":"object","properties":{"first":{},"second":{},"approved":{}}},
	"steps":{
		"first":{"use":"` + clusterCounter + `.counter","output":[{"source":"count","target":"state.first"}]},
		"approve":{"interrupt":{"kind":"approval","request":[{"target":"message","value":"Go on?"}],
			"resume":[{"source":"approved","target":"state.approved"}],
			"resume_schema":{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]}}},
		"second":{"use":"` + clusterCounter + `.counter","output":[{"source":"count","target":"state.second"}]}},
	"routes":{"first":{"ok":"approve","error":"approve"},"approve":{"submitted":"second"},"second":{"ok":"__end__","error":"__end__"}}}`

// TestClusterAPIResumesARunInterruptedOnAnotherNode: a run that paused for
// approval on node a is resumed through node c, where it goes on, on the
// connection's one session.
func TestClusterAPIResumesARunInterruptedOnAnotherNode(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	c := servedCluster(t, stdioSource(clusterCounter, fakeMCP), "a", "c")
	onA, onC := c.client(t, "a"), c.client(t, "c")
	ctx := testContext(t)
	_, err := onA.RefreshConnectionCatalog(ctx, clusterCounter)
	is.NoErr(err)
	saveDraft(t, onA, "gate", gateDraft)
	_, err = onA.SaveDeployment(ctx, p.Object{"id": "gate.default", "artifact_id": "gate", "artifact_version": 1,
		"bindings": []any{p.Object{"logical_source": clusterCounter, "concrete_source": clusterCounter}}})
	is.NoErr(err)

	paused, err := onA.RunDeployment(ctx, p.StartRunParams{DeploymentID: "gate.default", WorkflowInput: p.Object{}})
	is.NoErr(err)
	is.Equal(paused.Status, "interrupted") // paused on node a
	done, err := onC.ResumeRun(ctx, p.ResumeRunParams{RunID: *paused.RunID, ResumePayload: p.Object{"approved": true}})
	is.NoErr(err) // resumed through node c
	is.Equal(done.Status, "completed")
	is.Equal(done.Output, p.Object{"first": float64(1), "second": float64(2), "approved": true}) // one session counted both
	inspected, err := onA.InspectRun(ctx, *paused.RunID)
	is.NoErr(err)
	is.Equal(inspected.Status, "completed") // and node a sees it ended
}
