package tracing

import (
	"fmt"
	"slices"
	"strings"
)

// The OTEL_* variables FromEnv reads. The exporter reads its own
// (OTEL_EXPORTER_OTLP_*), the SDK the sampler's (OTEL_TRACES_SAMPLER,
// OTEL_TRACES_SAMPLER_ARG), the batch processor's (OTEL_BSP_*) and the
// resource's (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES).
const (
	EnvSDKDisabled     = "OTEL_SDK_DISABLED"
	EnvTracesExporter  = "OTEL_TRACES_EXPORTER"
	EnvEndpoint        = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint  = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvProtocol        = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvTracesProtocol  = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	EnvHeaders         = "OTEL_EXPORTER_OTLP_HEADERS"
	EnvTracesHeaders   = "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
	EnvServiceName     = "OTEL_SERVICE_NAME"
	DefaultServiceName = "mcpflow"
)

// FromEnv decides from the environment (getenv, e.g. os.Getenv; an empty
// value counts as unset) whether tracing is on. It is off by default,
// unlike the OpenTelemetry default exporter "otlp": on only when
// OTEL_TRACES_EXPORTER is "otlp", or is unset and an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is
// set. OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn it off
// whatever else is set. The exporter is OTLP over HTTP; a setting that
// asks for something else (another exporter, the grpc protocol) is an
// error, and tracing stays off. No error quotes a variable that may hold
// a secret (an endpoint, headers).
func FromEnv(getenv func(string) string) (bool, error) {
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }
	if strings.EqualFold(get(EnvSDKDisabled), "true") {
		return false, nil
	}
	var exporters []string
	for e := range strings.SplitSeq(strings.ToLower(get(EnvTracesExporter)), ",") {
		if e = strings.TrimSpace(e); e != "" && !slices.Contains(exporters, e) {
			exporters = append(exporters, e)
		}
	}
	switch {
	case slices.Contains(exporters, "none"):
		return false, nil
	case len(exporters) == 0:
		if get(EnvEndpoint) == "" && get(EnvTracesEndpoint) == "" {
			return false, nil
		}
	case len(exporters) > 1 || exporters[0] != "otlp":
		return false, fmt.Errorf("%s=%s is not supported: mcpflow exports traces with otlp only", EnvTracesExporter, strings.Join(exporters, ","))
	}
	protocol := get(EnvTracesProtocol)
	if protocol == "" {
		protocol = get(EnvProtocol)
	}
	switch protocol {
	case "", "http/protobuf", "http/json":
		return true, nil
	}
	return false, fmt.Errorf("OTLP protocol %q is not supported: mcpflow exports traces over HTTP (http/protobuf or http/json)", protocol)
}
