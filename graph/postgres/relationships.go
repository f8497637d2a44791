package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/jsoncodec"
)

// PutRelationship implements graph.DriverTx as PutRelationships of one.
func (t *tx) PutRelationship(ctx context.Context, r graph.Relationship) error {
	return t.PutRelationships(ctx, []graph.Relationship{r})
}

const relationshipColumns = `r.id, r.user_id, r.relationship_type, r.source_entity_id, r.target_entity_id, r.metadata::text,
	r.provenance::text, r.observation_count, r.created_at, r.last_observation_at, r.ended_at`

func scanRelationship(row rowScanner, extra ...any) (graph.Relationship, error) {
	var r graph.Relationship
	var meta, prov string
	var ended *time.Time
	dest := append([]any{&r.ID, &r.UserID, &r.Type, &r.SourceEntityID, &r.TargetEntityID, &meta, &prov,
		&r.ObservationCount, &r.CreatedAt, &r.LastObservationAt, &ended}, extra...)
	if err := row.Scan(dest...); err != nil {
		return r, err
	}
	r.CreatedAt, r.LastObservationAt, r.EndedAt = r.CreatedAt.UTC(), r.LastObservationAt.UTC(), fromNullTime(ended)
	var err error
	if r.Metadata, err = jsoncodec.Map(meta); err != nil {
		return r, err
	}
	r.Provenance, err = jsoncodec.StringMap(prov)
	return r, err
}

func (t *tx) Relationship(ctx context.Context, userID, id string) (graph.Relationship, error) {
	if err := t.enter(ctx, userID); err != nil {
		return graph.Relationship{}, err
	}
	r, err := scanRelationship(t.tx.QueryRow(ctx, `SELECT `+relationshipColumns+` FROM relationships r
		WHERE r.user_id = $1 AND r.id = $2 ORDER BY r.created_at DESC LIMIT 1`, userID, id))
	if noRows(err) {
		return r, notFound("relationship", id)
	}
	return r, wrap("read relationship", err)
}

// liveAt returns the condition that a row of alias r existed at time at
// (zero: now), adding its parameter to a.
func liveAt(at time.Time, a *args) string {
	if at.IsZero() {
		return "r.ended_at IS NULL"
	}
	p := a.add(at)
	return fmt.Sprintf("r.created_at <= %[1]s AND (r.ended_at IS NULL OR r.ended_at > %[1]s)", p)
}

func (t *tx) ListRelationships(ctx context.Context, f graph.RelationshipFilter) ([]graph.Relationship, int, error) {
	if err := t.enter(ctx, f.UserID); err != nil {
		return nil, 0, err
	}
	if f.EntityTypes != nil && len(f.EntityTypes) == 0 {
		return []graph.Relationship{}, 0, nil
	}
	a := args{}
	where := []string{"r.user_id = " + a.add(f.UserID), liveAt(f.At, &a)}
	if f.Type != "" {
		where = append(where, "r.relationship_type = "+a.add(f.Type))
	}
	// ends are the endpoints whose type EntityTypes restricts: the one that
	// is not f.EntityID, or both when no entity is given.
	ends := []string{"r.source_type", "r.target_type"}
	if f.EntityID != "" {
		p := a.add(f.EntityID)
		switch f.Direction {
		case graph.Outbound:
			where = append(where, "r.source_entity_id = "+p)
		case graph.Inbound:
			where = append(where, "r.target_entity_id = "+p)
		default:
			where = append(where, fmt.Sprintf("(r.source_entity_id = %[1]s OR r.target_entity_id = %[1]s)", p))
		}
		ends = []string{fmt.Sprintf("CASE WHEN r.source_entity_id = %s THEN r.target_type ELSE r.source_type END", p)}
	}
	if f.EntityTypes != nil {
		p := a.add(f.EntityTypes)
		for _, end := range ends {
			where = append(where, end+" = ANY("+p+")")
		}
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := t.tx.QueryRow(ctx, `SELECT count(*) FROM relationships r WHERE `+cond, a...).Scan(&total); err != nil {
		return nil, 0, wrap("count relationships", err)
	}
	page := `LIMIT ` + a.add(limitOr(f.Page, 100)) + ` OFFSET ` + a.add(f.Page.Offset)
	out, err := query(ctx, t, func(r rowScanner) (graph.Relationship, error) { return scanRelationship(r) }, `SELECT `+relationshipColumns+` FROM relationships r WHERE `+cond+`
		ORDER BY r.created_at DESC, r.id ASC `+page, a...)
	return out, total, wrap("list relationships", err)
}

func (t *tx) Edges(ctx context.Context, q graph.EdgeQuery) ([]graph.Edge, error) {
	if err := t.enter(ctx, q.UserID); err != nil {
		return nil, err
	}
	if len(q.EntityIDs) == 0 || (q.Types != nil && len(q.Types) == 0) {
		return []graph.Edge{}, nil
	}
	a := args{}
	where := []string{"r.user_id = " + a.add(q.UserID), liveAt(q.At, &a)}
	ids := a.add(q.EntityIDs)
	switch q.Direction {
	case graph.Outbound:
		where = append(where, "r.source_entity_id = ANY("+ids+")")
	case graph.Inbound:
		where = append(where, "r.target_entity_id = ANY("+ids+")")
	default:
		where = append(where, fmt.Sprintf("(r.source_entity_id = ANY(%[1]s) OR r.target_entity_id = ANY(%[1]s))", ids))
	}
	if q.Types != nil {
		where = append(where, "r.relationship_type = ANY("+a.add(q.Types)+")")
	}
	out, err := query(ctx, t, func(r rowScanner) (graph.Edge, error) {
		var e graph.Edge
		var err error
		e.Relationship, err = scanRelationship(r, &e.SourceType, &e.TargetType)
		return e, err
	}, `SELECT `+relationshipColumns+`, r.source_type, r.target_type
		FROM relationships r WHERE `+strings.Join(where, " AND ")+` ORDER BY r.id, r.created_at`, a...)
	return out, wrap("read edges", err)
}

func (t *tx) InsertRelationshipObservation(ctx context.Context, o graph.RelationshipObservation) error {
	if err := t.enter(ctx, o.UserID); err != nil {
		return err
	}
	meta, err := jsoncodec.Encode(orEmpty(o.Metadata))
	if err != nil {
		return err
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO relationship_observations
		(id, user_id, relationship_id, source_id, observed_at, created_at, specificity_score, source_priority, metadata)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
		o.ID, o.UserID, o.RelationshipID, o.SourceID, o.ObservedAt, o.CreatedAt,
		o.SpecificityScore, o.SourcePriority, meta)
	return inserted(tag, err, "relationship observation", o.ID)
}

const relationshipObservationColumns = `id, user_id, relationship_id, source_id, observed_at, created_at,
	specificity_score, source_priority, metadata::text`

func scanRelationshipObservation(r rowScanner) (graph.RelationshipObservation, error) {
	var o graph.RelationshipObservation
	var meta string
	if err := r.Scan(&o.ID, &o.UserID, &o.RelationshipID, &o.SourceID, &o.ObservedAt, &o.CreatedAt,
		&o.SpecificityScore, &o.SourcePriority, &meta); err != nil {
		return o, err
	}
	o.ObservedAt, o.CreatedAt = o.ObservedAt.UTC(), o.CreatedAt.UTC()
	var err error
	o.Metadata, err = jsoncodec.Map(meta)
	return o, err
}

// RelationshipObservationsBySource implements graph.DriverTx.
func (t *tx) RelationshipObservationsBySource(ctx context.Context, userID, sourceID string) ([]graph.RelationshipObservation, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	out, err := query(ctx, t, scanRelationshipObservation, `SELECT `+relationshipObservationColumns+` FROM relationship_observations
		WHERE user_id = $1 AND source_id = $2 ORDER BY id`, userID, sourceID)
	return out, wrap("list relationship observations by source", err)
}

func (t *tx) RelationshipObservations(ctx context.Context, userID, relID string) ([]graph.RelationshipObservation, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	out, err := query(ctx, t, scanRelationshipObservation, `SELECT `+relationshipObservationColumns+` FROM relationship_observations
		WHERE user_id = $1 AND relationship_id = $2 ORDER BY observed_at DESC, id ASC`, userID, relID)
	return out, wrap("list relationship observations", err)
}
