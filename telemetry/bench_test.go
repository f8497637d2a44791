package telemetry_test

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/cairnkg/cairn/telemetry"
)

// BenchmarkInstrumentation is what one tool call pays for telemetry, piece
// by piece: the metrics of a call (a counter and a histogram), and the two
// spans of a call (the MCP request and the tool) with tracing off (no-op)
// and on (recorded by the SDK, always sampled, no exporter).
func BenchmarkInstrumentation(b *testing.B) {
	m := telemetry.NewMetrics()
	b.Run("metrics", func(b *testing.B) {
		for b.Loop() {
			m.ToolCall("retrieve_entities", "http", "OK", time.Millisecond)
			m.ConsentDecision("read", "entities", "allow")
		}
	})
	spans := func(b *testing.B, tr *telemetry.Tracing) {
		tracer := tr.Tracer()
		ctx := context.Background()
		for b.Loop() {
			c, req := tracer.Start(ctx, "mcp tools/call")
			_, tool := tracer.Start(c, "tool retrieve_entities")
			_ = tool.SpanContext().TraceID().String()
			tool.End()
			req.End()
		}
	}
	b.Run("spans-off", func(b *testing.B) { spans(b, telemetry.Off()) })
	b.Run("spans-on", func(b *testing.B) {
		spans(b, &telemetry.Tracing{Provider: sdktrace.NewTracerProvider(), Enabled: true})
	})
}
