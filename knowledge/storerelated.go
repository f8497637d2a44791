package knowledge

import (
	"context"
	"slices"

	"github.com/cairnkg/cairn/graph"
)

// FillStoreRelated sets a store result's RelatedEntities and
// RelatedRelationships from the graph as it is now, as Store computes them
// for the entities it wrote (see StoreResult): from the entities of
// readable types only, listing only readable entities, and nothing without
// graph read. Store leaves them empty when it answers Deduplicated, since it
// wrote nothing; the MCP store tool calls this then, so that repeating a
// store (as its continuation cursor does) lists them again.
func (s *Service) FillStoreRelated(ctx context.Context, c Caller, res *StoreResult) error {
	var ids []string
	for _, e := range res.Entities {
		if c.readable(e.EntityType) && !slices.Contains(ids, e.EntityID) {
			ids = append(ids, e.EntityID)
		}
	}
	return s.graph.View(ctx, func(tx *graph.Tx) error {
		res.RelatedEntities, res.RelatedRelationships = nil, nil
		return s.related(ctx, tx, c, ids, res)
	})
}
