package vector

import (
	"context"
	"fmt"
)

// reembedPage is the page size in which Reembed reads a collection.
const reembedPage = 1000

// AllCollections returns every user's collections with their spaces.
func (s *Store) AllCollections(ctx context.Context) ([]UserCollection, error) {
	return s.d.AllCollections(ctx)
}

// EmbedFunc returns one vector per memory, all of the same dimension.
type EmbedFunc func(ctx context.Context, ms []Memory) ([][]float32, error)

// Reembed rebuilds the vectors of a collection with another embedder: it
// reads every memory, embeds them with embed (whose vectors belong to the
// embedder named embedder) and replaces them, with the new space, all or
// nothing. It returns how many memories it re-embedded: 0 when the
// collection is empty or already in embedder's space. A save into the
// collection while Reembed runs makes it fail with ErrConflict; run it
// again.
//
// The whole collection is held in memory while it is rebuilt.
func (s *Store) Reembed(ctx context.Context, userID, collection, embedder string, embed EmbedFunc) (int, error) {
	spaces, err := s.d.Spaces(ctx, userID, []string{collection})
	if err != nil {
		return 0, err
	}
	old, ok := spaces[collection]
	if !ok || old.Embedder == embedder {
		return 0, nil
	}
	var all []Memory
	for {
		page, total, err := s.d.List(ctx, ListQuery{
			Filter: Filter{UserID: userID, Collections: []string{collection}},
			Sort:   SortCreatedAt, Ascending: true, Limit: reembedPage, Offset: len(all),
		})
		if err != nil {
			return 0, err
		}
		all = append(all, page...)
		if len(page) == 0 || len(all) >= total {
			break
		}
	}
	if len(all) == 0 {
		return 0, nil
	}
	var space Space
	for start := 0; start < len(all); start += reembedPage {
		batch := all[start:min(start+reembedPage, len(all))]
		vecs, err := embed(ctx, batch)
		if err != nil {
			return 0, fmt.Errorf("vector: reembed %s: %w", collection, err)
		}
		if len(vecs) != len(batch) {
			return 0, fmt.Errorf("vector: reembed %s: %d vectors for %d memories", collection, len(vecs), len(batch))
		}
		if space.Dimension == 0 {
			space = Space{Embedder: embedder, Dimension: len(vecs[0])}
			if err := validSpace(space); err != nil {
				return 0, err
			}
		}
		for i := range batch {
			batch[i].Embedding = vecs[i]
			if err := validMemory(batch[i], space); err != nil {
				return 0, err
			}
		}
	}
	if err := s.d.Replace(ctx, userID, collection, space, all); err != nil {
		return 0, err
	}
	return len(all), nil
}
