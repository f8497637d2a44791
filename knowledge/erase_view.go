package knowledge

import (
	"context"
	"maps"
	"slices"

	"github.com/cairnkg/cairn/graph"
)

// What an erasure's answer says of relationships (docs/forgetting.md): the
// answer says nothing of what the caller may not read, and a relationship
// to an entity of a type it may not read (or any relationship, without
// read on the graph) is such a thing. The erasure itself removes them;
// its tombstone counts them.

// relationshipView is what a caller may see of the relationships an
// erasure removes or takes observations from.
type relationshipView struct {
	// all: the caller may see every one of them, so the erasure's own
	// counts (every period, every observation) say nothing more.
	all bool
	// relationships and observations count those it may see: the live
	// relationships of the erased entities and their observations, and
	// the relationships that an erased source's observations leave with
	// none and those observations.
	relationships, observations int
}

// visibleRelationships looks, before they go, at the live relationships of
// the entities p erases, and at the relationships the observations of the
// sources it erases are about.
func visibleRelationships(ctx context.Context, tx *graph.Tx, c Caller, p *erasePlan) (relationshipView, error) {
	graphRead := c.May(Read, ResourceGraph)
	v := relationshipView{all: graphRead}
	if len(p.erasure.EntityIDs) > 0 {
		edges, err := tx.Edges(ctx, graph.EdgeQuery{UserID: c.UserID, EntityIDs: p.erasure.EntityIDs, Direction: graph.Both})
		if err != nil {
			return v, err
		}
		seen := map[string]bool{}
		for _, e := range edges {
			if seen[e.ID] {
				continue // between two erased entities: listed from both ends
			}
			seen[e.ID] = true
			if !graphRead || !c.readable(e.SourceType) || !c.readable(e.TargetType) {
				v.all = false
				continue
			}
			v.relationships++
			v.observations += e.ObservationCount
		}
	}
	if err := v.addSources(ctx, tx, c, p); err != nil {
		return v, err
	}
	if !graphRead {
		v.relationships, v.observations = 0, 0
	}
	return v, nil
}

// addSources adds to v the relationships that the observations of the
// erased sources are about, but for those of erased entities (whose
// relationships go whole, counted above): each such observation it may
// see, and each relationship it may see that is left with none.
func (v *relationshipView) addSources(ctx context.Context, tx *graph.Tx, c Caller, p *erasePlan) error {
	removed := map[string]int{} // by relationship
	for _, src := range p.erasure.SourceIDs {
		robs, err := tx.RelationshipObservationsBySource(ctx, c.UserID, src)
		if err != nil {
			return err
		}
		for _, o := range robs {
			removed[o.RelationshipID]++
		}
	}
	if len(removed) == 0 {
		return nil
	}
	ids := slices.Sorted(maps.Keys(removed))
	seen, err := seeRelationships(ctx, tx, c, ids)
	if err != nil {
		return err
	}
	all, err := tx.RelationshipsObservations(ctx, c.UserID, ids)
	if err != nil {
		return err
	}
	left := map[string]int{}
	for _, o := range all {
		if !slices.Contains(p.erasure.SourceIDs, o.SourceID) {
			left[o.RelationshipID]++
		}
	}
	for _, id := range ids {
		r, ok := seen[id]
		switch {
		case ok && (p.whole[r.rel.SourceEntityID] || p.whole[r.rel.TargetEntityID]):
			continue
		case !ok || !r.visible:
			v.all = false
			continue
		}
		v.observations += removed[id]
		if left[id] == 0 {
			v.relationships++
		}
	}
	return nil
}

// redact returns res with relationship counts the caller may see: the
// erasure's own when it may see them all, else those of v. The tombstone
// keeps the erasure's own.
func (v relationshipView) redact(res EraseResult) EraseResult {
	if v.all || res.Counts == nil {
		return res
	}
	res.Counts = maps.Clone(res.Counts)
	res.Counts["relationships"], res.Counts["relationship_observations"] = v.relationships, v.observations
	return res
}

// seenRelationship is a relationship as a caller sees it.
type seenRelationship struct {
	rel graph.Relationship
	// visible: the caller may read the graph and the types of both ends.
	visible bool
	// types are the types of its ends.
	types []string
}

// seeRelationships reads the relationships with these ids (the newest
// period of each), by id; an id that is no relationship is left out.
func seeRelationships(ctx context.Context, tx *graph.Tx, c Caller, ids []string) (map[string]seenRelationship, error) {
	out := map[string]seenRelationship{}
	if len(ids) == 0 {
		return out, nil
	}
	rels, err := tx.Relationships(ctx, c.UserID, ids)
	if err != nil {
		return nil, err
	}
	var ends []string
	for _, r := range rels {
		ends = append(ends, r.SourceEntityID, r.TargetEntityID)
	}
	ents, err := tx.Entities(ctx, c.UserID, ends)
	if err != nil {
		return nil, err
	}
	typeOf := make(map[string]string, len(ents))
	for _, e := range ents {
		typeOf[e.ID] = e.Type
	}
	graphRead := c.May(Read, ResourceGraph)
	for _, r := range rels {
		sr := seenRelationship{rel: r, visible: graphRead}
		for _, end := range []string{r.SourceEntityID, r.TargetEntityID} {
			t, ok := typeOf[end]
			if !ok {
				continue // no entity, nothing of one to hide
			}
			if !c.readable(t) {
				sr.visible = false
			}
			if !slices.Contains(sr.types, t) {
				sr.types = append(sr.types, t)
			}
		}
		out[r.ID] = sr
	}
	return out, nil
}

// relationshipIDs returns the relationships robs are about, each once.
func relationshipIDs(robs []graph.RelationshipObservation) []string {
	var out []string
	for _, o := range robs {
		if !slices.Contains(out, o.RelationshipID) {
			out = append(out, o.RelationshipID)
		}
	}
	return out
}
