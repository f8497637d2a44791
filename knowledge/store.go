package knowledge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// MaxEntitiesPerStore bounds one store call.
const MaxEntitiesPerStore = 1000

// StoreRequest is a structured store call: entities with their fields, as
// the caller sent them.
type StoreRequest struct {
	Entities []map[string]any
	// SourcePriority is 0..MaxStorePriority; nil means DefaultSourcePriority.
	SourcePriority *int
	// Provenance may carry extracted_at (ISO 8601; it becomes the
	// observations' observed_at), extractor_version, agent_id and
	// source_refs. Other keys are kept as given.
	Provenance map[string]any
	// TypeDescriptions describe, by type, the schemas the call creates for
	// types no schema describes (Epitome's tableDescription); they are not
	// part of the source.
	TypeDescriptions map[string]string
	// TypeSchemas are, by (normalised) type, the schemas the call creates
	// for types no schema describes, in place of the one it would infer:
	// for a caller that knows what its records are (the iCalendar
	// interpreter's events, whose dates are timeline events). They are
	// checked as a registered schema is, created as the user's own version
	// 1.0 like an inferred one, and ignored for a type a schema describes.
	// They are not part of the source.
	TypeSchemas map[string]*schema.Schema
}

// StoredEntity is one entity a store call wrote an observation for.
type StoredEntity struct {
	EntityID      string
	EntityType    string
	ObservationID string
	// Created says whether the call created the entity; nil for a type the
	// caller may not read, whose prior existence the result must not tell.
	Created *bool
}

// StoreResult reports what a store call did, as far as the caller may
// read it. A write must not answer what a read would refuse, so for an
// entity of a type the caller may not read the result says nothing that
// depends on whether that entity existed before the call:
//
//   - its line in Entities holds the id the call's identity fields give
//     (not the entity a merge may have moved it to), its type and the
//     observation id, all determined by the arguments, and no Created;
//   - EntitiesCreated counts only new entities of readable types;
//   - when the call names an unreadable type and its content was stored
//     before, the result is not marked Deduplicated: it reads as a first
//     store would (ObservationsCreated counts every entity of the call,
//     whose observations the earlier identical call made), since "stored
//     before" would say the unreadable entity exists;
//   - Related* are computed from the stored entities of readable types
//     only, list only entities the caller may read, and are empty without
//     read consent on the graph.
type StoreResult struct {
	Source       graph.Source
	Deduplicated bool
	RunID        string
	// Entities has one line per entity of the call, in the call's order.
	Entities []StoredEntity
	// EntitiesCreated counts the entities of readable types that did not
	// exist before the call.
	EntitiesCreated     int
	ObservationsCreated int
	// UnknownFieldsCount counts the fields kept as raw fragments because
	// their entity's schema does not name them.
	UnknownFieldsCount   int
	RelatedEntities      []graph.Entity
	RelatedRelationships []graph.Relationship
	// SchemasCreated are the schemas the call created for the types it
	// named that no schema described (see schema.Infer), by type.
	SchemasCreated []*schema.Schema
}

// preparedEntity is one validated entity of a store call.
type preparedEntity struct {
	schema   *schema.Schema
	entityID string
	fields   map[string]any // schema fields, coerced
	unknown  map[string]any // everything else
}

// Store records structured source material. The arguments are the source:
// the same arguments stored again by the same user return the same source
// with Deduplicated set and create nothing. Otherwise one observation per
// entity is created, unknown fields are kept as raw fragments, and every
// touched entity's snapshot, identifiers and timeline events are recomputed,
// all in one transaction.
func (s *Service) Store(ctx context.Context, c Caller, req StoreRequest) (StoreResult, error) {
	prepared, unknownCount, created, err := s.prepareCreating(ctx, c, req)
	if err != nil {
		return StoreResult{}, err
	}
	priority := DefaultSourcePriority
	if req.SourcePriority != nil {
		priority = *req.SourcePriority
	}
	now := s.clock()
	observedAt := now
	if v, ok := req.Provenance["extracted_at"]; ok {
		str, _ := v.(string)
		t, err := ParseTime("provenance.extracted_at", str)
		if err != nil {
			return StoreResult{}, err
		}
		observedAt = t.UTC().Truncate(time.Microsecond)
	}
	content, err := canonicalJSON(map[string]any{
		"entities": req.Entities, "source_priority": req.SourcePriority, "provenance": req.Provenance,
	})
	if err != nil {
		return StoreResult{}, err
	}
	hash := sha256Hex(content)
	src := graph.Source{
		ID: SourceID(c.UserID, hash), UserID: c.UserID, ContentHash: hash, Kind: graph.SourceStructured,
		MimeType: "application/json", Size: int64(len(content)), Provenance: sourceProvenance(req.Provenance, c.AgentID),
		CreatedAt: now,
	}

	var res StoreResult
	var found []Contradiction
	write := func(tx *graph.Tx) error {
		res = StoreResult{Source: src, RunID: hashID("run_", src.ID), UnknownFieldsCount: unknownCount}
		found = nil
		existing, err := tx.SourceByHash(ctx, c.UserID, hash)
		if err == nil {
			return s.deduplicated(ctx, tx, c, prepared, existing, &res)
		}
		if !errors.Is(err, graph.ErrNotFound) {
			return err
		}
		if err := tx.InsertSource(ctx, src); err != nil {
			return err
		}
		found, err = s.storeNew(ctx, tx, c, prepared, src, observedAt, priority, now, &res)
		return err
	}
	err = s.graph.Update(ctx, write)
	if errors.Is(err, graph.ErrConflict) {
		// Another writer stored the same content between our read and our
		// insert (possible on backends with concurrent writers): this time
		// the read finds it.
		err = s.graph.Update(ctx, write)
	}
	if err != nil {
		return StoreResult{}, fmt.Errorf("knowledge: store: %w", err)
	}
	s.recordDetected(ctx, found)
	res.SchemasCreated = created
	if unknownCount > 0 {
		s.autoEnhanceAfterStore(ctx, c, prepared)
	}
	return res, nil
}

// storeNew writes the observations of a call whose source is new, and
// recomputes every entity they touch, with one call of each bulk graph
// method rather than one per entity (a call of 100 entities is about a
// dozen statements, whatever the size of the store):
//
//  1. every entity of the call is resolved (merges followed) in one read;
//  2. the current values that the new observations disagree with are
//     traced to their observations in one read, for the contradiction
//     checks, and the observations of the entities that existed are read
//     in one query, before the new ones are written (so that nothing just
//     written is read back);
//  3. the observations and the raw fragments are inserted, each in one
//     statement;
//  4. rewrite reduces every touched entity and writes the snapshots,
//     identifiers, timeline events and outbox entries, each in one
//     statement.
//
// It fills res and returns the contradictions found, which Store records
// once the transaction commits.
func (s *Service) storeNew(ctx context.Context, tx *graph.Tx, c Caller, prepared []preparedEntity, src graph.Source,
	observedAt time.Time, priority int, now time.Time, res *StoreResult) ([]Contradiction, error) {
	ids := make([]string, len(prepared))
	for i, pe := range prepared {
		ids[i] = pe.entityID
	}
	resolved, err := tx.ResolveEntities(ctx, c.UserID, ids)
	if err != nil {
		return nil, err
	}
	var (
		touched []string
		created = map[string]bool{}
		obs     = make([]graph.Observation, len(prepared))
		frags   []graph.RawFragment
		newObs  = map[string][]graph.Observation{}
	)
	for i, pe := range prepared {
		target := pe.entityID
		if ent, ok := resolved[pe.entityID]; ok {
			target = ent.ID
		} else {
			created[target] = true
		}
		o := graph.Observation{
			ID: hashID("obs_", src.ID, strconv.Itoa(i)), UserID: c.UserID, EntityID: target,
			EntityType: pe.schema.EntityType, SchemaVersion: pe.schema.Version, SourceID: src.ID,
			ObservedAt: observedAt, CreatedAt: now, SpecificityScore: specificity(pe.schema, pe.fields),
			SourcePriority: priority, Fields: pe.fields, OriginalEntityID: pe.entityID,
		}
		obs[i] = o
		newObs[target] = append(newObs[target], o)
		for _, name := range sortedKeys(pe.unknown) {
			frags = append(frags, graph.RawFragment{
				ID: hashID("frag_", o.ID, name), UserID: c.UserID, SourceID: src.ID, EntityID: target,
				EntityType: pe.schema.EntityType, Field: name, Value: pe.unknown[name], CreatedAt: now,
			})
		}
		res.Entities = append(res.Entities, storedLine(c, pe, target, o.ID, created[target]))
		res.ObservationsCreated++
		if !slices.Contains(touched, target) {
			touched = append(touched, target)
		}
	}

	var found []Contradiction
	if s.contradictions != nil {
		if found, err = s.contradictionsOf(ctx, tx, prepared, obs, resolved, created, now); err != nil {
			return nil, err
		}
	}
	var existing []string
	for _, id := range touched {
		if !created[id] {
			existing = append(existing, id)
		}
	}
	stored := map[string][]graph.Observation{}
	if len(existing) > 0 {
		old, err := tx.EntitiesObservations(ctx, c.UserID, existing)
		if err != nil {
			return nil, err
		}
		for _, o := range old {
			stored[o.EntityID] = append(stored[o.EntityID], o)
		}
	}
	if err := tx.InsertObservations(ctx, obs); err != nil {
		return nil, err
	}
	if err := tx.InsertRawFragments(ctx, frags); err != nil {
		return nil, err
	}

	rows := make(map[string]graph.Entity, len(resolved))
	for _, e := range resolved {
		rows[e.ID] = e
	}
	in := make([]entityState, len(touched))
	for i, id := range touched {
		prev, exists := rows[id]
		in[i] = entityState{id: id, observations: append(stored[id], newObs[id]...), prev: prev, exists: exists}
	}
	ents, err := s.rewrite(ctx, tx, c.UserID, in)
	if err != nil {
		return nil, err
	}
	// Entities created by this call have no relationships yet (an edge
	// needs both of its ends to exist, and store makes none), so related
	// is asked only about those that existed: it finds the same.
	var before []string
	for i, e := range ents {
		if !c.readable(e.Type) {
			continue
		}
		if created[touched[i]] {
			res.EntitiesCreated++
		} else {
			before = append(before, touched[i])
		}
	}
	return found, s.related(ctx, tx, c, before, res)
}

// contradictionsOf runs the contradiction checks of a call's new
// observations against the entities they resolved to as they were before
// the call (an entity the call creates contradicts nothing), reading the
// observations that the current values came from in one query.
func (s *Service) contradictionsOf(ctx context.Context, tx *graph.Tx, prepared []preparedEntity, obs []graph.Observation,
	resolved map[string]graph.Entity, created map[string]bool, now time.Time) ([]Contradiction, error) {
	var need []string
	for i, pe := range prepared {
		if created[obs[i].EntityID] {
			continue
		}
		need = append(need, disagreeing(pe.schema, resolved[pe.entityID], obs[i])...)
	}
	if len(need) == 0 {
		return nil, nil
	}
	prevs, err := tx.ObservationsByID(ctx, obs[0].UserID, need)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]graph.Observation, len(prevs))
	for _, o := range prevs {
		byID[o.ID] = o
	}
	var found []Contradiction
	for i, pe := range prepared {
		if created[obs[i].EntityID] {
			continue
		}
		cs, err := contradictionsIn(pe.schema, resolved[pe.entityID], obs[i], now, byID)
		if err != nil {
			return nil, err
		}
		found = append(found, cs...)
	}
	return found, nil
}

// deduplicated fills the result of a call whose content the user stored
// before: nothing is written. When every entity of the call is of a type
// the caller may read, the result says so (Deduplicated, nothing created);
// otherwise it reads as the first store did, so that it does not tell
// whether an entity the caller may not read exists (see StoreResult).
func (s *Service) deduplicated(ctx context.Context, tx *graph.Tx, c Caller, prepared []preparedEntity, src graph.Source, res *StoreResult) error {
	res.Source = src
	obs, err := tx.ObservationsBySource(ctx, c.UserID, src.ID)
	if err != nil {
		return err
	}
	entityOf := map[string]string{}
	for _, o := range obs {
		entityOf[o.ID] = o.EntityID
	}
	masked := slices.ContainsFunc(prepared, func(pe preparedEntity) bool { return !c.readable(pe.schema.EntityType) })
	var visible []string
	for i, pe := range prepared {
		obsID := hashID("obs_", src.ID, strconv.Itoa(i))
		target, ok := entityOf[obsID]
		if !ok {
			target = pe.entityID
		}
		res.Entities = append(res.Entities, storedLine(c, pe, target, obsID, false))
		if c.readable(pe.schema.EntityType) && !slices.Contains(visible, target) {
			visible = append(visible, target)
		}
	}
	if !masked {
		res.Deduplicated = true
		return nil
	}
	res.ObservationsCreated = len(prepared)
	return s.related(ctx, tx, c, visible, res)
}

// storedLine is an entity's line in a store result. For a type the caller
// may not read it names the entity by the id its identity fields give, not
// by where the store resolved it (a merge target exists only if the entity
// did), and does not say whether the call created it.
func storedLine(c Caller, pe preparedEntity, target, observationID string, created bool) StoredEntity {
	if !c.readable(pe.schema.EntityType) {
		return StoredEntity{EntityID: pe.entityID, EntityType: pe.schema.EntityType, ObservationID: observationID}
	}
	return StoredEntity{EntityID: target, EntityType: pe.schema.EntityType, ObservationID: observationID, Created: &created}
}

// prepareCreating is prepare, then registers the schemas it inferred for
// types no schema described, as the user's own. When another call
// registered one of them in the meantime, the call is prepared again with
// the schemas as they now are.
func (s *Service) prepareCreating(ctx context.Context, c Caller, req StoreRequest) ([]preparedEntity, int, []*schema.Schema, error) {
	for attempt := 0; ; attempt++ {
		set, err := s.schemas.For(ctx, c.UserID)
		if err != nil {
			return nil, 0, nil, err
		}
		prepared, unknown, inferred, err := s.prepare(c, set, req)
		if err != nil || len(inferred) == 0 {
			return prepared, unknown, nil, err
		}
		created, err := s.createInferred(ctx, c, inferred)
		if errors.Is(err, schema.ErrExists) && attempt == 0 {
			continue
		}
		if err != nil {
			return nil, 0, nil, err
		}
		return prepared, unknown, created, nil
	}
}

// prepare validates a store request and splits each entity's fields into
// schema fields and unknown fields. A type no schema in set describes gets
// a schema inferred from the call's entities of that type (schema.Infer),
// returned in inferred, by type, for the caller to register.
func (s *Service) prepare(c Caller, set *schema.Set, req StoreRequest) ([]preparedEntity, int, []*schema.Schema, error) {
	var inferred []*schema.Schema
	byType := map[string][]map[string]any{}
	for _, raw := range req.Entities {
		if typ, ok := raw["entity_type"].(string); ok {
			byType[schema.NormalizeTypeName(typ)] = append(byType[schema.NormalizeTypeName(typ)], raw)
		}
	}
	lookup := func(path, typ string) (*schema.Schema, error) {
		if sc, ok := set.Lookup(typ); ok {
			return sc, nil
		}
		if err := schema.ValidateTypeName(path, typ); err != nil {
			return nil, validationError(err)
		}
		for _, sc := range inferred {
			if sc.EntityType == typ {
				return sc, nil
			}
		}
		sc := schema.Infer(typ, byType[typ])
		if given := req.TypeSchemas[typ]; given != nil {
			sc = given.Clone()
			sc.EntityType, sc.Version = typ, "1.0"
			if err := schema.CheckDefinition(sc); err != nil {
				return nil, validationError(err)
			}
		}
		sc.Owner = c.UserID
		if d := strings.TrimSpace(req.TypeDescriptions[typ]); d != "" {
			sc.Description = truncate(d, 1024)
		}
		inferred = append(inferred, sc)
		return sc, nil
	}
	prepared, unknown, err := s.prepareWith(c, req, lookup)
	if err != nil {
		return nil, 0, nil, err
	}
	slices.SortFunc(inferred, func(a, b *schema.Schema) int { return strings.Compare(a.EntityType, b.EntityType) })
	return prepared, unknown, inferred, nil
}

// prepareWith is prepare with a function that resolves a (normalised) type
// to its schema.
func (s *Service) prepareWith(c Caller, req StoreRequest, lookup func(path, typ string) (*schema.Schema, error)) ([]preparedEntity, int, error) {
	if len(req.Entities) == 0 {
		return nil, 0, invalid("entities", "non-empty array of objects", "empty array", "at least one entity is required")
	}
	if len(req.Entities) > MaxEntitiesPerStore {
		return nil, 0, invalid("entities", fmt.Sprintf("at most %d entities", MaxEntitiesPerStore), "array",
			"%d entities in one call; split them into calls of at most %d", len(req.Entities), MaxEntitiesPerStore)
	}
	if p := req.SourcePriority; p != nil && (*p < 0 || *p > MaxStorePriority) {
		return nil, 0, invalid("source_priority", fmt.Sprintf("integer 0..%d", MaxStorePriority), "number",
			"must be between 0 and %d (priority %d is reserved for corrections)", MaxStorePriority, CorrectionPriority)
	}
	if err := checkProvenance(req.Provenance); err != nil {
		return nil, 0, err
	}
	if err := s.checkFieldSizes("provenance", req.Provenance); err != nil {
		return nil, 0, err
	}
	out := make([]preparedEntity, 0, len(req.Entities))
	unknownCount := 0
	for i, raw := range req.Entities {
		path := fmt.Sprintf("entities[%d]", i)
		typ, ok := raw["entity_type"].(string)
		if !ok {
			return nil, 0, invalid(path+".entity_type", "string", schema.JSONType(raw["entity_type"]), "entity_type is required and must be a string")
		}
		typ = schema.NormalizeTypeName(typ)
		sc, err := lookup(path+".entity_type", typ)
		if err != nil {
			return nil, 0, err
		}
		if !c.writable(typ) {
			return nil, 0, &ForbiddenError{EntityType: typ, Action: "write"}
		}
		pe := preparedEntity{schema: sc, fields: map[string]any{}, unknown: map[string]any{}}
		given := make(map[string]any, len(raw))
		for name, v := range raw {
			if name == "entity_type" || v == nil {
				continue
			}
			given[name] = v
			if name == "" || len(name) > schema.MaxFieldNameLen {
				return nil, 0, invalid(path, fmt.Sprintf("field names of 1..%d bytes", schema.MaxFieldNameLen), "string", "field name %q is empty or too long", truncate(name, 32))
			}
			if err := s.checkFieldSize(path+"."+name, v); err != nil {
				return nil, 0, err
			}
			f, known := sc.Fields[name]
			if !known {
				pe.unknown[name] = v
				continue
			}
			cv, err := coerceField(path+"."+name, f.Type, v)
			if err != nil && f.Inferred && !f.Identifier {
				// Nobody declared the field's type: a value of another
				// kind is kept aside, as a field the schema lacks is.
				pe.unknown[name] = v
				continue
			}
			if err != nil {
				return nil, 0, err
			}
			pe.fields[name] = cv
		}
		for _, name := range sc.FieldNames() {
			if _, ok := pe.fields[name]; !ok && sc.Fields[name].Required {
				return nil, 0, invalid(path+"."+name, sc.Fields[name].Type.Expected(), "missing",
					"required by the %s schema", typ)
			}
		}
		identity, err := identityOf(sc, pe.fields, given)
		if err != nil {
			return nil, 0, err
		}
		pe.entityID = EntityID(c.UserID, typ, identity)
		unknownCount += len(pe.unknown)
		out = append(out, pe)
	}
	return out, unknownCount, nil
}

// checkProvenance validates the documented provenance keys.
func checkProvenance(p map[string]any) error {
	for _, k := range []string{"extracted_at", "extractor_version", "agent_id"} {
		if v, ok := p[k]; ok {
			if _, isStr := v.(string); !isStr {
				return invalid("provenance."+k, "string", schema.JSONType(v), "expected string, got %s", schema.JSONType(v))
			}
		}
	}
	if v, ok := p["source_refs"]; ok {
		refs, isArr := v.([]any)
		if !isArr {
			return invalid("provenance.source_refs", "array of strings", schema.JSONType(v), "expected array of strings, got %s", schema.JSONType(v))
		}
		for i, r := range refs {
			if _, isStr := r.(string); !isStr {
				return invalid(fmt.Sprintf("provenance.source_refs[%d]", i), "string", schema.JSONType(r), "expected string, got %s", schema.JSONType(r))
			}
		}
	}
	return nil
}

// sourceProvenance is the provenance recorded on a source: what the caller
// sent, plus the agent that made the call.
func sourceProvenance(p map[string]any, agentID string) map[string]any {
	out := map[string]any{}
	for k, v := range p {
		out[k] = v
	}
	if agentID != "" {
		out["recorded_by_agent"] = agentID
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
