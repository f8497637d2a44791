package knowledge

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/cairnkg/cairn/vector/embed"
)

// embedFlights shares the embedding of entity texts between the context
// loads that need them at the same moment. A load with a topic embeds the
// candidates that have no stored vector yet; after a bulk load, or while
// one goes on and the entity-embedding worker waits for a lull, every
// load of the user wants the same few hundred, and sixteen clients of
// `cairn serve` at once each embedded all of them: the built-in model
// took 94% of the server's CPU and a context load 5 to 18 s. Now the
// first load to want a text embeds it, and the others wait for its
// vector.
type embedFlights struct {
	mu sync.Mutex
	m  map[string]*embedFlight // by embedder name and text hash
	// waiting, when set (tests), is called when a call is about to wait
	// for texts other calls are embedding.
	waiting func()
}

// embedFlight is one text being embedded; vec and err are set before
// done is closed.
type embedFlight struct {
	done chan struct{}
	vec  []float32
	err  error
}

// embed returns the vectors of texts (hashes[i] is entityTextHash of
// texts[i]), embedding in one call of e those that no other call is
// embedding, and waiting for the others. own[i] reports whether this call
// embedded texts[i] itself (a text given twice is embedded once). A text
// whose embedding failed in another call (its context ended, say) is
// embedded here after all.
func (f *embedFlights) embed(ctx context.Context, e embed.Embedder, texts, hashes []string) (vecs [][]float32, own []bool, err error) {
	vecs, own = make([][]float32, len(texts)), make([]bool, len(texts))
	name := e.Name()
	flights := make([]*embedFlight, len(texts))
	var mine []int
	f.mu.Lock()
	if f.m == nil {
		f.m = map[string]*embedFlight{}
	}
	started := map[*embedFlight]bool{}
	for i, h := range hashes {
		key := name + "\x00" + h
		if fl, ok := f.m[key]; ok {
			// Started by another call, or by this one for an earlier
			// text of the same hash.
			flights[i], own[i] = fl, started[fl]
			continue
		}
		fl := &embedFlight{done: make(chan struct{})}
		f.m[key] = fl
		flights[i], own[i] = fl, true
		started[fl] = true
		mine = append(mine, i)
	}
	f.mu.Unlock()

	if len(mine) > 0 {
		got, err := embedAt(ctx, e, texts, mine)
		f.mu.Lock()
		for j, i := range mine {
			fl := flights[i]
			if err != nil {
				fl.err = err
			} else {
				fl.vec = got[j]
			}
			delete(f.m, name+"\x00"+hashes[i])
			close(fl.done)
		}
		f.mu.Unlock()
		if err != nil {
			return nil, nil, err
		}
	}

	if f.waiting != nil && slices.Contains(own, false) {
		f.waiting()
	}
	var again []int
	for i, fl := range flights {
		if !own[i] {
			select {
			case <-fl.done:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		}
		if fl.err != nil {
			again = append(again, i)
			continue
		}
		vecs[i] = fl.vec
	}
	if len(again) > 0 {
		got, err := embedAt(ctx, e, texts, again)
		if err != nil {
			return nil, nil, err
		}
		for j, i := range again {
			vecs[i], own[i] = got[j], true
		}
	}
	return vecs, own, nil
}

// embedAt embeds, in one call of e, the texts at the indexes at, and
// returns their vectors in that order.
func embedAt(ctx context.Context, e embed.Embedder, texts []string, at []int) ([][]float32, error) {
	batch := make([]string, len(at))
	for j, i := range at {
		batch[j] = texts[i]
	}
	got, err := e.Embed(ctx, batch)
	if err == nil && len(got) != len(batch) {
		err = fmt.Errorf("%d vectors for %d texts", len(got), len(batch))
	}
	return got, err
}
