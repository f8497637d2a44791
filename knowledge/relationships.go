package knowledge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairnkg/cairn/graph"
)

// RelationshipRequest asks for a typed edge between two entities.
type RelationshipRequest struct {
	Type           string
	SourceEntityID string
	TargetEntityID string
	Metadata       map[string]any
}

// CreateRelationship creates a typed edge, or finds the live one with the
// same (type, source, target), and records an observation of its metadata.
// The relationship's metadata is then reduced from all its observations.
func (s *Service) CreateRelationship(ctx context.Context, c Caller, req RelationshipRequest) (rel graph.Relationship, created bool, err error) {
	if err := s.checkFieldSizes("metadata", req.Metadata); err != nil {
		return graph.Relationship{}, false, err
	}
	err = s.graph.Update(ctx, func(tx *graph.Tx) error {
		rel, created, err = s.createRelationship(ctx, tx, c, req, graph.SourceRelationship, s.clock())
		return err
	})
	if err != nil {
		return graph.Relationship{}, false, fmt.Errorf("knowledge: create relationship: %w", err)
	}
	return rel, created, nil
}

// addRelationship is createRelationship for callers that do not care
// whether the edge is new.
func (s *Service) addRelationship(ctx context.Context, tx *graph.Tx, c Caller, req RelationshipRequest, kind string, now time.Time) (graph.Relationship, error) {
	rel, _, err := s.createRelationship(ctx, tx, c, req, kind, now)
	return rel, err
}

func (s *Service) createRelationship(ctx context.Context, tx *graph.Tx, c Caller, req RelationshipRequest, kind string, now time.Time) (graph.Relationship, bool, error) {
	if !graph.ValidRelationshipTypeName(req.Type) || !s.schemas.KnowsRelationshipType(req.Type, graph.IsBuiltinRelationshipType) {
		return graph.Relationship{}, false, &RelationshipTypeError{Type: req.Type, Known: s.relationshipTypes()}
	}
	for _, id := range []struct{ field, id string }{{"source_entity_id", req.SourceEntityID}, {"target_entity_id", req.TargetEntityID}} {
		if err := checkID(id.field, id.id); err != nil {
			return graph.Relationship{}, false, err
		}
		if _, err := s.readableEntity(ctx, tx, c, id.id, true); err != nil {
			return graph.Relationship{}, false, err
		}
	}
	rel, created, err := tx.CreateRelationship(ctx, graph.NewRelationship{
		UserID: c.UserID, Type: req.Type, SourceEntityID: req.SourceEntityID, TargetEntityID: req.TargetEntityID, Now: now,
	})
	var nf *graph.NotFoundError
	if errors.As(err, &nf) {
		return graph.Relationship{}, false, &NotFoundError{Kind: ErrEntityNotFound, ID: nf.ID}
	}
	if err != nil {
		return graph.Relationship{}, false, err
	}
	meta := req.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	content, err := canonicalJSON(map[string]any{
		"relationship_type": req.Type, "source_entity_id": rel.SourceEntityID, "target_entity_id": rel.TargetEntityID, "metadata": meta,
	})
	if err != nil {
		return graph.Relationship{}, false, err
	}
	src, err := s.ensureSource(ctx, tx, c, kind, content, now)
	if err != nil {
		return graph.Relationship{}, false, err
	}
	o := graph.RelationshipObservation{
		ID: hashID("robs_", rel.ID, src.ID, now.Format(time.RFC3339Nano)), UserID: c.UserID, RelationshipID: rel.ID,
		SourceID: src.ID, ObservedAt: now, CreatedAt: now, SourcePriority: DefaultSourcePriority, Metadata: meta,
	}
	if err := tx.InsertRelationshipObservation(ctx, o); err != nil && !errors.Is(err, graph.ErrConflict) {
		return graph.Relationship{}, false, err
	}
	if rel, err = s.reduceRelationship(ctx, tx, rel); err != nil {
		return graph.Relationship{}, false, err
	}
	return rel, created, nil
}

// reduceRelationship recomputes a relationship's metadata from all its
// observations, with the same reducer as entities (every field last_write).
func (s *Service) reduceRelationship(ctx context.Context, tx *graph.Tx, rel graph.Relationship) (graph.Relationship, error) {
	robs, err := tx.RelationshipObservations(ctx, rel.UserID, rel.ID)
	if err != nil {
		return graph.Relationship{}, err
	}
	red := Reduce(&Schema{Fields: map[string]Field{}}, asObservations(robs))
	rel.Metadata, rel.Provenance, rel.ObservationCount = red.Snapshot, red.Provenance, red.ObservationCount
	if red.LastObservationAt.After(rel.LastObservationAt) {
		rel.LastObservationAt = red.LastObservationAt
	}
	return rel, tx.PutRelationship(ctx, rel)
}

func asObservations(robs []graph.RelationshipObservation) []graph.Observation {
	out := make([]graph.Observation, len(robs))
	for i, o := range robs {
		out[i] = graph.Observation{
			ID: o.ID, UserID: o.UserID, SourceID: o.SourceID, ObservedAt: o.ObservedAt, CreatedAt: o.CreatedAt,
			SpecificityScore: o.SpecificityScore, SourcePriority: o.SourcePriority, Fields: o.Metadata,
		}
	}
	return out
}

// ensureSource returns the user's source with this content, creating it.
func (s *Service) ensureSource(ctx context.Context, tx *graph.Tx, c Caller, kind string, content []byte, now time.Time) (graph.Source, error) {
	hash := sha256Hex(content)
	src, err := tx.SourceByHash(ctx, c.UserID, hash)
	if err == nil {
		return src, nil
	}
	if !errors.Is(err, graph.ErrNotFound) {
		return graph.Source{}, err
	}
	src = graph.Source{
		ID: SourceID(c.UserID, hash), UserID: c.UserID, ContentHash: hash, Kind: kind, MimeType: "application/json",
		Size: int64(len(content)), Provenance: sourceProvenance(nil, c.AgentID), CreatedAt: now,
	}
	return src, tx.InsertSource(ctx, src)
}

// relationshipTypes lists the built-in and schema-registered types.
func (s *Service) relationshipTypes() []string {
	out := append([]string(nil), graph.BuiltinRelationshipTypes...)
	for _, sc := range s.schemas.All() {
		out = append(out, sc.RelationshipTypes...)
	}
	return out
}

// RelationshipTypeError reports an unknown relationship type and the known
// ones.
type RelationshipTypeError struct {
	Type  string
	Known []string
}

func (e *RelationshipTypeError) Error() string {
	return fmt.Sprintf("unknown relationship type %q", truncate(e.Type, 64))
}

// Unwrap makes errors.Is(err, ErrInvalidRelationshipType) true.
func (e *RelationshipTypeError) Unwrap() error { return ErrInvalidRelationshipType }
