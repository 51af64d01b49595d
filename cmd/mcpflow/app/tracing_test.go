package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/tracing"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestTracingStaysOffWithoutOTELVariables(t *testing.T) {
	is := is.New(t)
	is.Equal(startTracing(context.Background(), envOf(nil)), nil) // nothing set up, nothing started
	is.Equal(tracing.Enabled(), false)
	var off *tracer
	off.shutdown(context.Background()) // a nil tracer stops as nothing
}

func TestTracingExportErrorsShowNoSecret(t *testing.T) {
	is := is.New(t)
	env := envOf(map[string]string{
		tracing.EnvHeaders:       "Authorization=Bearer%20hdr-s3cret,x-api-key=k3y-s3cret",
		tracing.EnvTracesHeaders: "x-other=other-s3cret",
	})
	msg := redactOTLP(env, `traces export: Post "https://user:pw-s3cret@collector:4318/v1/traces?token=q-s3cret": `+
		`rejected Bearer hdr-s3cret, k3y-s3cret, other-s3cret`)
	is.True(!strings.Contains(msg, "s3cret"))                  // every secret is gone
	is.True(strings.Contains(msg, "collector:4318/v1/traces")) // what is not secret stays
}

func TestTracingExportErrorsAreLoggedAtMostOncePerInterval(t *testing.T) {
	is := is.New(t)
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	h := &exportErrors{getenv: envOf(nil)}
	for range 3 {
		h.Handle(errors.New("collector down"))
	}
	is.Equal(strings.Count(buf.String(), "collector down"), 1) // once, the rest counted
	is.Equal(h.suppressed, 2)
}

// exporterRuns reports whether a goroutine of the OpenTelemetry trace SDK
// (its batch span processor's) is running.
func exporterRuns() bool {
	buf := make([]byte, 4<<20)
	return bytes.Contains(buf[:runtime.Stack(buf, true)], []byte("go.opentelemetry.io/otel/sdk/trace."))
}

// TestTracingShutdownFlushesWithinItsBudget: spans of a run ended before
// shutdown reach the collector at shutdown, though the batch delay is an
// hour; a collector that hangs costs no more than the budget, and the
// exporter's goroutine ends either way.
func TestTracingShutdownFlushesWithinItsBudget(t *testing.T) {
	is := is.New(t)
	got := make(chan struct{}, 16)
	hang := make(chan struct{})
	var hanging atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hanging.Load() {
			select {
			case <-hang:
			case <-r.Context().Done():
			}
			return
		}
		got <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(hang) })
	env := envOf(map[string]string{tracing.EnvEndpoint: srv.URL, "OTEL_BSP_SCHEDULE_DELAY": "3600000"})
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL) // the exporter reads its own settings
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "3600000")

	tr := startTracing(context.Background(), env)
	is.True(tr != nil)
	is.True(tracing.Enabled())
	waitExporter(t, true)
	tracing.StartRun(store.Run{ID: "run_flush"}, false).End(store.Run{Status: store.RunCompleted})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tr.shutdown(ctx)
	is.Equal(tracing.Enabled(), false) // uninstalled
	select {
	case <-got:
	default:
		is.Fail() // the span was exported by the shutdown
	}

	waitExporter(t, false)
	hanging.Store(true)
	tr = startTracing(context.Background(), env)
	tracing.StartRun(store.Run{ID: "run_hang"}, false).End(store.Run{Status: store.RunCompleted})
	ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	tr.shutdown(ctx)
	is.True(time.Since(began) < 2*time.Second) // bounded by its context
	waitExporter(t, false)
}

// waitExporter waits, bounded, until the exporter's goroutine runs (a
// goroutine just started may not be scheduled yet), or has ended.
func waitExporter(t *testing.T, running bool) {
	t.Helper()
	// the exporter's goroutine starts with tracing and ends with its shutdown
	poll.For(t, fmt.Sprintf("the exporter's goroutine running: %v", running), 2*time.Second, func() bool { return exporterRuns() == running })
}
