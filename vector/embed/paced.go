package embed

import (
	"context"
	"fmt"
)

// Paced returns an embedder that embeds texts with e in chunks of at most
// n, calling wait before each chunk and stopping with its error: for work
// beside the requests that should let them go first (the entity-embedding
// worker with the built-in model waits for a lull in tool calls, see
// mcp.Activity). Name and Dimension are e's.
func Paced(e Embedder, n int, wait func(context.Context) error) Embedder {
	return &paced{Embedder: e, n: max(n, 1), wait: wait}
}

type paced struct {
	Embedder
	n    int
	wait func(context.Context) error
}

func (p *paced) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += p.n {
		if err := p.wait(ctx); err != nil {
			return nil, err
		}
		chunk := texts[start:min(start+p.n, len(texts))]
		vecs, err := p.Embedder.Embed(ctx, chunk)
		if err != nil {
			return nil, err
		}
		if len(vecs) != len(chunk) {
			return nil, fmt.Errorf("embed: %d vectors for %d texts", len(vecs), len(chunk))
		}
		out = append(out, vecs...)
	}
	return out, nil
}
