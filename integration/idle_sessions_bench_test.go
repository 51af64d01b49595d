package integration

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkIdleSessionState measures what one idle streamable HTTP session
// costs in memory, two ways in one run, against the same fakemcp upstream
// (a subprocess, so that the server's side is not counted):
//
//   - direct: go-sdk ClientSessions opened by the benchmark, sharing one
//     HTTP connection pool as mcpflow's sessions do: go-sdk's own state
//     per session, the floor;
//   - mcpflow: the session actors of an mcpflow started in-process, each
//     session opened and its catalog listed.
//
// Reported per session: heap and goroutine stacks in use (after a GC),
// of which the stacks, goroutines, and the ratio of mcpflow's heap and
// stacks to direct's. (Not RSS: the cases share one process, whose
// resident memory the earlier cases leave behind.)
// MCPFLOW_IDLE_SESSIONS=N opens N sessions (default 1,000);
// The first session is opened before the process is measured, and not
// counted: what it sets up once for all (the API's validators of the
// methods that open sessions, go-sdk's first client) is no session's.
// MCPFLOW_IDLE_HEAP=DIR also writes a heap profile of each case to
// DIR/idle-<case>.heap, taken with the sessions open, and one to
// DIR/idle-<case>-before.heap, taken before (compare them with pprof's
// -diff_base), sampled every 4 KiB
// allocated (read it with
// `go tool pprof -sample_index=inuse_space`).
//
//	go test -run '^$' -bench IdleSessionState -benchtime 1x -count 3 ./integration/
func BenchmarkIdleSessionState(b *testing.B) {
	if testing.Short() {
		b.Skip("opens many upstream sessions")
	}
	n := idleSessionCount(1000)
	if os.Getenv("MCPFLOW_IDLE_HEAP") != "" {
		runtime.MemProfileRate = 4096 // fine enough to see a session's few KiB
	}
	addr := freeAddr(b)
	startFakeHTTP(b, addr)
	url := "http://" + addr + "/mcp"
	for _, listen := range []bool{true, false} {
		b.Run(fmt.Sprintf("listen=%t", listen), func(b *testing.B) {
			var direct perSession
			b.Run("case=direct", func(b *testing.B) {
				for b.Loop() {
					direct = idleDirect(b, url, n, listen)
				}
				reportIdle(b, direct, nil)
			})
			b.Run("case=mcpflow", func(b *testing.B) {
				var flow perSession
				for b.Loop() {
					flow = idleMCPFlow(b, url, n, listen)
				}
				reportIdle(b, flow, &direct)
			})
		})
	}
}

// idleSessionCount is MCPFLOW_IDLE_SESSIONS, or def.
func idleSessionCount(def int) int {
	if v, err := strconv.Atoi(os.Getenv("MCPFLOW_IDLE_SESSIONS")); err == nil && v > 0 {
		return v
	}
	return def
}

// idleDirect opens n go-sdk sessions on url, eight at a time, measures
// the process with them open, and closes them. Without listen, they open
// no standalone stream for the server's notifications.
func idleDirect(b *testing.B, url string, n int, listen bool) perSession {
	b.Helper()
	ctx := testContext(b)
	pool := http.DefaultTransport.(*http.Transport).Clone()
	defer pool.CloseIdleConnections()
	client := &http.Client{Transport: pool}
	open := func(i int) *mcp.ClientSession {
		return connect(ctx, b, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: client, DisableStandaloneSSE: !listen})
	}
	sessions := make([]*mcp.ClientSession, n)
	sessions[0] = open(0) // what the first session sets up once is not the others'
	before := measureProcess(b)
	heapProfile(b, fmt.Sprintf("direct-listen=%t-before", listen))
	work := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range work {
				sessions[i] = open(i)
			}
		})
	}
	for i := 1; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	after := measureProcess(b)
	heapProfile(b, fmt.Sprintf("direct-listen=%t", listen))
	for _, cs := range sessions {
		_ = cs.Close()
	}
	return after.per(before, n-1)
}

// idleMCPFlow starts mcpflow in-process with n HTTP sources on url, with
// no refresh at start and no keepalive during the measure, opens every
// session and measures the process. Without listen, the sessions hold no
// stream for the server's notifications (a source's `listen: false`). The service stops when b ends.
func idleMCPFlow(b *testing.B, url string, n int, listen bool) perSession {
	b.Helper()
	sources := httpSources(n, url, "")
	svc := startServiceTuned(b, quietSessions(!listen), sources...)
	c := svc.dial(b)
	// What mcpflow holds without sessions, and what the first one sets up
	// once (the API's validators of the methods that open them), is not
	// theirs.
	is := is.New(b)
	ctx := testContext(b)
	_, err := c.RefreshConnectionCatalog(ctx, sources[0].ID)
	is.NoErr(err) // the first session opens
	_, err = c.GetConnectionStatuses(ctx)
	is.NoErr(err)
	before := measureProcess(b)
	heapProfile(b, fmt.Sprintf("mcpflow-listen=%t-before", listen))
	openAll(b, c, sources[1:])
	after := measureProcess(b)
	heapProfile(b, fmt.Sprintf("mcpflow-listen=%t", listen))
	return after.per(before, n-1)
}

// reportIdle reports per-session figures, and against direct the ratio.
func reportIdle(b *testing.B, per perSession, direct *perSession) {
	b.ReportMetric(per.heap/1024, "KiB_heap+stacks/session")
	b.ReportMetric(per.stacks/1024, "KiB_stacks/session")
	b.ReportMetric(per.goroutines, "goroutines/session")
	if direct != nil && direct.heap > 0 {
		b.ReportMetric(per.heap/direct.heap, "heap_x_direct")
	}
}

// heapProfile writes a heap profile to $MCPFLOW_IDLE_HEAP/idle-name.heap.
func heapProfile(b *testing.B, name string) {
	dir := os.Getenv("MCPFLOW_IDLE_HEAP")
	if dir == "" {
		return
	}
	is := is.New(b)
	f, err := os.Create(filepath.Join(dir, "idle-"+name+".heap"))
	is.NoErr(err)
	defer f.Close()
	is.NoErr(pprof.Lookup("heap").WriteTo(f, 0))
}
