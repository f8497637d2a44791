package embed

import "context"

// Limit returns an embedder whose calls use at most n cores of an
// in-process model: it calls e with a context bounded by WithCores, which
// the built-in models honour (their batches and a short text's matrix
// products are spread over at most n goroutines). Work beside the
// requests, such as the entity-embedding worker, then leaves cores to the
// requests, and still embeds its texts in batches. Name and Dimension are
// e's, so vectors stay in e's space; a remote provider ignores the bound.
func Limit(e Embedder, n int) Embedder {
	return &limited{Embedder: e, n: max(n, 1)}
}

type limited struct {
	Embedder
	n int
}

func (l *limited) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return l.Embedder.Embed(WithCores(ctx, l.n), texts)
}
