package tracing_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/tracing"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

func TestFromEnvIsOffUnlessAnOTLPExportIsAskedFor(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		on   bool
		err  string
	}{
		{"nothing set", nil, false, ""},
		{"a service name alone", map[string]string{"OTEL_SERVICE_NAME": "x"}, false, ""},
		{"an endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true, ""},
		{"a traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true, ""},
		{"exporter otlp, default endpoint", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, ""},
		{"exporter OTLP, any case", map[string]string{"OTEL_TRACES_EXPORTER": " OTLP "}, true, ""},
		{"exporter none wins", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, false, ""},
		{"SDK disabled wins", map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_TRACES_EXPORTER": "otlp"}, false, ""},
		{"SDK not disabled", map[string]string{"OTEL_SDK_DISABLED": "false", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, true, ""},
		{"blank counts as unset", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "  "}, false, ""},
		{"http/json", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, true, ""},
		{"the traces protocol overrides", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, true, ""},
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, `OTLP protocol "grpc" is not supported`},
		{"another exporter", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, "OTEL_TRACES_EXPORTER=zipkin is not supported"},
		{"two exporters", map[string]string{"OTEL_TRACES_EXPORTER": "otlp,console"}, false, "OTEL_TRACES_EXPORTER=otlp,console is not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			on, err := tracing.FromEnv(func(k string) string { return tc.env[k] })
			is.Equal(on, tc.on)
			if tc.err == "" {
				is.NoErr(err)
				return
			}
			is.True(err != nil && strings.Contains(err.Error(), tc.err)) // the error says what is not supported
		})
	}
}

func TestFromEnvErrorsQuoteNoEndpoint(t *testing.T) {
	is := is.New(t)
	secret := "http://collector/?token=s3cret"
	_, err := tracing.FromEnv(func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": secret, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}[k]
	})
	is.True(err != nil)
	is.True(!strings.Contains(err.Error(), "s3cret")) // the endpoint stays out of the error
}

func TestMetaCarriesTheTraceContextOrNothing(t *testing.T) {
	is := is.New(t)
	is.Equal(tracing.Meta("", ""), nil)
	is.Equal(tracing.Meta("00-a-b-01", ""), map[string]any{"traceparent": "00-a-b-01"})
	is.Equal(tracing.Meta("00-a-b-01", "k=v"), map[string]any{"traceparent": "00-a-b-01", "tracestate": "k=v"})
}

func TestRunTraceIDIsStableAndDistinct(t *testing.T) {
	is := is.New(t)
	a, b := tracing.RunTraceID("run_1"), tracing.RunTraceID("run_2")
	is.True(a.IsValid())
	is.Equal(a, tracing.RunTraceID("run_1")) // the same run, the same trace
	is.True(a != b)
}

func TestWithTracingOffNothingIsTracedOrSent(t *testing.T) {
	is := is.New(t)
	is.Equal(tracing.Enabled(), false)
	r := tracing.StartRun(store.Run{ID: "run_off"}, false)
	is.Equal(r, nil)
	// Every hook of the nil Run does nothing.
	call := workflow.Call{ID: "c1", NodeID: "call"}
	is.Equal(r.Attempt(call, 1, "conn", true), tracing.Carrier{}) // no trace context upstream
	r.Finished(call, workflow.Result{Outcome: "ok"})
	r.Steps([]workflow.TraceEntry{{NodeID: "x"}})
	r.End(store.Run{Status: store.RunCompleted})
}

func TestAStepsTraceContextNamesItsSpan(t *testing.T) {
	is := is.New(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithIDGenerator(tracing.IDs()))
	restore := tracing.Install(tp)
	defer func() {
		restore()
		is.Equal(tracing.Enabled(), false) // restored to off
		is.NoErr(tp.Shutdown(context.Background()))
	}()
	is.True(tracing.Enabled())

	r := tracing.StartRun(store.Run{ID: "run_ctx", DeploymentID: "d"}, false)
	call := workflow.Call{ID: "c1", FrameID: "root", NodeID: "call", Capability: "fake.one.echo"}
	first := r.Attempt(call, 1, "fake.one", true)
	again := r.Attempt(call, 2, "fake.one", true)
	is.Equal(first, again) // every attempt of a step carries its span's context
	started := rec.Started()
	is.Equal(len(started), 2) // the run and the step
	step := started[1].SpanContext()
	is.Equal(first.TraceParent, "00-"+tracing.RunTraceID("run_ctx").String()+"-"+step.SpanID().String()+"-01")
	is.Equal(first.TraceState, "")

	r.Finished(call, workflow.Result{Err: errors.New("boom"), Attempts: 2})
	r.End(store.Run{Status: store.RunFailed})
	r.End(store.Run{Status: store.RunFailed}) // again: nothing more
	is.Equal(len(rec.Ended()), 2)
}
