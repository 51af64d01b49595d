package app

import (
	"context"
	"log/slog"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/tracing"
)

// tracer is the OpenTelemetry tracer provider the App installed, when the
// OTEL_* environment turned tracing on.
type tracer struct {
	provider *sdktrace.TracerProvider
	restore  func()
	getenv   func(string) string
	// abort cuts any export still in flight once shutdown's budget is
	// spent, so that the SDK's export goroutine ends with the App.
	abort context.CancelFunc
}

// startTracing turns tracing on when the environment (getenv) asks for it
// (tracing.FromEnv; docs/tracing.md): runs are then traced through an
// OTLP/HTTP exporter, which reads its own OTEL_EXPORTER_OTLP_* settings,
// behind a batch span processor (OTEL_BSP_*), sampled as
// OTEL_TRACES_SAMPLER says, as the service OTEL_SERVICE_NAME ("mcpflow"
// unless set). With tracing off it starts nothing and returns nil; a
// setting it cannot honour is logged, and tracing stays off.
func startTracing(ctx context.Context, getenv func(string) string) *tracer {
	on, err := tracing.FromEnv(getenv)
	if err != nil {
		slog.Warn("tracing off", "err", err)
		return nil
	}
	if !on {
		return nil
	}
	exporter, err := otlptracehttp.New(ctx)
	if err != nil {
		slog.Warn("tracing off: no OTLP exporter", "err", redactOTLP(getenv, err.Error()))
		return nil
	}
	version := "(unknown)"
	if info, ok := debug.ReadBuildInfo(); ok {
		version = info.Main.Version
	}
	// Later detectors win: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// override the defaults.
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", tracing.DefaultServiceName), attribute.String("service.version", version)),
		resource.WithTelemetrySDK(), resource.WithHost(), resource.WithFromEnv())
	if err != nil {
		// A partial resource (say, a malformed OTEL_RESOURCE_ATTRIBUTES
		// entry) still names the service.
		slog.Warn("tracing resource incomplete", "err", redactOTLP(getenv, err.Error()))
	}
	otel.SetErrorHandler(&exportErrors{getenv: getenv})
	life, abort := context.WithCancel(context.Background())
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(abortable{exporter, life}), sdktrace.WithResource(res), sdktrace.WithIDGenerator(tracing.IDs()))
	slog.Info("tracing on", "exporter", "otlp", "service", serviceName(res))
	return &tracer{provider: provider, restore: tracing.Install(provider), getenv: getenv, abort: abort}
}

// abortable is an exporter whose exports end, too, when life does. The
// SDK's batch processor exports its last batch with a context of its own
// (bounded by OTEL_BSP_EXPORT_TIMEOUT, 30 s), not shutdown's.
type abortable struct {
	sdktrace.SpanExporter
	life context.Context
}

// ExportSpans exports spans until ctx or life ends.
func (e abortable) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(e.life, cancel)()
	return e.SpanExporter.ExportSpans(ctx, spans)
}

// serviceName is the service.name of res.
func serviceName(res *resource.Resource) string {
	if v, ok := res.Set().Value("service.name"); ok {
		return v.AsString()
	}
	return tracing.DefaultServiceName
}

// shutdown stops tracing: runs started from now on are not traced, and
// the spans not yet exported are flushed within ctx; an export still in
// flight then is cut off. A failed flush is logged, not returned: losing
// spans does not fail a shutdown.
func (t *tracer) shutdown(ctx context.Context) {
	if t == nil {
		return
	}
	t.restore()
	err := t.provider.Shutdown(ctx)
	t.abort()
	if err != nil {
		slog.Warn("trace export at shutdown failed: spans not yet exported are lost", "err", redactOTLP(t.getenv, err.Error()))
	}
}

// exportErrors logs what the OpenTelemetry SDK reports (a failed export,
// mostly), redacted, at most once per exportErrorsEvery; it counts the
// rest.
type exportErrors struct {
	getenv func(string) string

	mu         sync.Mutex
	last       time.Time
	suppressed int
}

const exportErrorsEvery = time.Minute

// Handle implements otel.ErrorHandler.
func (h *exportErrors) Handle(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if time.Since(h.last) < exportErrorsEvery {
		h.suppressed++
		return
	}
	h.last = time.Now()
	slog.Warn("tracing: export failed", "err", redactOTLP(h.getenv, err.Error()), "suppressed", h.suppressed)
	h.suppressed = 0
}

// redactOTLP removes from msg what of the OTLP settings could be a
// secret: header values, and the query and credentials of any URL (an
// endpoint's, say).
func redactOTLP(getenv func(string) string, msg string) string {
	headers := map[string]string{}
	for _, name := range []string{tracing.EnvHeaders, tracing.EnvTracesHeaders} {
		for pair := range strings.SplitSeq(getenv(name), ",") {
			_, v, ok := strings.Cut(pair, "=")
			if !ok {
				continue
			}
			v = strings.TrimSpace(v)
			headers[name+"/"+v] = v
			if dec, err := url.PathUnescape(v); err == nil {
				headers[name+"/"+dec] = dec
			}
		}
	}
	return session.Redact(config.Connection{Transport: config.Transport{Headers: headers}}, msg)
}

var _ otel.ErrorHandler = (*exportErrors)(nil)
