package integration

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
	"github.com/mcpflow/mcpflow/fakes"
)

// BenchmarkKeepaliveUnderStarvation opens starvedSessions idle HTTP
// sessions (MCPFLOW_STARVED_SESSIONS overrides it) pinged every second
// (each ping may take 250 ms, three missed in a row end a session), then
// starves mcpflow of CPU: spinning goroutines, four per CPU, for ten
// keepalive intervals. It reports the pings missed and those found
// inconclusive (each a log line), and the sessions lost, which must be
// none: a starved mcpflow is not a hung upstream. jitter=0 pings at exact intervals; jitter=0.2 is the default.
//
//	go test -run '^$' -bench KeepaliveUnderStarvation -benchtime 1x ./integration/
func BenchmarkKeepaliveUnderStarvation(b *testing.B) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("MCPFLOW_STARVED_SESSIONS")); err == nil && v > 0 {
		n = v
	}
	addr := freeAddr(b)
	startFakeHTTP(b, addr)
	for _, jitter := range []float64{0, 0.2} {
		b.Run(fmt.Sprintf("jitter=%.1f", jitter), func(b *testing.B) {
			for b.Loop() {
				missed, inconclusive, lost := starveSessions(b, httpSources(n, "http://"+addr+"/mcp", ""), jitter)
				b.ReportMetric(float64(missed), "missed_pings")
				b.ReportMetric(float64(inconclusive), "inconclusive_pings")
				b.ReportMetric(float64(lost), "sessions_lost")
				is.New(b).Equal(lost, 0) // no session is lost to a starved mcpflow
			}
		})
	}
}

// starveSessions opens sources' sessions, starves the process for ten
// keepalive intervals, and returns the pings missed meanwhile, those
// found inconclusive (mcpflow was starved for much of their wait), and
// the sessions that did not survive.
func starveSessions(b *testing.B, sources []config.Connection, jitter float64) (missed, inconclusive, lost int) {
	is := is.New(b)
	const keepAlive = time.Second
	logs := fakes.CaptureLogs(b)
	svc := startServiceTuned(b, func(o *app.Options) {
		o.WarmUp = 0
		o.Supervisor.Session.KeepAlive, o.Supervisor.Session.PingTimeout = keepAlive, 250*time.Millisecond
		o.Supervisor.Session.Policy.Jitter = jitter
		if jitter == 0 {
			o.Supervisor.Session.Policy.Jitter = -1 // none
		}
	}, sources...)
	c := svc.dial(b)
	openAll(b, c, sources)

	ctx, cancel := context.WithTimeout(context.Background(), 10*keepAlive)
	var spin sync.WaitGroup
	for range 4 * runtime.GOMAXPROCS(0) {
		spin.Go(func() {
			for ctx.Err() == nil {
				for i := 0; i < 1_000_000; i++ {
					_ = i * i
				}
			}
		})
	}
	spin.Wait()
	cancel()

	statuses, err := c.GetConnectionStatuses(testContext(b))
	is.NoErr(err)
	causes := map[string]int{}
	for _, st := range statuses.Statuses {
		if st.Session.State != "open" || st.Session.Generation != 1 {
			lost++
			if st.Session.LastError != nil {
				causes[*st.Session.LastError]++
			}
		}
	}
	if lost > 0 {
		b.Logf("sessions lost, by last error: %v", causes)
	}
	return len(logs.Lines("keepalive ping missed")), len(logs.Lines("keepalive ping inconclusive")), lost
}
