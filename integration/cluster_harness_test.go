package integration

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/secrets"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// testCluster is a real PostgreSQL server and the `mcpflow serve` nodes
// that share one database of it, each a process of its own with its own
// cluster port on loopback.
type testCluster struct {
	dir     string
	dsn     string
	keyFile string // the key every node seals the auth records with
	ttl     time.Duration
	sources []config.Connection
	// listen keeps each node's cluster address across its restarts.
	listen map[string]string
	nodes  map[string]*process
}

// newTestCluster starts PostgreSQL and a database for nodes whose leases
// last ttl and which serve sources; start starts each node.
func newTestCluster(t testing.TB, ttl time.Duration, sources ...config.Connection) *testCluster {
	t.Helper()
	return clusterOnServer(t, pgtest.Start(t), ttl, sources...)
}

// clusterOnServer is a cluster of nodes serving sources on a fresh
// database of srv, with leases of ttl, sealing their auth records with one
// key file.
func clusterOnServer(tb testing.TB, srv *pgtest.Server, ttl time.Duration, sources ...config.Connection) *testCluster {
	tb.Helper()
	dir := tb.TempDir()
	keys, _, err := secrets.LoadOrCreateFile(filepath.Join(dir, "secrets.key"))
	is.New(tb).NoErr(err)
	return &testCluster{
		dir: dir, dsn: srv.NewDatabase(tb) + pgtest.SynchronousCommit, keyFile: keys.Path(), ttl: ttl, sources: sources,
		listen: map[string]string{}, nodes: map[string]*process{},
	}
}

// start runs node id (again, after a kill, on the same cluster address),
// with runs answered once they end (--run-wait 30s).
func (c *testCluster) start(t testing.TB, id string) *process {
	t.Helper()
	if c.listen[id] == "" {
		c.listen[id] = freeAddr(t)
	}
	dir := filepath.Join(c.dir, id)
	is.New(t).NoErr(os.MkdirAll(dir, 0o700))
	cfg := writeServerConfig(t, dir, config.Server{
		Store:   config.Store{Kind: config.StorePostgres, DSN: c.dsn},
		Sources: c.sources,
		Cluster: &config.Cluster{NodeID: id, Listen: c.listen[id], LeaseTTLMS: int(c.ttl / time.Millisecond)},
		Secrets: &config.Secrets{KeyFile: c.keyFile},
	})
	pr := startProcess(t, cfg, "node-"+id+"-"+strconv.Itoa(len(c.nodes))+".log", "--run-wait", "30s")
	c.nodes[id] = pr
	return pr
}

// startAll starts the nodes ids, one after the other.
func (c *testCluster) startAll(t testing.TB, ids ...string) {
	t.Helper()
	for _, id := range ids {
		c.start(t, id)
	}
}

// client dials node id's edge.
func (c *testCluster) client(t testing.TB, id string) *client.Client {
	t.Helper()
	return dialURL(t, c.nodes[id].url)
}

// logs returns every node's log, for a failure's message.
func (c *testCluster) logs() string {
	var b strings.Builder
	names, _ := filepath.Glob(filepath.Join(c.dir, "*", "node-*.log"))
	slices.Sort(names)
	for _, name := range names {
		data, _ := os.ReadFile(name)
		b.WriteString("== " + filepath.Base(name) + "\n")
		b.Write(data)
	}
	return b.String()
}

// upstreams counts the upstream server processes (fakemcp) below every
// live node: one per open stdio session in the cluster.
func (c *testCluster) upstreams() int {
	n := 0
	for id := range c.nodes {
		n += c.upstreamsOn(id)
	}
	return n
}

// runCounterOn runs the counter deployment through c and returns its run,
// which must have completed.
func runCounterOn(t testing.TB, c *client.Client, deployment string) p.RunResult {
	t.Helper()
	is := is.New(t)
	is.Helper()
	limit := 10
	run, err := c.RunDeployment(testContext(t), p.StartRunParams{
		DeploymentID: deployment, WorkflowInput: p.Object{}, TraceRange: &p.TraceRange{Limit: &limit},
	})
	is.NoErr(err)
	if run.Status != "completed" {
		t.Logf("run %s: %s: %s", deref(run.RunID), run.Status, deref(run.Error))
	}
	is.Equal(run.Status, "completed")
	return run
}

// callEntry is the trace entry of the run's one call step.
func callEntry(t testing.TB, run p.RunResult) p.TraceEntry {
	t.Helper()
	is := is.New(t)
	is.Helper()
	is.Equal(len(run.Trace), 1) // one call step
	return run.Trace[0]
}

// clusterTTL is the lease ttl of the cluster tests: short, so that
// failover is quick, and long enough for a loaded 2-core machine to renew
// in time.
const clusterTTL = 3 * time.Second

func TestClusterSeedJourneyCountsAcrossNodesOnOneUpstreamSession(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	c := newTestCluster(t, clusterTTL, stdioSource("counter.default", fakeMCP))
	c.startAll(t, "a", "b", "c")
	onA, onC := c.client(t, "a"), c.client(t, "c")
	deployment := buildCounterDeployment(t, onA, "counter.default")
	for _, id := range []string{"b", "c"} { // whoever listed the catalog, every node knows it
		cl := c.client(t, id)
		poll.For(t, "node "+id+" knows the catalog listed for node a", settleWait, func() bool {
			_, err := cl.InspectCapability(testContext(t), "counter.default.counter")
			return err == nil
		})
	}

	var owners []string
	for i, cl := range []*client.Client{onA, onC, onA, onC} {
		run := runCounterOn(t, cl, deployment)
		if run.Output["count"] != float64(i+1) {
			t.Logf("run %d counted %v\n%s", i+1, run.Output["count"], c.logs())
		}
		is.Equal(run.Output, p.Object{"count": float64(i + 1)}) // the count goes on across nodes: one upstream session
		e := callEntry(t, run)
		owners = append(owners, e.Node)
		is.Equal(e.Generation, int64(1)) // its first generation
		is.True(e.Epoch >= 1)
	}
	is.True(owners[0] != "")
	is.Equal(owners, []string{owners[0], owners[0], owners[0], owners[0]}) // every call went to the owner's session
	is.Equal(c.upstreams(), 1)                                             // one upstream server process in the whole cluster
}

// waitForLog polls pr's log until it holds text, failing t after within.
func waitForLog(t *testing.T, pr *process, text string, within time.Duration) {
	t.Helper()
	var data []byte
	if !poll.Until(within, func() bool {
		data, _ = os.ReadFile(pr.logs)
		return strings.Contains(string(data), text)
	}) {
		t.Fatalf("%q not in %s within %s:\n%s", text, pr.logs, within, data)
	}
}

// upstreamsOn counts the upstream server processes (fakemcp) below node
// id: none once it has exited.
func (c *testCluster) upstreamsOn(id string) int {
	pr := c.nodes[id]
	select {
	case <-pr.exited:
		return 0
	default:
	}
	return processesRunning(pr, fakeMCP, "")
}

// configOf is the config file node id was last started with.
func (c *testCluster) configOf(id string) string {
	return filepath.Join(c.dir, id, "mcpflow.json")
}
