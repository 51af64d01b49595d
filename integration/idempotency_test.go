package integration

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/mcpface"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// keyedStarts is how many workflow.runs.start calls with one idempotency
// key the idempotency tests send at once.
const keyedStarts = 50

// startKeyed sends keyedStarts starts of deployment with key at once,
// spread over clients, and checks that they are all answered with one
// run, which exactly one of them started; it returns that run's id.
func startKeyed(t *testing.T, clients []*client.Client, deployment, key string) string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	results, errs := make([]p.RunResult, keyedStarts), make([]error, keyedStarts)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range keyedStarts {
		wg.Go(func() {
			<-start
			results[i], errs[i] = clients[i%len(clients)].RunDeployment(testContext(t), p.StartRunParams{
				DeploymentID: deployment, WorkflowInput: p.Object{}, IdempotencyKey: &key,
			})
		})
	}
	close(start)
	wg.Wait()
	started := 0
	for i, res := range results {
		is.NoErr(errs[i])                       // every start is answered
		is.True(res.RunID != nil)               // with a run
		is.Equal(*res.RunID, *results[0].RunID) // the same one
		if !res.Deduplicated {
			started++
		}
	}
	is.Equal(started, 1) // which exactly one of them started
	return *results[0].RunID
}

// checkOneRun checks, through c, that run id completed having called the
// counter once and is the only run of deployment, and that a start with
// key and another input is refused, naming it.
func checkOneRun(t *testing.T, c *client.Client, deployment, key, id string) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var run p.RunResult
	poll.For(t, "run "+id+" completes", settleWait, func() bool {
		var err error
		run, err = c.InspectRun(testContext(t), id)
		return err == nil && run.Status == "completed"
	})
	is.Equal(run.Output, p.Object{"count": float64(1)}) // the counter was called once
	runs, err := c.ListRuns(testContext(t), p.ListRunsParams{DeploymentID: &deployment})
	is.NoErr(err)
	is.Equal(runs.Total, 1) // one run in the store

	_, err = c.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{"other": true}, IdempotencyKey: &key})
	var refused *jsonrpc.Error
	is.True(errors.As(err, &refused))             // the key with another input is refused
	is.Equal(refused.Code, jsonrpc.InvalidParams) // as invalid params
	is.True(strings.Contains(err.Error(), id))    // naming the first run
	is.True(strings.Contains(err.Error(), key))   // and the key
}

// TestFiftyStartsWithOneKeyStartOneRunOnSQLite: 50 workflow.runs.start
// calls at once with one idempotency key, through the real binary's edge
// on SQLite, start exactly one run, which called its upstream once; all
// are answered with it. After a restart the key still answers with it,
// and another input is refused.
func TestFiftyStartsWithOneKeyStartOneRunOnSQLite(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	dir := t.TempDir()
	cfg := writeServerConfig(t, dir, config.Server{Sources: []config.Connection{stdioSource("counter.default", fakeMCP)}})
	first := startProcess(t, cfg, "serve.log", "--run-wait", "30s")
	c := dialURL(t, first.url)
	deployment := buildCounterDeployment(t, c, "counter.default")
	clients := []*client.Client{c, dialURL(t, first.url), dialURL(t, first.url), dialURL(t, first.url), dialURL(t, first.url)}
	id := startKeyed(t, clients, deployment, "order-7")
	checkOneRun(t, c, deployment, "order-7", id)

	first.kill(t)
	second := startProcess(t, cfg, "serve-again.log", "--run-wait", "30s")
	c = dialURL(t, second.url)
	key := "order-7"
	again, err := c.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{}, IdempotencyKey: &key})
	is.NoErr(err)
	is.True(again.Deduplicated) // across the restart
	is.Equal(*again.RunID, id)
	is.Equal(again.Status, "completed")
}

// TestFiftyStartsWithOneKeyStartOneRunAcrossTwoNodes: on PostgreSQL, 50
// workflow.runs.start calls at once with one idempotency key, half to
// each of two nodes, start exactly one run; another input is refused on
// either node.
func TestFiftyStartsWithOneKeyStartOneRunAcrossTwoNodes(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, clusterTTL, stdioSource("counter.default", fakeMCP))
	c.startAll(t, "a", "b")
	onA, onB := c.client(t, "a"), c.client(t, "b")
	deployment := buildCounterDeployment(t, onA, "counter.default")
	poll.For(t, "node b knows the catalog listed for node a", settleWait, func() bool {
		_, err := onB.InspectCapability(testContext(t), "counter.default.counter")
		return err == nil
	})
	id := startKeyed(t, []*client.Client{onA, onB}, deployment, "order-9")
	checkOneRun(t, onA, deployment, "order-9", id)
	checkOneRun(t, onB, deployment, "order-9", id)
}

// TestMCPFacePassesAnIdempotencyKeyThrough: two tools/call of a
// workflow's tool with one key in _meta ("io.mcpflow/idempotency_key")
// are one run, which called the counter once; a call without a key is a
// run of its own.
func TestMCPFacePassesAnIdempotencyKeyThrough(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	dir := t.TempDir()
	cfg := writeServerConfig(t, dir, config.Server{Sources: []config.Connection{stdioSource("counter.default", fakeMCP)}})
	pr := startProcess(t, cfg, "serve.log", "--run-wait", "30s")
	buildCounterDeployment(t, dialURL(t, pr.url), "counter.default")
	endpoint := "http://" + strings.TrimSuffix(strings.TrimPrefix(pr.url, "ws://"), "/ws") + "/mcp"
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "idempotency", Version: "0"}, nil).
		Connect(testContext(t), &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, nil)
	is.NoErr(err)
	t.Cleanup(func() { _ = cs.Close() })
	call := func(meta mcp.Meta) envelope {
		res, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Meta: meta, Name: counterTool, Arguments: map[string]any{}})
		is.NoErr(err)
		is.True(!res.IsError)
		data, err := json.Marshal(res.StructuredContent)
		is.NoErr(err)
		var env envelope
		is.NoErr(json.Unmarshal(data, &env))
		return env
	}
	poll.For(t, "/mcp lists "+counterTool, settleWait, func() bool {
		tools, err := cs.ListTools(testContext(t), nil)
		return err == nil && slices.ContainsFunc(tools.Tools, func(tool *mcp.Tool) bool { return tool.Name == counterTool })
	})
	keyed := mcp.Meta{mcpface.IdempotencyKeyMeta: "call-1"}
	first, again := call(keyed), call(keyed)
	is.Equal(first.Status, "completed")
	is.Equal(again.RunID, first.RunID)                   // one run for the key
	is.Equal(again.Output, map[string]any{"count": 1.0}) // which called the counter once
	other := call(nil)
	is.True(other.RunID != first.RunID) // no key: a run of its own
	is.Equal(other.Output, map[string]any{"count": 2.0})
}
