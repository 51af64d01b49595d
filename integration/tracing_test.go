package integration

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes"
)

// collector is an OTLP/HTTP trace receiver: it decodes every protobuf
// export and keeps the spans, with their service's name.
type collector struct {
	URL string

	mu      sync.Mutex
	spans   []*tracepb.Span
	service []string // service.name of each span's resource
}

func startCollector(t *testing.T) *collector {
	t.Helper()
	c := &collector{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
			http.NotFound(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		var req coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &req)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		for _, rs := range req.GetResourceSpans() {
			name := attrOf(rs.GetResource().GetAttributes(), "service.name")
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					c.spans = append(c.spans, s)
					c.service = append(c.service, name)
				}
			}
		}
		c.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

// received returns the spans received so far and their services' names.
func (c *collector) received() ([]*tracepb.Span, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*tracepb.Span(nil), c.spans...), append([]string(nil), c.service...)
}

// attrOf is the string value of attribute key ("" when absent).
func attrOf(attrs []*commonpb.KeyValue, key string) string {
	for _, kv := range attrs {
		if kv.GetKey() == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

// tracedService is `mcpflow serve` (the real binary) run with the given
// OTEL_* environment (any other OTEL_* variable cleared) and an HTTP
// upstream, traced.default, whose meta tool echoes its request's _meta;
// its deployment meta_workflow.default wraps that tool.
type tracedService struct {
	pr     *process
	client *client.Client
	dep    string
}

func startTracedService(t *testing.T, env map[string]string) *tracedService {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "OTEL_") {
			t.Setenv(k, "") // empty is unset
		}
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	t.Setenv("GOTRACEBACK", "all") // a SIGQUIT dump shows every goroutine
	upstream := httptest.NewServer(fakes.NewHTTPHandler(func() *mcp.Server { return fakes.WithMetaEcho(fakes.NewServer()) }))
	t.Cleanup(upstream.Close)
	dir := t.TempDir()
	pr := startProcess(t, writeConfig(t, dir, httpSource("traced.default", strings.TrimPrefix(upstream.URL, "http://"))), "mcpflow.log")
	c := dialURL(t, pr.url)
	return &tracedService{pr: pr, client: c, dep: buildToolDeploymentFor(t, c, "traced.default", "meta")}
}

// runMeta runs the meta workflow to its end and returns the run's id and
// the _meta its upstream call carried.
func (s *tracedService) runMeta(t *testing.T) (string, map[string]any) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	started, err := s.client.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: s.dep, WorkflowInput: p.Object{}})
	is.NoErr(err)
	is.True(started.RunID != nil)
	run := settled(t, s.client, *started.RunID)
	is.Equal(run.Status, "completed")
	meta, ok := run.Output["meta"].(map[string]any)
	is.True(ok) // the run's output is the upstream's view of _meta
	return *started.RunID, meta
}

// exporterRuns SIGQUITs the process and reports whether its goroutine
// dump shows a goroutine of the OpenTelemetry trace SDK (its batch span
// processor's).
func (s *tracedService) exporterRuns(t *testing.T) bool {
	t.Helper()
	is := is.New(t)
	is.Helper()
	is.NoErr(s.pr.cmd.Process.Signal(syscall.SIGQUIT))
	select {
	case <-s.pr.exited:
	case <-time.After(10 * time.Second):
		is.Fail() // mcpflow dumps its goroutines and exits on SIGQUIT
	}
	dump, err := os.ReadFile(s.pr.logs)
	is.NoErr(err)
	is.True(strings.Contains(string(dump), "goroutine ")) // the dump is there
	return strings.Contains(string(dump), "go.opentelemetry.io/otel/sdk/trace.")
}

// TestTracingExportsARunsSpansAndPropagatesItsContextUpstream: with an
// OTLP endpoint set, a run's span and its step's span reach the
// collector, flushed at shutdown (the batch delay is a minute), and the
// upstream call carried the step span's traceparent in its _meta.
func TestTracingExportsARunsSpansAndPropagatesItsContextUpstream(t *testing.T) {
	is := is.New(t)
	col := startCollector(t)
	s := startTracedService(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.URL, "OTEL_BSP_SCHEDULE_DELAY": "60000"})
	runID, meta := s.runMeta(t)
	traceparent, _ := meta["traceparent"].(string)
	parts := strings.Split(traceparent, "-")
	is.Equal(len(parts), 4) // version-traceid-parentid-flags
	is.Equal(parts[0], "00")
	is.Equal(parts[3], "01") // sampled

	spans, _ := col.received()
	is.Equal(len(spans), 0) // nothing before the flush
	code, _ := s.pr.terminate(t)
	is.Equal(code, 0)

	spans, services := col.received()
	var root, step *tracepb.Span
	for i, span := range spans {
		if attrOf(span.GetAttributes(), "mcpflow.run.id") != runID {
			continue
		}
		is.Equal(services[i], "mcpflow") // the default service name
		switch span.GetName() {
		case "workflow.run":
			root = span
		case "workflow.step":
			if attrOf(span.GetAttributes(), "mcpflow.step.node_id") == "call" {
				step = span
			}
		}
	}
	if root == nil || step == nil {
		t.Logf("received %d spans: %v", len(spans), spans)
	}
	is.True(root != nil) // the run's span arrived
	is.True(step != nil) // its call step's span arrived
	is.Equal(attrOf(root.GetAttributes(), "mcpflow.deployment.id"), s.dep)
	is.Equal(attrOf(root.GetAttributes(), "mcpflow.run.status"), "completed")
	is.Equal(len(root.GetParentSpanId()), 0) // a root span
	is.Equal(step.GetParentSpanId(), root.GetSpanId())
	is.Equal(step.GetKind(), tracepb.Span_SPAN_KIND_CLIENT)
	is.Equal(attrOf(step.GetAttributes(), "mcpflow.step.connection"), "traced.default")
	// The upstream saw the step's own context.
	is.Equal(hex.EncodeToString(step.GetTraceId()), parts[1])
	is.Equal(hex.EncodeToString(step.GetSpanId()), parts[2])
}

// TestTracingIsOffByDefaultAndRunsNoExporter: without OTEL_* variables, or
// with OTEL_SDK_DISABLED=true beside an endpoint, mcpflow runs no
// exporter goroutine, sends no trace context upstream, and exports
// nothing; with only an endpoint set (the control) the exporter runs.
func TestTracingIsOffByDefaultAndRunsNoExporter(t *testing.T) {
	col := startCollector(t)
	disabled := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.URL, "OTEL_SDK_DISABLED": "true", "OTEL_BSP_SCHEDULE_DELAY": "60000"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		on   bool
	}{
		{"no OTEL variables", nil, false},
		{"OTEL_SDK_DISABLED", disabled, false},
		{"an endpoint (control)", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.URL}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			s := startTracedService(t, tc.env)
			_, meta := s.runMeta(t)
			_, sent := meta["traceparent"]
			is.Equal(sent, tc.on)              // a trace context goes upstream only when tracing is on
			is.Equal(s.exporterRuns(t), tc.on) // the exporter's goroutine runs only when tracing is on
		})
	}

	t.Run("nothing exported when disabled", func(t *testing.T) {
		is := is.New(t)
		spans, _ := col.received()
		before := len(spans)
		s := startTracedService(t, disabled)
		s.runMeta(t)
		code, _ := s.pr.terminate(t) // a shutdown flushes what tracing has
		is.Equal(code, 0)
		spans, _ = col.received()
		is.Equal(len(spans), before) // nothing arrived
	})
}
