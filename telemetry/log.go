package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// LogHandler returns h adding trace_id and span_id to every record logged
// with a context that carries a span (slog's …Context methods), so that a
// call's log lines can be found from its trace and the other way round.
// Records that carry a trace_id already keep theirs.
func LogHandler(h slog.Handler) slog.Handler { return &logHandler{Handler: h} }

type logHandler struct{ slog.Handler }

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r = r.Clone()
		has := false
		r.Attrs(func(a slog.Attr) bool {
			has = a.Key == "trace_id"
			return !has
		})
		if !has {
			r.AddAttrs(slog.String("trace_id", sc.TraceID().String()))
		}
		r.AddAttrs(slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h *logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &logHandler{Handler: h.Handler.WithAttrs(as)}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{Handler: h.Handler.WithGroup(name)}
}
