package transfer

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
)

// An entity line is not written as it is read. An entity the store holds
// is left alone, and so are its observations. A new entity waits for its
// observations (an export writes them right after a page of entities): its
// snapshot must agree with them before it and they are written, so that an
// edited snapshot, canonical name or provenance is refused rather than
// stored. Snapshots are not recomputed here (the reducer's schema-aware
// write path is the knowledge service's); the check is that each value is
// the value of the observation its provenance names.

// startUser resets the state kept per user when the lines of another user
// begin.
func (im *importer) startUser(user string) {
	if im.graphUser == user && im.created != nil {
		return
	}
	im.graphUser = user
	im.created, im.createdRels, im.waiting = map[string]bool{}, map[string]bool{}, map[string]bool{}
	im.erased = nil
}

// erasedInStore returns the ids of the entities and sources the store has
// a tombstone of, for the user of the lines: an older export, made before
// an erasure, still holds them, and an import must not bring them back.
func (im *importer) erasedInStore(ctx context.Context) (map[string]bool, error) {
	if im.erased != nil {
		return im.erased, nil
	}
	ts, err := im.s.Control.GraphTombstones(ctx, im.graphUser)
	if err != nil {
		return nil, err
	}
	im.erased = make(map[string]bool, len(ts))
	for _, t := range ts {
		im.erased[t.ID] = true
	}
	return im.erased, nil
}

// settle writes the entities held back once the lines that could bear on
// them are over: the new entities when the next line is neither an entity
// nor an observation, the merged ones when the user's entity pages end;
// and when the user's lines end, erases what their tombstones name.
func (im *importer) settle(ctx context.Context, nextKind, nextUser string) error {
	other := nextUser != im.graphUser
	if len(im.tombstoned) > 0 && other {
		if err := im.eraseTombstoned(ctx); err != nil {
			return err
		}
	}
	if len(im.pending) > 0 && (other || (nextKind != KindEntity && nextKind != KindObservation)) {
		if err := im.writePending(ctx); err != nil {
			return err
		}
	}
	if len(im.merged) > 0 && (other || (nextKind != KindEntity && nextKind != KindObservation && nextKind != KindTimeline)) {
		if err := im.writeMerged(ctx); err != nil {
			return err
		}
	}
	return nil
}

// readEntities reads a batch of entity lines: those the store holds are
// skipped, the new ones held back until their observations are read.
func (im *importer) readEntities(ctx context.Context) error {
	user := im.user
	im.startUser(user)
	es := decodeValid(im, ownedBy(user, func(e Entity) string { return e.UserID }, im.check.entity))
	erased, err := im.erasedInStore(ctx)
	if err != nil {
		return err
	}
	es = slices.DeleteFunc(es, func(e lineOf[Entity]) bool {
		if erased[e.v.ID] {
			im.skip(SkipErased, KindEntity, 1)
			return true
		}
		return false
	})
	if len(es) == 0 {
		return nil
	}
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.v.ID
	}
	var have []graph.Entity
	err = im.s.Graph.View(ctx, func(tx *graph.Tx) error {
		var err error
		have, err = tx.Entities(ctx, user, ids)
		return err
	})
	if err != nil {
		return err
	}
	for _, e := range es {
		held := slices.ContainsFunc(have, func(h graph.Entity) bool { return h.ID == e.v.ID })
		dup := im.created[e.v.ID] || im.waiting[e.v.ID]
		switch {
		case held:
			im.skip(SkipHeld, KindEntity, 1)
		case dup:
			im.refuse(KindEntity, e.line, fmt.Sprintf("entity %s comes a second time", e.v.ID))
		case e.v.Merged():
			im.merged = append(im.merged, pendingEntity{e.line, e.v})
			im.waiting[e.v.ID] = true
		default:
			im.pending = append(im.pending, pendingEntity{e.line, e.v})
			im.waiting[e.v.ID] = true
			im.pendingBytes += len(sameJSON(e.v))
		}
	}
	if im.pendingBytes > maxPendingBytes {
		return im.writePending(ctx)
	}
	return nil
}

// readObservations reads a batch of observation lines: those of a new
// entity are held back with it; the others are skipped.
func (im *importer) readObservations(ctx context.Context) error {
	user := im.user
	im.startUser(user)
	obs := decodeValid(im, ownedBy(user, func(o graph.Observation) string { return o.UserID }, im.check.observation))
	erased, err := im.erasedInStore(ctx)
	if err != nil {
		return err
	}
	for _, o := range obs {
		if erased[o.v.EntityID] || erased[o.v.OriginalEntityID] || erased[o.v.SourceID] {
			im.skip(SkipErased, KindObservation, 1)
			continue
		}
		if !im.waiting[o.v.EntityID] || slices.ContainsFunc(im.merged, func(p pendingEntity) bool { return p.e.ID == o.v.EntityID }) {
			// The entity is one the store held, or one refused, or one
			// no line names: its observations are not written.
			if im.created[o.v.EntityID] {
				im.refuse(KindObservation, o.line, fmt.Sprintf("an observation of entity %s after that entity was written", o.v.EntityID))
			} else {
				im.skip(SkipHeld, KindObservation, 1)
			}
			continue
		}
		im.pendingObs = append(im.pendingObs, pendingObservation{o.line, o.v})
		im.pendingBytes += len(sameJSON(o.v))
	}
	return nil
}

// writePending checks the new entities held back against their
// observations and writes those that agree, with their observations.
func (im *importer) writePending(ctx context.Context) error {
	user := im.graphUser
	pending, pobs := im.pending, im.pendingObs
	im.pending, im.pendingObs, im.pendingBytes = nil, nil, 0
	for _, p := range pending {
		delete(im.waiting, p.e.ID)
	}
	byEntity := map[string][]pendingObservation{}
	ids := make([]string, len(pobs))
	for i, o := range pobs {
		ids[i] = o.o.ID
	}
	entities, observations := 0, 0
	err := im.s.Graph.Update(ctx, func(tx *graph.Tx) error {
		entities, observations = 0, 0
		clear(byEntity)
		held, err := tx.ObservationsByID(ctx, user, ids)
		if err != nil {
			return err
		}
		isHeld := map[string]bool{}
		for _, o := range held {
			isHeld[o.ID] = true
		}
		for _, o := range pobs {
			byEntity[o.o.EntityID] = append(byEntity[o.o.EntityID], o)
		}
		var (
			puts   []graph.Entity
			sets   []graph.EntityIdentifiers
			fresh  []string
			insert []graph.Observation
		)
		// The sources the observations name must be in the store: a
		// refused source line refuses the entities it is the source of.
		sources := map[string]bool{}
		for _, o := range pobs {
			if _, ok := sources[o.o.SourceID]; ok {
				continue
			}
			_, err := tx.Source(ctx, user, o.o.SourceID)
			if err != nil && !graph.IsNotFound(err) {
				return err
			}
			sources[o.o.SourceID] = err == nil
		}
		for _, p := range pending {
			var mine []graph.Observation
			for _, o := range byEntity[p.e.ID] {
				if !isHeld[o.o.ID] {
					mine = append(mine, o.o)
				}
			}
			err := agrees(p.e, mine, nil)
			if i := slices.IndexFunc(mine, func(o graph.Observation) bool { return !sources[o.SourceID] }); err == nil && i >= 0 {
				err = fmt.Errorf("entity %s: its observation %s names source %s, which the store does not hold", p.e.ID, mine[i].ID, mine[i].SourceID)
			}
			if err != nil {
				im.refuse(KindEntity, p.line, err.Error())
				for _, o := range byEntity[p.e.ID] {
					im.refuse(KindObservation, o.line, fmt.Sprintf("its entity %s (line %d) was refused", p.e.ID, p.line))
				}
				continue
			}
			puts = append(puts, p.e.Entity)
			sets = append(sets, graph.EntityIdentifiers{EntityID: p.e.ID, Identifiers: p.e.Identifiers})
			fresh = append(fresh, p.e.ID)
			insert = append(insert, mine...)
		}
		if len(insert) > 0 {
			if err := tx.InsertObservations(ctx, insert); err != nil {
				return err
			}
		}
		if len(puts) > 0 {
			if err := tx.PutEntities(ctx, puts); err != nil {
				return err
			}
			if err := tx.SetEntityIdentifiers(ctx, user, sets); err != nil {
				return err
			}
			// Embeddings are derived: the outbox has the worker (or
			// cairn reembed) compute them for the new entities.
			if err := tx.EnqueueOutbox(ctx, user, fresh, graph.Now()); err != nil {
				return err
			}
		}
		entities, observations = len(puts), len(insert)
		for _, id := range fresh {
			im.created[id] = true
		}
		im.skip(SkipHeld, KindObservation, len(held))
		return nil
	})
	im.stats.Written[KindEntity] += entities
	im.stats.Written[KindObservation] += observations
	return err
}

// writeMerged writes the new merged entities whose snapshot agrees with
// the observations they had, which moved to the entity they were merged
// into: that entity must be one this import created.
func (im *importer) writeMerged(ctx context.Context) error {
	user := im.graphUser
	merged := im.merged
	im.merged = nil
	for _, p := range merged {
		delete(im.waiting, p.e.ID)
	}
	n := 0
	err := im.s.Graph.Update(ctx, func(tx *graph.Tx) error {
		n = 0
		var puts []graph.Entity
		var ids []string
		for _, p := range merged {
			if !im.created[p.e.MergedInto] {
				im.refuse(KindEntity, p.line, fmt.Sprintf("merged into entity %s, which this import did not create", p.e.MergedInto))
				continue
			}
			var prov []string
			for _, id := range p.e.Provenance {
				prov = append(prov, id)
			}
			obs, err := tx.ObservationsByID(ctx, user, prov)
			if err != nil {
				return err
			}
			if err := agrees(p.e, obs, []string{p.e.ID, p.e.MergedInto}); err != nil {
				im.refuse(KindEntity, p.line, err.Error())
				continue
			}
			puts = append(puts, p.e.Entity)
			ids = append(ids, p.e.ID)
		}
		if len(puts) == 0 {
			return nil
		}
		if err := tx.PutEntities(ctx, puts); err != nil {
			return err
		}
		if err := tx.EnqueueOutbox(ctx, user, ids, graph.Now()); err != nil {
			return err
		}
		n = len(puts)
		for _, id := range ids {
			im.created[id] = true
		}
		return nil
	})
	im.stats.Written[KindEntity] += n
	return err
}

// agrees checks an entity's snapshot against observations: every field
// of the snapshot has a provenance naming one of obs (of the entity, or of
// one of owners when given), whose value it holds (or, for an array, whose
// elements it holds, every element coming from one of obs); the canonical
// name is the id or made of snapshot values; each identifier is a
// snapshot value, normalised. It cannot tell whether the reducer would
// have chosen that observation: it refuses invented values, not a
// different choice among real ones.
func agrees(e Entity, obs []graph.Observation, owners []string) error {
	if owners == nil {
		owners = []string{e.ID}
	}
	byID := make(map[string]graph.Observation, len(obs))
	for _, o := range obs {
		if slices.Contains(owners, o.EntityID) {
			byID[o.ID] = o
		}
	}
	if len(e.Provenance) != len(e.Snapshot) {
		return fmt.Errorf("entity %s: its snapshot has %d fields and its provenance %d", e.ID, len(e.Snapshot), len(e.Provenance))
	}
	if !e.Merged() && e.ObservationCount > len(obs) {
		return fmt.Errorf("entity %s: it counts %d observations and the file holds %d", e.ID, e.ObservationCount, len(obs))
	}
	for _, f := range sortedFields(e.Snapshot) {
		v := e.Snapshot[f]
		oid, ok := e.Provenance[f]
		if !ok {
			return fmt.Errorf("entity %s: snapshot field %q has no provenance", e.ID, f)
		}
		o, ok := byID[oid]
		if !ok {
			return fmt.Errorf("entity %s: the provenance of field %q names observation %s, which is not one of its observations in the file", e.ID, f, oid)
		}
		if o.EntityType != e.Type {
			return fmt.Errorf("entity %s: type %s, its observation %s says %s", e.ID, e.Type, oid, o.EntityType)
		}
		ov, ok := o.Fields[f]
		if !ok || ov == nil {
			return fmt.Errorf("entity %s: field %q comes from observation %s, which has no such field", e.ID, f, oid)
		}
		if sameJSON(ov) == sameJSON(v) {
			continue
		}
		if arr, ok := v.([]any); ok && arrayFromObservations(f, arr, ov, byID) {
			continue
		}
		return fmt.Errorf("entity %s: field %q holds %s, its observation %s says %s", e.ID, f, truncate(sameJSON(v), 80), oid, truncate(sameJSON(ov), 80))
	}
	texts := []string{}
	for _, v := range e.Snapshot {
		if t := scalarText(v); t != "" {
			texts = append(texts, t)
		}
	}
	if name := strings.TrimSpace(e.CanonicalName); name != e.ID && !slices.Contains(texts, name) {
		for _, tok := range strings.Fields(name) {
			if !slices.ContainsFunc(texts, func(t string) bool { return strings.Contains(t, tok) }) {
				return fmt.Errorf("entity %s: canonical name %q is not made of its snapshot's values", e.ID, truncate(e.CanonicalName, 80))
			}
		}
	}
	for _, id := range e.Identifiers {
		want := ""
		if id.Field == "canonical_name" {
			want = knowledge.NormalizeIdentifier(e.CanonicalName)
		} else if v, ok := e.Snapshot[id.Field]; ok {
			want = knowledge.NormalizeIdentifier(scalarText(v))
		}
		if want == "" || want != id.Value {
			return fmt.Errorf("entity %s: identifier %s=%q is not a value of its snapshot", e.ID, id.Field, truncate(id.Value, 80))
		}
	}
	return nil
}

// arrayFromObservations reports whether a merged array holds the elements
// of the observation its provenance names, and only elements some
// observation gave.
func arrayFromObservations(field string, arr []any, prov any, obs map[string]graph.Observation) bool {
	have := map[string]bool{}
	for _, x := range arr {
		have[sameJSON(x)] = true
	}
	elems := func(v any) []any {
		if a, ok := v.([]any); ok {
			return a
		}
		return []any{v}
	}
	for _, x := range elems(prov) {
		if !have[sameJSON(x)] {
			return false
		}
	}
	given := map[string]bool{}
	for _, o := range obs {
		if v, ok := o.Fields[field]; ok && v != nil {
			for _, x := range elems(v) {
				given[sameJSON(x)] = true
			}
		}
	}
	for k := range have {
		if !given[k] {
			return false
		}
	}
	return true
}

// scalarText is the text of a scalar snapshot value, trimmed; "" for
// objects, arrays and null.
func scalarText(v any) string {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case nil, map[string]any, []any:
		return ""
	default:
		return strings.TrimSpace(fmt.Sprint(x))
	}
}

func sortedFields(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
