package neo4j

import (
	"context"
	"fmt"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
)

var (
	eraseRelationshipIDs = cypher.Must("erase_relationship_ids")
	eraseRelationships   = cypher.Must("erase_relationships")
	eraseNodes           = cypher.Must("erase_nodes")
)

// Erase implements graph.Eraser in three statements: the relationships to
// end, their deletion with their observations, and the nodes. Deleting an
// entity's node takes it out of the full-text index; the user's lock node
// gets a new epoch, so that every process's statistics cache reads the
// user's entities again rather than keeping the erased ones. Neo4j's store
// and index files keep deleted records until their space is reused
// (docs/forgetting.md).
func (t *tx) Erase(ctx context.Context, e graph.Erasure) (graph.ErasedCounts, error) {
	var n graph.ErasedCounts
	if err := t.enter(ctx, e.UserID); err != nil {
		return n, err
	}
	params := map[string]any{
		"userId": e.UserID, "entityIds": orNoIDs(e.EntityIDs), "sourceIds": orNoIDs(e.SourceIDs),
		"observationIds": orNoIDs(e.ObservationIDs),
	}
	r, err := t.one(ctx, eraseRelationshipIDs, params)
	if err != nil {
		return n, err
	}
	ended, touched := r.strings("ended"), r.strings("touched")
	if r.err != nil {
		return n, r.err
	}
	n.Touched = touched
	params["relationshipIds"], params["touchedIds"] = orNoIDs(ended), orNoIDs(touched)
	if r, err = t.one(ctx, eraseRelationships, params); err != nil {
		return n, err
	}
	n.RelationshipObservations, n.Relationships = r.int("observations"), r.int("relationships")
	if r, err = t.one(ctx, eraseNodes, params); err != nil {
		return n, err
	}
	n.Observations, n.RawFragments, n.TimelineEvents = r.int("observations"), r.int("fragments"), r.int("events")
	n.Identifiers, n.Entities, n.Sources = r.int("identifiers"), r.int("entities"), r.int("sources")
	return n, r.err
}

// one runs a statement that returns one row.
func (t *tx) one(ctx context.Context, s cypher.Statement, params map[string]any) (*record, error) {
	rows, err := t.run(ctx, s, cypher.Fill{}, params)
	if err != nil {
		return nil, err
	}
	if len(rows) != 1 {
		return nil, fmt.Errorf("graph/neo4j: %s returned %d rows", s.Name(), len(rows))
	}
	return &record{m: rows[0]}, nil
}

// orNoIDs is ids, or an empty list rather than null, which IN would not
// match against.
func orNoIDs(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}
