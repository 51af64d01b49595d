package integration

// What an idle upstream session costs mcpflow: goroutines, heap and RSS
// per open session with no call in flight, over streamable HTTP (both
// protocol eras, listening for notifications or not) and stdio. The upstreams run as subprocesses, so every
// figure is mcpflow's own. MCPFLOW_IDLE_SESSIONS=N measures N sessions
// per case instead of the default (the figures in docs come from 1000).

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/api/client"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
)

// maxIdleGoroutines bounds the goroutines mcpflow keeps per idle session
// of each case (a little over the exact count: the shared HTTP pool's
// few idle connections count too). Listening for notifications over HTTP
// takes a stream: its connection's two goroutines, and go-sdk's reader
// of it (and, in the stateless era, one more that waits to cancel it).
var maxIdleGoroutines = map[string]float64{
	"http-legacy": 4.5, "http-legacy-quiet": 1.5, "http-stateless": 5.5, "http-stateless-quiet": 1.5, "stdio": 4.5,
}

func TestIdleSessionCost(t *testing.T) {
	if testing.Short() {
		t.Skip("opens many upstream sessions")
	}
	n := 40
	if v, err := strconv.Atoi(os.Getenv("MCPFLOW_IDLE_SESSIONS")); err == nil && v > 0 {
		n = v
	}
	legacy := func(t *testing.T, n int) []config.Connection {
		addr := freeAddr(t)
		startFakeHTTP(t, addr)
		return httpSources(n, "http://"+addr+"/mcp", "")
	}
	stateless := func(t *testing.T, n int) []config.Connection {
		up := startConformanceHTTP(t, conformanceBinary(t), freeAddr(t), true)
		return httpSources(n, "http://"+up.addr+"/mcp", statelessEra)
	}
	for _, tc := range []struct {
		name    string
		n       int
		quiet   bool // the sessions do not listen for notifications
		sources func(t *testing.T, n int) []config.Connection
	}{
		{"http-legacy", n, false, legacy},
		{"http-legacy-quiet", n, true, legacy},
		{"http-stateless", n, false, stateless},
		{"http-stateless-quiet", n, true, stateless},
		{"stdio", max(n/10, 4), false, func(t *testing.T, n int) []config.Connection {
			sources := make([]config.Connection, n)
			for i := range sources {
				sources[i] = stdioSource(fmt.Sprintf("idle%d.default", i), fakeMCP)
			}
			return sources
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			sources := tc.sources(t, tc.n)
			svc := startServiceTuned(t, quietSessions(tc.quiet), sources...)
			c := svc.dial(t)
			before := measureProcess(t)
			openAll(t, c, sources)
			after := measureProcess(t)
			per := after.per(before, len(sources))
			t.Logf("%s: %d idle sessions: %.2f goroutines, %.1f KiB heap+stacks, %.1f KiB RSS per session (goroutines %d → %d)",
				tc.name, len(sources), per.goroutines, per.heap/1024, per.rss/1024, before.goroutines, after.goroutines)
			if per.goroutines > maxIdleGoroutines[tc.name] {
				buf := make([]byte, 1<<20)
				t.Logf("goroutines:\n%s", buf[:runtime.Stack(buf, true)])
			}
			is.True(per.goroutines <= maxIdleGoroutines[tc.name]) // an idle session keeps few goroutines
		})
	}
}

// quietSessions tunes mcpflow for measuring idle sessions: no warm-up,
// no refresh, no keepalive during the measure, so that sessions open only
// when the test opens them; with noListen, an HTTP session holds no
// stream for the server's notifications.
func quietSessions(noListen bool) func(*app.Options) {
	return func(o *app.Options) {
		o.RefreshAtStart = false
		o.Supervisor.Session.KeepAlive = time.Hour
		o.Supervisor.Session.PingTimeout = time.Minute
		o.Supervisor.Session.NoListen = noListen
	}
}

// httpSources are n streamable HTTP sources on url, pinned to era ("":
// mcpflow's default).
func httpSources(n int, url, era string) []config.Connection {
	sources := make([]config.Connection, n)
	for i := range sources {
		sources[i] = config.Connection{Kind: "mcp", ID: fmt.Sprintf("idle%d.default", i),
			Transport: config.Transport{Kind: config.TransportHTTP, URL: url, ProtocolVersion: era}}
	}
	return sources
}

// openAll opens the session of every source (a catalog refresh lists
// through it), eight at a time, and waits until each reports open.
func openAll(t testing.TB, c *client.Client, sources []config.Connection) {
	t.Helper()
	is := is.New(t)
	ctx := testContext(t)
	ids := make(chan string)
	errs := make(chan error, len(sources))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range ids {
				if _, err := c.RefreshConnectionCatalog(ctx, id); err != nil {
					errs <- fmt.Errorf("refresh %s: %w", id, err)
				}
			}
		}()
	}
	for _, s := range sources {
		ids <- s.ID
	}
	close(ids)
	wg.Wait()
	close(errs)
	for err := range errs {
		is.NoErr(err) // every session opens and lists
	}
	statuses, err := c.GetConnectionStatuses(ctx)
	is.NoErr(err)
	for _, st := range statuses.Statuses {
		is.Equal(st.Session.State, string(session.StateOpen)) // every session is open
	}
}

// processFigures are the process's goroutines, heap plus goroutine stacks
// in use, of which the stacks, and resident set.
type processFigures struct {
	goroutines        int
	heap, stacks, rss uint64
}

// perSession is a figure per session.
type perSession struct{ goroutines, heap, stacks, rss float64 }

func (a processFigures) per(before processFigures, n int) perSession {
	return perSession{
		goroutines: float64(a.goroutines-before.goroutines) / float64(n),
		heap:       (float64(a.heap) - float64(before.heap)) / float64(n),
		stacks:     (float64(a.stacks) - float64(before.stacks)) / float64(n),
		rss:        (float64(a.rss) - float64(before.rss)) / float64(n),
	}
}

// measureProcess measures the process once its goroutine count has been
// steady for three samples 50 ms apart (within 10 s), after a GC. Its
// goroutines leave out those of idle pooled HTTP connections.
func measureProcess(t testing.TB) processFigures {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	last, steady := -1, 0
	for steady < 3 && time.Now().Before(deadline) {
		select {
		case <-time.After(50 * time.Millisecond): // sampling interval
		case <-t.Context().Done():
			return processFigures{}
		}
		if g := runtime.NumGoroutine(); g == last {
			steady++
		} else {
			last, steady = g, 0
		}
	}
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return processFigures{goroutines: runtime.NumGoroutine() - idleConnGoroutines(), heap: ms.HeapInuse + ms.StackInuse, stacks: ms.StackInuse, rss: residentBytes(t)}
}

// idleConnGoroutines counts the goroutines of net/http's idle pooled
// connections (two each: the read loop, waiting for a byte that is not a
// response, and the write loop). They belong to the connection pool the
// HTTP sessions share: how many there are depends on how many calls ran at
// once (the sessions open eight at a time) and on the pool's idle bound,
// not on the number of sessions. A session's notification stream is a
// connection busy with its response, not idle, and is counted.
func idleConnGoroutines() int {
	buf := make([]byte, 16<<20)
	idle := 0
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "net/http.(*persistConn).readLoop") && strings.Contains(g, "bufio.(*Reader).Peek") {
			idle++
		}
	}
	return 2 * idle
}

// residentBytes is the process's VmRSS, from /proc (0 elsewhere).
func residentBytes(t testing.TB) uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Logf("no RSS figure: %v", err)
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}
