package knowledge

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairnkg/cairn/vector"
)

// MaxMemoryBatch is the most memories SaveMemories stores in one call.
const MaxMemoryBatch = 1000

// memoryEmbedBatch is how many texts one call of the embedder gets when a
// batch is saved: the built-in model spreads a call over every core, and
// a provider takes a request of this size.
const memoryEmbedBatch = 64

// SaveMemories checks, embeds and stores up to MaxMemoryBatch memories in
// one transaction, all or none, and returns them in the order of rs. Each
// is checked as SaveMemory checks one (an error names its index, as in
// memories[3].text); claims are refused, since recording contradictions
// is a write to the graph of its own: save a memory that makes claims
// with SaveMemory. Importing a conversation is then one call, not one per
// turn.
func (s *Service) SaveMemories(ctx context.Context, c Caller, rs []MemoryRequest) ([]vector.Memory, error) {
	if s.memories == nil {
		return nil, ErrMemoriesUnavailable
	}
	if len(rs) == 0 || len(rs) > MaxMemoryBatch {
		return nil, invalid("memories", fmt.Sprintf("1 to %d memories", MaxMemoryBatch), fmt.Sprintf("%d", len(rs)), "wrong number of memories")
	}
	ms := make([]vector.Memory, len(rs))
	texts := make([]string, len(rs))
	for i, r := range rs {
		field := fmt.Sprintf("memories[%d]", i)
		if len(r.Claims) > 0 {
			return nil, invalid(field+".claims", "none", "claims", "a batch takes no claims: save a memory that makes claims with save_memory")
		}
		m, _, err := s.prepareMemory(ctx, c, r)
		if err != nil {
			return nil, inItem(field, err)
		}
		ms[i], texts[i] = m, memoryText(r.Title, r.Text)
	}
	var space vector.Space
	for lo := 0; lo < len(ms); lo += memoryEmbedBatch {
		hi := min(lo+memoryEmbedBatch, len(ms))
		vecs, err := s.embedder.Embed(ctx, texts[lo:hi])
		if err == nil && len(vecs) != hi-lo {
			err = fmt.Errorf("%d vectors for %d texts", len(vecs), hi-lo)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &EmbedderError{Embedder: s.embedder.Name(), Err: err}
		}
		for i, v := range vecs {
			if len(v) == 0 {
				return nil, &EmbedderError{Embedder: s.embedder.Name(), Err: errors.New("no vector returned")}
			}
			ms[lo+i].Embedding = v
		}
		space = vector.Space{Embedder: s.embedder.Name(), Dimension: len(vecs[0])}
	}
	saved, err := s.memories.Save(ctx, space, ms...)
	if err != nil {
		return nil, inItem("memories", memoryError(err))
	}
	return saved, nil
}

// inItem prefixes the field of a validation error with the item it is
// about; other errors pass through.
func inItem(item string, err error) error {
	var v *ValidationError
	if !errors.As(err, &v) {
		return err
	}
	out := *v
	if out.Field == "" {
		out.Field = item
	} else {
		out.Field = item + "." + out.Field
	}
	return &out
}
