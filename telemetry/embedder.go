package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
)

// InstrumentEmbedder returns e with each Embed call timed into m
// (cairn_embedder_duration_seconds, cairn_embedder_texts_total) and traced as
// an "embed" span. Name and Dimension are e's, so stored spaces do not
// change; a Prober stays a Prober, and the default search threshold
// (embed.Thresholder) stays e's. A nil m or an off tracing skips that part.
func InstrumentEmbedder(e embed.Embedder, m *Metrics, tracing *Tracing) embed.Embedder {
	if tracing == nil {
		tracing = Off()
	}
	ie := &instrumentedEmbedder{Embedder: e, m: m, tracer: tracing.Tracer()}
	if p, ok := e.(embed.Prober); ok {
		return &probingEmbedder{instrumentedEmbedder: ie, p: p}
	}
	return ie
}

type instrumentedEmbedder struct {
	embed.Embedder
	m      *Metrics
	tracer trace.Tracer
}

func (e *instrumentedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	ctx, span := e.tracer.Start(ctx, "embed", trace.WithAttributes(
		attribute.String("cairn.embedder", e.Name()), attribute.Int("cairn.texts", len(texts))))
	start := time.Now()
	vs, err := e.Embedder.Embed(ctx, texts)
	if e.m != nil {
		outcome := "ok"
		if err != nil {
			outcome = "error"
		}
		e.m.embedDuration.WithLabelValues(outcome).Observe(time.Since(start).Seconds())
		e.m.embedTexts.Add(float64(len(texts)))
	}
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
	return vs, err
}

// MinSimilarity keeps e's default search threshold (embed.Thresholder):
// memory search asks the embedder it was given for it, and a decorator
// must not hide it. An embedder without one gets the vector store's
// default, which is what search uses for it anyway.
func (e *instrumentedEmbedder) MinSimilarity() float64 {
	if t, ok := e.Embedder.(embed.Thresholder); ok {
		return t.MinSimilarity()
	}
	return vector.DefaultMinSimilarity
}

// probingEmbedder keeps the Prober of an embedder that has one.
type probingEmbedder struct {
	*instrumentedEmbedder
	p embed.Prober
}

func (e *probingEmbedder) Probe(ctx context.Context) error { return e.p.Probe(ctx) }
