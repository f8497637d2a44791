package knowledge

import (
	"context"
	"strings"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/vector"
)

// Completion of entity names and ids (EntitySearchQuery.Complete, which
// MCP's completion/complete asks for while a user types).
//
// A word search ranks every entity that matches before it keeps the best:
// at 10,000 entities that share a word, 20-40 ms on the embedded store,
// where a completion must answer in 20 ms at the 95th percentile (issue
// 38). A completion instead reads the graph's completion keys
// (graph.EntityCompleter): the first entities, of the types the caller may
// read, whose whole name begins with the typed value (shortest, then
// alphabetically first: "Acme" before "Acme Rockets"), then those with a
// later word of the name that does ("Rocket Acme Labs" for "acme"), or,
// when the value begins as an entity id does, those whose id begins with
// it. The index is read by type, a handful of keys each, so a caller who
// may read one small type reads that type's keys only. When the keys give
// fewer entities than the page, the word search (which also finds the
// words of snapshots) fills the rest, best first. Every graph backend
// keeps the keys (the embedded store and PostgreSQL in a table, Neo4j as
// :EntityKey nodes); on a driver without them a completion is the word
// search alone, as any entity search (ranked by relevance, not by prefix).

// entityIDPrefix begins every entity id (EntityID).
const entityIDPrefix = "ent_"

// completeEntities answers a completion: the entities the keys find, then
// the word search's for the rest of the page. The total is how many it
// returns. ok is false when the graph keeps no completion keys (a driver
// without graph.EntityCompleter): the caller then searches as for any
// query.
func (s *Service) completeEntities(ctx context.Context, tx *graph.Tx, userID string, q EntitySearchQuery, types []string, gq graph.EntitySearch) (hits []EntitySearchHit, total int, ok bool, err error) {
	limit := q.Page.Limit
	if limit <= 0 {
		limit = 100
	}
	cq := graph.EntityCompletion{UserID: userID, Types: types, Limit: limit}
	if typed := strings.TrimSpace(q.Text); strings.HasPrefix(typed, entityIDPrefix) {
		cq.Prefix, cq.IDs = typed, true
	} else {
		cq.Prefix = graph.CompletionKey(q.Text)
	}
	keys, ok, err := tx.CompleteEntities(ctx, cq)
	if err != nil || !ok {
		return nil, 0, ok, err
	}
	ids := make([]string, 0, limit)
	found := make(map[string]bool, limit)
	for _, k := range keys {
		ids, found[k.ID] = append(ids, k.ID), true
	}
	if len(ids) < limit {
		// Found by the words only: the rest of the page, best first,
		// without those the keys found.
		gq.IncludeMerged = false
		gq.Page = graph.Page{Limit: limit + len(ids)}
		text, _, err := tx.SearchEntities(ctx, gq)
		if err != nil {
			return nil, 0, true, err
		}
		for _, h := range text {
			if len(ids) < limit && !found[h.ID] {
				ids, found[h.ID] = append(ids, h.ID), true
			}
		}
	}
	ents, err := tx.Entities(ctx, userID, ids)
	if err != nil {
		return nil, 0, true, err
	}
	out := make([]EntitySearchHit, len(ents))
	for i, e := range ents {
		// The score is the rank: the first is the best.
		out[i] = EntitySearchHit{Entity: e, Score: float64(len(ents) - i), Signals: []vector.Signal{vector.SignalText}}
	}
	return out, len(out), true, nil
}
