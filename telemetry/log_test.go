package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/cairnkg/cairn/telemetry"
)

func TestLogHandlerAddsTheTraceID(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:  trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
	})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	tests := []struct {
		name      string
		log       func(*slog.Logger)
		wantTrace string
	}{
		{"with a span", func(l *slog.Logger) { l.InfoContext(ctx, "m") }, sc.TraceID().String()},
		{"a trace id of its own wins", func(l *slog.Logger) { l.InfoContext(ctx, "m", "trace_id", "trace_0123456789abcdef") }, "trace_0123456789abcdef"},
		{"without a span", func(l *slog.Logger) { l.InfoContext(context.Background(), "m") }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tt.log(slog.New(telemetry.LogHandler(slog.NewJSONHandler(&buf, nil))).With("k", "v"))
			var rec map[string]any
			if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			got, _ := rec["trace_id"].(string)
			if got != tt.wantTrace {
				t.Errorf("trace_id = %q, want %q (%s)", got, tt.wantTrace, buf.String())
			}
			if span, _ := rec["span_id"].(string); (span != "") != (tt.wantTrace != "") {
				t.Errorf("span_id = %q", span)
			}
		})
	}
}
