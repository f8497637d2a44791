package knowledge

import (
	"context"
	"fmt"
	"slices"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// MigrateFragments turns the caller's raw fragments of the named fields of
// a type into observations under the type's current schema, and recomputes
// the entities they belong to, in one transaction. Each becomes an
// observation of its own (id derived from the fragment's, so migrating
// twice adds nothing), from the fragment's source, observed when the
// source's observation of that entity was, at its priority: provenance
// leads back to the source that gave the value. A value that does not fit
// the field's type stays a fragment. It returns how many it migrated.
func (s *Service) MigrateFragments(ctx context.Context, c Caller, entityType string, fields []string) (int, error) {
	sc, err := s.schemaFor(ctx, c.UserID, entityType)
	if err != nil {
		return 0, err
	}
	n := 0
	err = s.graph.Update(ctx, func(tx *graph.Tx) error {
		n = 0
		frags, err := tx.RawFragments(ctx, graph.RawFragmentQuery{UserID: c.UserID, EntityType: entityType})
		if err != nil {
			return err
		}
		frags = slices.DeleteFunc(frags, func(f graph.RawFragment) bool {
			_, inSchema := sc.Fields[f.Field]
			return !inSchema || !slices.Contains(fields, f.Field)
		})
		if len(frags) == 0 {
			return nil
		}
		ids := make([]string, len(frags))
		var entityIDs, sources []string
		for i, f := range frags {
			ids[i] = hashID("obs_", f.ID)
			if !slices.Contains(entityIDs, f.EntityID) {
				entityIDs = append(entityIDs, f.EntityID)
			}
			if !slices.Contains(sources, f.SourceID) {
				sources = append(sources, f.SourceID)
			}
		}
		done, err := tx.ObservationsByID(ctx, c.UserID, ids)
		if err != nil {
			return err
		}
		resolved, err := tx.ResolveEntities(ctx, c.UserID, entityIDs)
		if err != nil {
			return err
		}
		// The observation each source made of each entity: the migrated
		// value was observed with it.
		type key struct{ source, entity string }
		orig := map[key]graph.Observation{}
		for _, src := range sources {
			obs, err := tx.ObservationsBySource(ctx, c.UserID, src)
			if err != nil {
				return err
			}
			for _, o := range obs {
				k := key{src, o.OriginalEntityID}
				if _, ok := orig[k]; !ok {
					orig[k] = o
				}
			}
		}
		now := s.clock()
		var newObs []graph.Observation
		var touched []string
		for i, f := range frags {
			if slices.ContainsFunc(done, func(o graph.Observation) bool { return o.ID == ids[i] }) {
				continue
			}
			target, ok := resolved[f.EntityID]
			if !ok {
				continue // the entity is gone (nothing left of it to add to)
			}
			v, err := coerceField(f.Field, sc.Fields[f.Field].Type, f.Value)
			if err != nil {
				continue
			}
			fieldsOf := map[string]any{f.Field: v}
			o := graph.Observation{
				ID: ids[i], UserID: c.UserID, EntityID: target.ID, EntityType: entityType, SchemaVersion: sc.Version,
				SourceID: f.SourceID, ObservedAt: f.CreatedAt, CreatedAt: now, SpecificityScore: specificity(sc, fieldsOf),
				SourcePriority: DefaultSourcePriority, Fields: fieldsOf, OriginalEntityID: f.EntityID,
			}
			if po, ok := orig[key{f.SourceID, f.EntityID}]; ok {
				o.ObservedAt, o.SourcePriority = po.ObservedAt, po.SourcePriority
			}
			newObs = append(newObs, o)
			if !slices.Contains(touched, target.ID) {
				touched = append(touched, target.ID)
			}
		}
		if len(newObs) == 0 {
			return nil
		}
		old, err := tx.EntitiesObservations(ctx, c.UserID, touched)
		if err != nil {
			return err
		}
		if err := tx.InsertObservations(ctx, newObs); err != nil {
			return err
		}
		byEntity := map[string][]graph.Observation{}
		for _, o := range append(old, newObs...) {
			byEntity[o.EntityID] = append(byEntity[o.EntityID], o)
		}
		in := make([]entityState, len(touched))
		for i, id := range touched {
			var prev graph.Entity
			for _, e := range resolved {
				if e.ID == id {
					prev = e
				}
			}
			in[i] = entityState{id: id, observations: byEntity[id], prev: prev, exists: true}
		}
		if _, err := s.rewrite(ctx, tx, c.UserID, in); err != nil {
			return err
		}
		n = len(newObs)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("knowledge: migrate raw fragments: %w", err)
	}
	return n, nil
}

// RawFields returns the fields a user's sources gave an entity that its
// schema does not name (yet), or that it names but whose values did not
// fit and the snapshot has none of: for each, the value of its latest
// fragment.
func (s *Service) RawFields(ctx context.Context, c Caller, e graph.Entity) (map[string]any, error) {
	all, err := s.RawFieldsOf(ctx, c, []graph.Entity{e})
	if err != nil {
		return nil, err
	}
	if raw, ok := all[e.ID]; ok {
		return raw, nil
	}
	return map[string]any{}, nil
}

// RawFieldsOf is RawFields of many entities (the caller's, read already),
// in one read of their fragments: by entity id, those that have any.
func (s *Service) RawFieldsOf(ctx context.Context, c Caller, ents []graph.Entity) (map[string]map[string]any, error) {
	if len(ents) == 0 {
		return map[string]map[string]any{}, nil
	}
	ids := make([]string, len(ents))
	typeOf := make(map[string]string, len(ents))
	snapshot := make(map[string]map[string]any, len(ents))
	for i, e := range ents {
		ids[i], typeOf[e.ID], snapshot[e.ID] = e.ID, e.Type, e.Snapshot
	}
	var frags []graph.RawFragment
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		var err error
		frags, err = tx.RawFragments(ctx, graph.RawFragmentQuery{UserID: c.UserID, EntityIDs: ids})
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(frags, func(a, b graph.RawFragment) int { return a.CreatedAt.Compare(b.CreatedAt) })
	schemas := map[string]*schema.Schema{}
	out := map[string]map[string]any{}
	for _, f := range frags {
		typ, ok := typeOf[f.EntityID]
		if !ok {
			continue
		}
		sc, ok := schemas[typ]
		if !ok {
			if sc, err = s.schemaFor(ctx, c.UserID, typ); err != nil {
				return nil, err
			}
			schemas[typ] = sc
		}
		if _, known := sc.Fields[f.Field]; known {
			if _, has := snapshot[f.EntityID][f.Field]; has {
				// Migrated, or a value of another kind than the
				// field's (kept aside, see store): shown only while
				// the snapshot has none.
				continue
			}
		}
		if out[f.EntityID] == nil {
			out[f.EntityID] = map[string]any{}
		}
		out[f.EntityID][f.Field] = f.Value
	}
	return out, nil
}
