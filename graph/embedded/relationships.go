package embedded

import (
	"context"
	"database/sql"
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

const relationshipColumns = `id, user_id, relationship_type, source_entity_id, target_entity_id, metadata, provenance,
	observation_count, created_at, last_observation_at, ended_at`

func scanRelationship(row interface{ Scan(...any) error }, extra ...any) (graph.Relationship, error) {
	var r graph.Relationship
	var meta, prov string
	var created, last int64
	var ended sql.NullInt64
	dest := append([]any{&r.ID, &r.UserID, &r.Type, &r.SourceEntityID, &r.TargetEntityID, &meta, &prov,
		&r.ObservationCount, &created, &last, &ended}, extra...)
	if err := row.Scan(dest...); err != nil {
		return r, err
	}
	r.CreatedAt, r.LastObservationAt, r.EndedAt = fromMicros(created), fromMicros(last), fromNullMicros(ended)
	var err error
	if r.Metadata, err = jsoncodec.Map(meta); err != nil {
		return r, err
	}
	r.Provenance, err = jsoncodec.StringMap(prov)
	return r, err
}

func (t *tx) Relationship(ctx context.Context, userID, id string) (graph.Relationship, error) {
	r, err := scanRelationship(t.queryRow(ctx, `SELECT `+relationshipColumns+` FROM relationships
		WHERE user_id = $1 AND id = $2 ORDER BY created_at DESC LIMIT 1`, userID, id))
	if noRows(err) {
		return r, notFound("relationship", id)
	}
	return r, wrap("read relationship", err)
}

// liveAt returns the condition that a row of alias a existed at time at
// (zero: now), appending its parameter to args.
func liveAt(a string, at time.Time, args *[]any) string {
	if at.IsZero() {
		return a + ".ended_at IS NULL"
	}
	*args = append(*args, micros(at))
	n := len(*args)
	return fmt.Sprintf("%[1]s.created_at <= $%[2]d AND (%[1]s.ended_at IS NULL OR %[1]s.ended_at > $%[2]d)", a, n)
}

func (t *tx) ListRelationships(ctx context.Context, f graph.RelationshipFilter) ([]graph.Relationship, int, error) {
	if f.EntityTypes != nil && len(f.EntityTypes) == 0 {
		return []graph.Relationship{}, 0, nil
	}
	args := []any{f.UserID}
	where := []string{"r.user_id = $1", liveAt("r", f.At, &args)}
	if f.Type != "" {
		args = append(args, f.Type)
		where = append(where, fmt.Sprintf("r.relationship_type = $%d", len(args)))
	}
	// otherType is the SQL expression for the type of the endpoint that is
	// not f.EntityID.
	otherType := "CASE WHEN r.source_entity_id = $%[1]d THEN r.target_type ELSE r.source_type END"
	if f.EntityID != "" {
		args = append(args, f.EntityID)
		n := len(args)
		// The entity's edges are found through relationships_out and
		// relationships_in, and "+r.user_id" keeps SQLite from walking
		// relationships_recent instead (for its order) over every
		// relationship of the user, which it otherwise prefers.
		where[0] = "+r.user_id = $1"
		out := fmt.Sprintf("SELECT rowid FROM relationships WHERE user_id = $1 AND source_entity_id = $%d", n)
		in := fmt.Sprintf("SELECT rowid FROM relationships WHERE user_id = $1 AND target_entity_id = $%d", n)
		switch f.Direction {
		case graph.Outbound:
			where = append(where, "r.rowid IN ("+out+")")
		case graph.Inbound:
			where = append(where, "r.rowid IN ("+in+")")
		default:
			where = append(where, "r.rowid IN ("+out+" UNION ALL "+in+")")
		}
		otherType = fmt.Sprintf(otherType, n)
	}
	if f.EntityTypes != nil {
		ends := []string{otherType}
		if f.EntityID == "" {
			ends = []string{"r.source_type", "r.target_type"}
		}
		for _, end := range ends {
			where = append(where, end+" IN ("+placeholders(len(args)+1, len(f.EntityTypes))+")")
			args = append(args, anySlice(f.EntityTypes)...)
		}
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := t.queryRow(ctx, `SELECT count(*) FROM relationships r WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, wrap("count relationships", err)
	}
	args = append(args, limitOr(f.Page, 100), f.Page.Offset)
	rows, err := t.query(ctx, `SELECT `+prefixed("r.", relationshipColumns)+` FROM relationships r WHERE `+cond+`
		ORDER BY r.created_at DESC, r.id ASC LIMIT $`+fmt.Sprint(len(args)-1)+` OFFSET $`+fmt.Sprint(len(args)), args...)
	if err != nil {
		return nil, 0, wrap("list relationships", err)
	}
	out := []graph.Relationship{}
	err = eachRow(rows, func(r *sql.Rows) error {
		rel, err := scanRelationship(r)
		out = append(out, rel)
		return err
	})
	return out, total, wrap("list relationships", err)
}

func (t *tx) Edges(ctx context.Context, q graph.EdgeQuery) ([]graph.Edge, error) {
	if len(q.EntityIDs) == 0 || (q.Types != nil && len(q.Types) == 0) {
		return []graph.Edge{}, nil
	}
	seen := map[string]bool{}
	var out []graph.Edge
	for start := 0; start < len(q.EntityIDs); start += 500 {
		chunk := q.EntityIDs[start:min(start+500, len(q.EntityIDs))]
		var halves []string
		switch q.Direction {
		case graph.Outbound:
			halves = []string{"source_entity_id"}
		case graph.Inbound:
			halves = []string{"target_entity_id"}
		default:
			halves = []string{"source_entity_id", "target_entity_id"}
		}
		for _, col := range halves {
			args := []any{q.UserID}
			where := []string{"r.user_id = $1", liveAt("r", q.At, &args)}
			where = append(where, "r."+col+" IN ("+placeholders(len(args)+1, len(chunk))+")")
			args = append(args, anySlice(chunk)...)
			if q.Types != nil {
				where = append(where, "r.relationship_type IN ("+placeholders(len(args)+1, len(q.Types))+")")
				args = append(args, anySlice(q.Types)...)
			}
			rows, err := t.query(ctx, `SELECT `+prefixed("r.", relationshipColumns)+`, r.source_type, r.target_type
				FROM relationships r WHERE `+strings.Join(where, " AND "), args...)
			if err != nil {
				return nil, wrap("read edges", err)
			}
			err = eachRow(rows, func(r *sql.Rows) error {
				var e graph.Edge
				var err error
				e.Relationship, err = scanRelationship(r, &e.SourceType, &e.TargetType)
				if key := e.ID + "@" + fmt.Sprint(e.CreatedAt.UnixMicro()); !seen[key] {
					seen[key] = true
					out = append(out, e)
				}
				return err
			})
			if err != nil {
				return nil, wrap("read edges", err)
			}
		}
	}
	graph.SortEdges(out)
	return out, nil
}

func (t *tx) InsertRelationshipObservation(ctx context.Context, o graph.RelationshipObservation) error {
	meta, err := jsoncodec.Encode(orEmpty(o.Metadata))
	if err != nil {
		return err
	}
	_, err = t.exec(ctx, `INSERT INTO relationship_observations
		(id, user_id, relationship_id, source_id, observed_at, created_at, specificity_score, source_priority, metadata)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		o.ID, o.UserID, o.RelationshipID, o.SourceID, micros(o.ObservedAt), micros(o.CreatedAt),
		o.SpecificityScore, o.SourcePriority, meta)
	if isUniqueViolation(err) {
		return fmt.Errorf("graph/embedded: relationship observation %s: %w", o.ID, graph.ErrConflict)
	}
	return wrap("insert relationship observation", err)
}

const relationshipObservationColumns = `id, user_id, relationship_id, source_id, observed_at, created_at,
	specificity_score, source_priority, metadata`

func scanRelationshipObservation(row interface{ Scan(...any) error }) (graph.RelationshipObservation, error) {
	var o graph.RelationshipObservation
	var observed, created int64
	var meta string
	if err := row.Scan(&o.ID, &o.UserID, &o.RelationshipID, &o.SourceID, &observed, &created,
		&o.SpecificityScore, &o.SourcePriority, &meta); err != nil {
		return o, err
	}
	o.ObservedAt, o.CreatedAt = fromMicros(observed), fromMicros(created)
	var err error
	o.Metadata, err = jsoncodec.Map(meta)
	return o, err
}

// RelationshipObservationsBySource implements graph.DriverTx.
func (t *tx) RelationshipObservationsBySource(ctx context.Context, userID, sourceID string) ([]graph.RelationshipObservation, error) {
	rows, err := t.query(ctx, `SELECT `+relationshipObservationColumns+` FROM relationship_observations
		WHERE user_id = $1 AND source_id = $2 ORDER BY id`, userID, sourceID)
	if err != nil {
		return nil, wrap("list relationship observations by source", err)
	}
	out := []graph.RelationshipObservation{}
	err = eachRow(rows, func(r *sql.Rows) error {
		o, err := scanRelationshipObservation(r)
		out = append(out, o)
		return err
	})
	return out, wrap("list relationship observations by source", err)
}

func (t *tx) RelationshipObservations(ctx context.Context, userID, relID string) ([]graph.RelationshipObservation, error) {
	rows, err := t.query(ctx, `SELECT `+relationshipObservationColumns+` FROM relationship_observations
		WHERE user_id = $1 AND relationship_id = $2 ORDER BY observed_at DESC, id ASC`, userID, relID)
	if err != nil {
		return nil, wrap("list relationship observations", err)
	}
	out := []graph.RelationshipObservation{}
	err = eachRow(rows, func(r *sql.Rows) error {
		o, err := scanRelationshipObservation(r)
		out = append(out, o)
		return err
	})
	return out, wrap("list relationship observations", err)
}
