package embed

import (
	"context"
	"fmt"
	"sync"
)

// Limit returns an embedder that embeds each text with a call of its own
// to e, at most n calls at a time, and gives the vectors back in order. It
// is for an in-process model whose Embed spreads a batch over every core
// (the built-in sentence model): work beside the requests, such as the
// entity-embedding worker, then leaves cores to the requests. Name and
// Dimension are e's, so vectors stay in e's space. It suits a remote
// provider badly (one request a text); use e itself there.
func Limit(e Embedder, n int) Embedder {
	return &limited{Embedder: e, n: max(n, 1)}
}

type limited struct {
	Embedder
	n int
}

func (l *limited) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	errs := make([]error, len(texts))
	sem := make(chan struct{}, l.n)
	var wg sync.WaitGroup
	for i, t := range texts {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return nil, ctx.Err()
		}
		wg.Go(func() {
			defer func() { <-sem }()
			vecs, err := l.Embedder.Embed(ctx, []string{t})
			if err == nil && len(vecs) != 1 {
				err = fmt.Errorf("embed: one text gave %d vectors", len(vecs))
			}
			if err != nil {
				errs[i] = err
				return
			}
			out[i] = vecs[0]
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
