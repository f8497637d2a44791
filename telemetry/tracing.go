package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// TracerName names the instrumentation scope of every span Cairn makes.
const TracerName = "github.com/cairnkg/cairn"

// Tracing is the process's tracer provider and how to flush it.
type Tracing struct {
	// Provider makes the spans: the OpenTelemetry SDK exporting by OTLP,
	// or a no-op provider when tracing is off.
	Provider trace.TracerProvider
	// Enabled reports whether spans are exported.
	Enabled bool
	// Endpoint is where spans go (for the start-up log line); empty when
	// tracing is off.
	Endpoint string
	shutdown func(context.Context) error
}

// Tracer returns the tracer of Cairn's instrumentation scope.
func (t *Tracing) Tracer() trace.Tracer { return t.Provider.Tracer(TracerName) }

// Shutdown flushes the spans not yet exported and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t.shutdown == nil {
		return nil
	}
	return t.shutdown(ctx)
}

// Off is tracing switched off: a no-op provider whose spans cost a few
// nanoseconds and record nothing.
func Off() *Tracing { return &Tracing{Provider: noop.NewTracerProvider()} }

// NewTracing returns the tracing the standard OpenTelemetry environment
// asks for (getenv reads it): spans exported by OTLP over HTTP (protobuf)
// when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is
// set, unless OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none; Off
// otherwise. The exporter reads the other OTEL_EXPORTER_OTLP_* variables
// itself (headers, timeout, compression, TLS), the SDK reads
// OTEL_TRACES_SAMPLER[_ARG] and the OTEL_BSP_* batching variables, and
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name the service
// (service.name defaults to "cairn"). Only "otlp" is a supported
// OTEL_TRACES_EXPORTER.
func NewTracing(ctx context.Context, getenv func(string) string, version string) (*Tracing, error) {
	// The signal's own variable is the whole URL; the general one is a
	// base to which the signal's path is added (OTLP exporter spec).
	endpoint := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if endpoint == "" {
		if base := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); base != "" {
			endpoint = strings.TrimSuffix(base, "/") + "/v1/traces"
		}
	}
	exporter := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")))
	if endpoint == "" || strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || exporter == "none" {
		return Off(), nil
	}
	if exporter != "" && exporter != "otlp" {
		return nil, fmt.Errorf("telemetry: OTEL_TRACES_EXPORTER=%s is not supported (otlp or none)", exporter)
	}
	if p := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"); p == "" {
		if p = getenv("OTEL_EXPORTER_OTLP_PROTOCOL"); p != "" && p != "http/protobuf" {
			return nil, fmt.Errorf("telemetry: OTEL_EXPORTER_OTLP_PROTOCOL=%s is not supported (http/protobuf)", p)
		}
	} else if p != "http/protobuf" {
		return nil, fmt.Errorf("telemetry: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=%s is not supported (http/protobuf)", p)
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP exporter: %w", err)
	}
	res, err := resource.Merge(
		resource.NewSchemaless(attribute.String("service.name", "cairn"), attribute.String("service.version", version)),
		resource.Environment(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracing{Provider: tp, Enabled: true, Endpoint: endpoint, shutdown: tp.Shutdown}, nil
}
