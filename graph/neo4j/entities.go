package neo4j

import (
	"context"
	"fmt"
	"slices"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/byid"
)

var (
	sourceInsert         = cypher.Must("source_insert")
	sourceGet            = cypher.Must("source_get")
	sourceByHash         = cypher.Must("source_by_hash")
	entitiesPut          = cypher.Must("entities_put")
	entityGet            = cypher.Must("entity_get")
	entitiesGet          = cypher.Must("entities_get")
	entityCount          = cypher.Must("entity_count")
	entityList           = cypher.Must("entity_list")
	entityStatsList      = cypher.Must("entity_stats_list")
	entityStatsDegrees   = cypher.Must("entity_stats_degrees")
	identifiersSet       = cypher.Must("identifiers_set")
	entitiesByIdentifier = cypher.Must("entities_by_identifier")
	entityTypeCounts     = cypher.Must("entity_type_counts")
	entityTypesAfter     = cypher.Must("entity_types_after")
)

func (t *tx) InsertSource(ctx context.Context, s graph.Source) error {
	if err := t.enter(ctx, s.UserID); err != nil {
		return err
	}
	prov, err := encodeJSON(s.Provenance)
	if err != nil {
		return err
	}
	rows, err := t.run(ctx, sourceInsert, cypher.Fill{}, map[string]any{
		"id": s.ID, "userId": s.UserID, "contentHash": s.ContentHash, "kind": s.Kind, "mimeType": s.MimeType,
		"originalFilename": s.OriginalFilename, "size": s.Size, "provenanceJson": prov, "createdAt": s.CreatedAt.UTC(),
	})
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return conflict("source", s.ID)
	}
	return nil
}

func (t *tx) Source(ctx context.Context, userID, id string) (graph.Source, error) {
	return t.source(ctx, sourceGet, map[string]any{"userId": userID, "id": id}, userID, id)
}

func (t *tx) SourceByHash(ctx context.Context, userID, hash string) (graph.Source, error) {
	s, err := t.source(ctx, sourceByHash, map[string]any{"userId": userID, "contentHash": hash}, userID, hash)
	if err, ok := err.(*graph.NotFoundError); ok {
		err.What = "source with hash"
	}
	return s, err
}

// source reads at most one source with st; key names it when there is none.
func (t *tx) source(ctx context.Context, st cypher.Statement, params map[string]any, userID, key string) (graph.Source, error) {
	if err := t.enter(ctx, userID); err != nil {
		return graph.Source{}, err
	}
	rows, err := t.run(ctx, st, cypher.Fill{}, params)
	if err != nil {
		return graph.Source{}, err
	}
	out, err := mapRows(rows, "source", toSource)
	if err != nil {
		return graph.Source{}, err
	}
	if len(out) == 0 {
		return graph.Source{}, notFound("source", key)
	}
	return out[0], nil
}

// entityProps are the properties entities_put sets itself: a snapshot
// field of one of these names stays in snapshot_json only.
var entityProps = map[string]bool{
	"id": true, "user_id": true, "entity_type": true, "canonical_name": true, "search_name": true, "search_text": true, "schema_version": true,
	"snapshot_json": true, "provenance_json": true, "observation_count": true, "last_observation_at": true,
	"created_at": true, "computed_at": true, "merged_into": true, "merged_at": true, "text_sig": true, "user_write": true, "name_keys": true,
}

// entityPutRow is the row of $rows in entities_put for e.
func entityPutRow(e graph.Entity) (map[string]any, error) {
	snap, err := encodeJSON(e.Snapshot)
	if err != nil {
		return nil, err
	}
	prov, err := encodeJSON(e.Provenance)
	if err != nil {
		return nil, err
	}
	searchName, searchText := graph.SearchText(e)
	return map[string]any{
		"id": e.ID, "entity_type": e.Type, "canonical_name": e.CanonicalName,
		"search_name": searchName, "search_text": searchText,
		"schema_version": e.SchemaVersion, "snapshot_json": snap, "provenance_json": prov,
		"snapshot_props":    storableProps(e.Snapshot, entityProps),
		"observation_count": int64(e.ObservationCount), "last_observation_at": e.LastObservationAt.UTC(),
		"created_at": e.CreatedAt.UTC(), "computed_at": e.ComputedAt.UTC(),
		"merged_into": nullString(e.MergedInto), "merged_at": nullTime(e.MergedAt),
		"text_sig":  nullBytes(graph.EntityTextSig(e)),
		"name_keys": nameKeys(e.CanonicalName), "keys": completionKeys(e.UserID, e.Type, e.ID, e.CanonicalName, e.MergedInto != ""),
	}, nil
}

// PutEntity implements graph.DriverTx: a batch of one.
func (t *tx) PutEntity(ctx context.Context, e graph.Entity) error {
	return t.PutEntities(ctx, []graph.Entity{e})
}

// PutEntities implements graph.DriverTx with one entities_put per user and
// type of es (in practice one user, and a few types): the type is the
// entity's second label (cypher.Label), which no parameter can set. The
// same statement links each entity to the observations recorded for it
// before it existed, so that provenance is a traversal.
func (t *tx) PutEntities(ctx context.Context, es []graph.Entity) error {
	t.totals = nil // Reach's count of the user's entities may be stale
	type userType struct{ user, typ string }
	for _, group := range groupBy(es, func(e graph.Entity) userType { return userType{e.UserID, e.Type} }) {
		if err := t.putEntities(ctx, group); err != nil {
			return err
		}
	}
	return nil
}

// putEntities runs entities_put for es, all of one user and one type.
func (t *tx) putEntities(ctx context.Context, es []graph.Entity) error {
	userID, typ := es[0].UserID, es[0].Type
	if err := t.enter(ctx, userID); err != nil {
		return err
	}
	rows := make([]any, len(es))
	for i, e := range es {
		row, err := entityPutRow(e)
		if err != nil {
			return err
		}
		rows[i] = row
	}
	recs, err := t.run(ctx, entitiesPut, cypher.Fill{EntityType: typ}, map[string]any{"userId": userID, "rows": rows, "userWrite": t.userWrites[userID]})
	if err != nil {
		return err
	}
	n, err := written(recs, entitiesPut.Name())
	if err != nil {
		return err
	}
	switch {
	case n == len(es):
		return nil
	case len(es) == 1:
		return fmt.Errorf("graph/neo4j: put entity %s: the id belongs to another user: %w", es[0].ID, graph.ErrConflict)
	default:
		return fmt.Errorf("graph/neo4j: put entities: %d of %d ids (from %s) belong to another user: %w", len(es)-n, len(es), es[0].ID, graph.ErrConflict)
	}
}

func (t *tx) Entity(ctx context.Context, userID, id string) (graph.Entity, error) {
	if err := t.enter(ctx, userID); err != nil {
		return graph.Entity{}, err
	}
	rows, err := t.run(ctx, entityGet, cypher.Fill{}, map[string]any{"userId": userID, "id": id})
	if err != nil {
		return graph.Entity{}, err
	}
	out, err := mapRows(rows, "entity", toEntity)
	if err != nil {
		return graph.Entity{}, err
	}
	if len(out) == 0 {
		return graph.Entity{}, notFound("entity", id)
	}
	return out[0], nil
}

func (t *tx) Entities(ctx context.Context, userID string, ids []string) ([]graph.Entity, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return []graph.Entity{}, nil
	}
	rows, err := t.run(ctx, entitiesGet, cypher.Fill{}, map[string]any{"userId": userID, "ids": ids})
	if err != nil {
		return nil, err
	}
	found, err := tupleList(rows, entitiesGet.Name(), "entities", entityColumns, toEntity)
	if err != nil {
		return nil, err
	}
	return byid.InOrder(ids, found, func(e graph.Entity) string { return e.ID }), nil
}

// entityFilterParams are the parameters entity_count, entity_list and
// entity_stats_list share.
func entityFilterParams(f graph.EntityFilter) map[string]any {
	return map[string]any{
		"userId": f.UserID, "types": nullList(f.Types), "includeMerged": f.IncludeMerged,
		"offset": int64(max(f.Page.Offset, 0)), "limit": int64(limitOr(f.Page, 100)),
	}
}

func (t *tx) ListEntities(ctx context.Context, f graph.EntityFilter) ([]graph.Entity, int, error) {
	if err := t.enter(ctx, f.UserID); err != nil {
		return nil, 0, err
	}
	if f.Types != nil && len(f.Types) == 0 {
		return []graph.Entity{}, 0, nil
	}
	params := entityFilterParams(f)
	rows, err := t.run(ctx, entityCount, cypher.Fill{}, params)
	if err != nil {
		return nil, 0, err
	}
	if len(rows) != 1 {
		return nil, 0, fmt.Errorf("graph/neo4j: entity_count returned %d rows", len(rows))
	}
	r := record{m: rows[0]}
	total := r.int("total")
	if r.err != nil {
		return nil, 0, r.err
	}
	rows, err = t.run(ctx, entityList, cypher.Fill{}, params)
	if err != nil {
		return nil, 0, err
	}
	out, err := mapRows(rows, "entity", toEntity)
	return out, total, err
}

func (t *tx) ListEntityStats(ctx context.Context, f graph.EntityFilter) ([]graph.EntityStat, error) {
	if err := t.enter(ctx, f.UserID); err != nil {
		return nil, err
	}
	if f.Types != nil && len(f.Types) == 0 {
		return []graph.EntityStat{}, nil
	}
	return t.cachedEntityStats(ctx, f)
}

// listEntityStats reads ListEntityStats' answer from the server.
func (t *tx) listEntityStats(ctx context.Context, f graph.EntityFilter) ([]graph.EntityStat, error) {
	params := entityFilterParams(f)
	params["textSigs"] = f.TextSigs
	rows, err := t.run(ctx, entityStatsList, cypher.Fill{}, params)
	if err != nil {
		return nil, err
	}
	if len(rows) != 1 {
		return nil, fmt.Errorf("graph/neo4j: entity_stats_list returned %d rows", len(rows))
	}
	r := record{m: rows[0]}
	entries := r.rows("stats", entityStatColumns...)
	if r.err != nil {
		return nil, r.err
	}
	stats, err := mapRows(entries, "", toEntityStat)
	if err != nil || len(stats) == 0 || f.WithoutDegrees {
		return stats, err
	}
	return stats, t.countDegrees(ctx, f.UserID, stats)
}

// entityStatColumns name the members of each entry of entity_stats_list.
var entityStatColumns = []string{"id", "entity_type", "observation_count", "last_observation_at", "merged_into", "text_sig"}

// countDegrees fills the Degrees of stats from the user's live
// relationships (entity_stats_degrees): each counts at its source, by its
// target's type, and at its target, by its source's type.
func (t *tx) countDegrees(ctx context.Context, userID string, stats []graph.EntityStat) error {
	rows, err := t.run(ctx, entityStatsDegrees, cypher.Fill{}, map[string]any{"userId": userID})
	if err != nil {
		return err
	}
	if len(rows) != 1 {
		return fmt.Errorf("graph/neo4j: entity_stats_degrees returned %d rows", len(rows))
	}
	r := record{m: rows[0]}
	ends := r.rows("ends", "source_id", "source_type", "target_id", "target_type")
	if r.err != nil {
		return r.err
	}
	at := make(map[string]int, len(stats))
	for i, e := range stats {
		at[e.ID] = i
	}
	for _, end := range ends {
		r := record{m: end}
		src, srcType, dst, dstType := r.str("source_id"), r.str("source_type"), r.str("target_id"), r.str("target_type")
		if r.err != nil {
			return r.err
		}
		if i, ok := at[src]; ok {
			stats[i].Degrees = graph.AddDegree(stats[i].Degrees, dstType, 1)
		}
		if i, ok := at[dst]; ok {
			stats[i].Degrees = graph.AddDegree(stats[i].Degrees, srcType, 1)
		}
	}
	return nil
}

// SetIdentifiers implements graph.DriverTx: a batch of one.
func (t *tx) SetIdentifiers(ctx context.Context, userID, entityID string, ids []graph.Identifier) error {
	return t.SetEntityIdentifiers(ctx, userID, []graph.EntityIdentifiers{{EntityID: entityID, Identifiers: ids}})
}

// SetEntityIdentifiers implements graph.DriverTx with one identifiers_set,
// which drops the entities' identifiers and adds the new ones.
func (t *tx) SetEntityIdentifiers(ctx context.Context, userID string, sets []graph.EntityIdentifiers) error {
	if err := t.enter(ctx, userID); err != nil {
		return err
	}
	if len(sets) == 0 {
		return nil
	}
	rows := make([]any, len(sets))
	for i, set := range sets {
		list := make([]any, len(set.Identifiers))
		for j, id := range set.Identifiers {
			list[j] = map[string]any{"field": id.Field, "value": id.Value}
		}
		rows[i] = map[string]any{"entity_id": set.EntityID, "identifiers": list}
	}
	_, err := t.run(ctx, identifiersSet, cypher.Fill{}, map[string]any{"userId": userID, "rows": rows})
	return err
}

func (t *tx) EntitiesByIdentifier(ctx context.Context, userID, value, entityType string) ([]graph.Entity, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	rows, err := t.run(ctx, entitiesByIdentifier, cypher.Fill{}, map[string]any{
		"userId": userID, "value": value, "entityType": nullString(entityType),
	})
	if err != nil {
		return nil, err
	}
	return mapRows(rows, "entity", toEntity)
}

func (t *tx) EntityTypeCounts(ctx context.Context, userID string) (map[string]int, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	return t.cachedTypeCounts(ctx, userID, func() (map[string]int, error) { return t.entityTypeCounts(ctx, userID) })
}

// entityTypeCounts reads EntityTypeCounts from the server.
func (t *tx) entityTypeCounts(ctx context.Context, userID string) (map[string]int, error) {
	rows, err := t.run(ctx, entityTypeCounts, cypher.Fill{}, map[string]any{"userId": userID})
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(rows))
	for _, row := range rows {
		r := record{m: row}
		typ, n := r.str("entity_type"), r.int("total")
		if r.err != nil {
			return nil, r.err
		}
		out[typ] = n
	}
	return out, nil
}

// EntityTypes implements graph.DriverTx with entity_types_after, which
// seeks, for each type it is given, the next type in the index
// entity_user_type, so the time grows with the number of types, not of
// entities. In a read transaction the answer comes from the Driver's type
// cache while the user has not written since (typeCache); after a write,
// the types cached before it let one statement confirm the list.
func (t *tx) EntityTypes(ctx context.Context, userID string) ([]string, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	return t.cachedTypes(ctx, userID, func(hint []string) ([]string, error) { return t.entityTypes(ctx, userID, hint) })
}

// entityTypes reads EntityTypes from the server. Cypher has no recursion
// that could list the types in one statement, so it follows them as a
// chain, each type's successor in the index: hint (types the user had
// before, in any order) lets one statement ask for the successor of ""
// and of every hinted type at once, which gives the whole chain when the
// types are the same; a type that is new, or that follows one that went,
// is asked about in the next statement, with every type seen above it. A
// hinted type that no longer exists is only asked about, never listed.
// Without a hint that is one statement per type, and one more.
func (t *tx) entityTypes(ctx context.Context, userID string, hint []string) ([]string, error) {
	next := map[string]string{} // a type asked about -> its successor, "" for none
	out := []string{}
	ask := append([]string{""}, hint...)
	for {
		slices.Sort(ask)
		ask = slices.Compact(ask)
		rows, err := t.run(ctx, entityTypesAfter, cypher.Fill{}, map[string]any{"userId": userID, "afterTypes": ask})
		if err != nil {
			return nil, err
		}
		for _, a := range ask {
			next[a] = ""
		}
		for _, m := range rows {
			r := record{m: m}
			after, typ := r.str("after_type"), r.str("entity_type")
			if r.err != nil {
				return nil, r.err
			}
			if _, asked := next[after]; !asked || typ <= after {
				return nil, fmt.Errorf("graph/neo4j: %s returned %q after %q", entityTypesAfter.Name(), typ, after)
			}
			next[after] = typ
		}
		// Follow the chain from the last type listed (or ""): each link is
		// the server's answer, so the list so far is exact.
		last := ""
		if len(out) > 0 {
			last = out[len(out)-1]
		}
		for {
			typ, asked := next[last]
			if !asked {
				break
			}
			if typ == "" {
				return out, nil
			}
			out = append(out, typ)
			last = typ
		}
		// last was never asked about: ask about it and every other type
		// seen above it that was not.
		ask = []string{last}
		for _, typ := range next {
			if _, asked := next[typ]; typ > last && !asked {
				ask = append(ask, typ)
			}
		}
	}
}
