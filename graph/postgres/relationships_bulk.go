package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/byid"
	"github.com/cairnkg/cairn/graph/internal/jsoncodec"
)

// PutRelationships implements graph.DriverTx: one upsert from arrays, whose
// join with entities copies the endpoints' types onto the edges and drops
// a row whose endpoint is not an entity of its user: fewer rows than
// relationships means one was.
func (t *tx) PutRelationships(ctx context.Context, rs []graph.Relationship) error {
	if len(rs) == 0 {
		return nil
	}
	n := len(rs)
	var (
		ids, users, types, srcs, dsts, metas, provs = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		counts                                      = make([]int64, n)
		created, last                               = make([]time.Time, n), make([]time.Time, n)
		ended                                       = make([]*time.Time, n)
	)
	for i, r := range rs {
		if err := t.enter(ctx, r.UserID); err != nil {
			return err
		}
		meta, err := jsoncodec.Encode(orEmpty(r.Metadata))
		if err != nil {
			return err
		}
		prov, err := jsoncodec.Encode(orEmptyStrings(r.Provenance))
		if err != nil {
			return err
		}
		ids[i], users[i], types[i], srcs[i], dsts[i], metas[i], provs[i] = r.ID, r.UserID, r.Type, r.SourceEntityID, r.TargetEntityID, meta, prov
		counts[i], created[i], last[i], ended[i] = int64(r.ObservationCount), r.CreatedAt, r.LastObservationAt, nullTime(r.EndedAt)
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO relationships
		(id, user_id, relationship_type, source_entity_id, target_entity_id, source_type, target_type,
		 metadata, provenance, observation_count, created_at, last_observation_at, ended_at)
		SELECT r.id, r.u, r.typ, r.src, r.dst, s.entity_type, d.entity_type, r.meta::jsonb, r.prov::jsonb,
		  r.n, r.created, r.last, r.ended
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
			$8::integer[], $9::timestamptz[], $10::timestamptz[], $11::timestamptz[])
			AS r(id, u, typ, src, dst, meta, prov, n, created, last, ended)
		JOIN entities s ON s.user_id = r.u AND s.id = r.src
		JOIN entities d ON d.user_id = r.u AND d.id = r.dst
		ON CONFLICT (id, created_at) DO UPDATE SET
		  metadata = excluded.metadata, provenance = excluded.provenance,
		  observation_count = excluded.observation_count,
		  last_observation_at = excluded.last_observation_at, ended_at = excluded.ended_at
		WHERE relationships.user_id = excluded.user_id`,
		ids, users, types, srcs, dsts, metas, provs, counts, created, last, ended)
	if err != nil {
		return wrap("put relationships", err)
	}
	if got := int(tag.RowsAffected()); got < n {
		which := ids[0]
		if n > 1 {
			which = fmt.Sprintf("%d of %d (from %s)", n-got, n, ids[0])
		}
		return fmt.Errorf("graph/postgres: put relationships %s: an endpoint is not an entity of the user: %w", which, graph.ErrNotFound)
	}
	return nil
}

// Relationships implements graph.DriverTx: the newest period of each id.
func (t *tx) Relationships(ctx context.Context, userID string, ids []string) ([]graph.Relationship, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	rows, err := query(ctx, t, func(r rowScanner) (graph.Relationship, error) { return scanRelationship(r) },
		`SELECT DISTINCT ON (r.id) `+relationshipColumns+` FROM relationships r
		WHERE r.user_id = $1 AND r.id = ANY($2) ORDER BY r.id, r.created_at DESC`, userID, ids)
	if err != nil {
		return nil, wrap("read relationships", err)
	}
	return byid.InOrder(ids, rows, func(r graph.Relationship) string { return r.ID }), nil
}

// InsertRelationshipObservations implements graph.DriverTx as
// InsertObservations does: one insert from arrays, an existing id skipped
// and reported as ErrConflict.
func (t *tx) InsertRelationshipObservations(ctx context.Context, obs []graph.RelationshipObservation) error {
	if len(obs) == 0 {
		return nil
	}
	n := len(obs)
	var (
		ids, users, rels, sources, metas = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		observed, created                = make([]time.Time, n), make([]time.Time, n)
		specificity                      = make([]float64, n)
		priority                         = make([]int64, n)
	)
	for i, o := range obs {
		if err := t.enter(ctx, o.UserID); err != nil {
			return err
		}
		meta, err := jsoncodec.Encode(orEmpty(o.Metadata))
		if err != nil {
			return err
		}
		ids[i], users[i], rels[i], sources[i], metas[i] = o.ID, o.UserID, o.RelationshipID, o.SourceID, meta
		observed[i], created[i], specificity[i], priority[i] = o.ObservedAt, o.CreatedAt, o.SpecificityScore, int64(o.SourcePriority)
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO relationship_observations
		(id, user_id, relationship_id, source_id, observed_at, created_at, specificity_score, source_priority, metadata)
		SELECT id, u, rel, src, observed, created, spec, prio, meta::jsonb
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[],
			$7::float8[], $8::bigint[], $9::text[])
			AS o(id, u, rel, src, observed, created, spec, prio, meta)
		ON CONFLICT DO NOTHING`,
		ids, users, rels, sources, observed, created, specificity, priority, metas)
	return insertedAll(tag, err, "relationship observation", ids)
}

// RelationshipsObservations implements graph.DriverTx.
func (t *tx) RelationshipsObservations(ctx context.Context, userID string, relIDs []string) ([]graph.RelationshipObservation, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	out, err := query(ctx, t, scanRelationshipObservation, `SELECT `+relationshipObservationColumns+` FROM relationship_observations
		WHERE user_id = $1 AND relationship_id = ANY($2)`, userID, relIDs)
	return out, wrap("list relationship observations", err)
}
