package knowledge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// recompute reduces an entity's observations into its snapshot and writes
// the snapshot, identifiers, timeline events and outbox entry (see
// rewrite). An entity without observations is returned as it is stored.
func (s *Service) recompute(ctx context.Context, tx *graph.Tx, userID, entityID string) (graph.Entity, error) {
	obs, err := tx.AllObservations(ctx, userID, entityID)
	if err != nil {
		return graph.Entity{}, err
	}
	prev, err := tx.Entity(ctx, userID, entityID)
	exists := err == nil
	if err != nil && !errors.Is(err, graph.ErrNotFound) {
		return graph.Entity{}, err
	}
	out, err := s.rewrite(ctx, tx, userID, []entityState{{id: entityID, observations: obs, prev: prev, exists: exists}})
	if err != nil {
		return graph.Entity{}, err
	}
	return out[0], nil
}

// entityState is what rewrite needs of an entity: every observation it has
// (those a resolution rejected included: rewrite drops them) and its
// stored row, if it exists.
type entityState struct {
	id           string
	observations []graph.Observation
	prev         graph.Entity
	exists       bool
}

// rewrite recomputes entities from their observations: for each, the
// observations that count (see counted) reduce into a snapshot, written
// with its identifiers, timeline events and outbox entry. An entity has a
// stored row afterwards if it has observations that count; one without
// keeps its row as it is (the zero Entity if it has none), and that row is
// what rewrite returns for it. Whatever the number of entities, it is one
// read of the rejected observations and one bulk write of each kind, so
// that a store of many entities costs a few statements rather than a few
// per entity. The ids must be distinct; the result is in their order.
func (s *Service) rewrite(ctx context.Context, tx *graph.Tx, userID string, in []entityState) ([]graph.Entity, error) {
	var all []graph.Observation
	for _, st := range in {
		all = append(all, st.observations...)
	}
	all, err := s.counted(ctx, userID, all)
	if err != nil {
		return nil, err
	}
	counting := make(map[string][]graph.Observation, len(in))
	for _, o := range all {
		counting[o.EntityID] = append(counting[o.EntityID], o)
	}
	schemas, err := s.schemas.For(ctx, userID)
	if err != nil {
		return nil, err
	}
	now := s.clock()
	out := make([]graph.Entity, len(in))
	var (
		puts      []graph.Entity
		idents    []graph.EntityIdentifiers
		timelines []graph.EntityTimeline
		changed   []string
	)
	for i, st := range in {
		obs := counting[st.id]
		if len(obs) == 0 {
			out[i] = st.prev
			continue
		}
		sc := schemaIn(schemas, obs[0].EntityType)
		red := Reduce(sc, obs)
		e := graph.Entity{
			ID: st.id, UserID: userID, Type: sc.EntityType, SchemaVersion: sc.Version,
			CanonicalName: canonicalName(sc, red.Snapshot, st.id),
			Snapshot:      red.Snapshot, Provenance: red.Provenance, ObservationCount: red.ObservationCount,
			LastObservationAt: red.LastObservationAt, CreatedAt: now, ComputedAt: now,
		}
		if st.exists {
			e.CreatedAt, e.MergedInto, e.MergedAt = st.prev.CreatedAt, st.prev.MergedInto, st.prev.MergedAt
		}
		sourceOf := make(map[string]string, len(obs))
		for _, o := range obs {
			sourceOf[o.ID] = o.SourceID
		}
		out[i] = e
		puts = append(puts, e)
		idents = append(idents, graph.EntityIdentifiers{EntityID: st.id, Identifiers: identifiers(sc, e)})
		timelines = append(timelines, graph.EntityTimeline{EntityID: st.id, Events: timelineEvents(sc, e, sourceOf)})
		changed = append(changed, st.id)
	}
	if len(puts) == 0 {
		return out, nil
	}
	if err := tx.PutEntities(ctx, puts); err != nil {
		return nil, err
	}
	if err := tx.SetEntityIdentifiers(ctx, userID, idents); err != nil {
		return nil, err
	}
	if err := tx.ReplaceEntityTimelines(ctx, userID, timelines); err != nil {
		return nil, err
	}
	if err := s.enqueueEmbedding(ctx, tx, userID, changed...); err != nil {
		return nil, err
	}
	return out, nil
}

// schemaFor returns the schema of a user's type, or an empty schema for a
// type that is no longer registered, so that old data still reduces.
func (s *Service) schemaFor(ctx context.Context, userID, entityType string) (*schema.Schema, error) {
	set, err := s.schemas.For(ctx, userID)
	if err != nil {
		return nil, err
	}
	return schemaIn(set, entityType), nil
}

// schemaIn is schemaFor within a resolved set.
func schemaIn(set *schema.Set, entityType string) *schema.Schema {
	if sc, ok := set.Lookup(entityType); ok {
		return sc
	}
	return &schema.Schema{EntityType: entityType, Version: "0", Fields: map[string]schema.Field{}}
}

// identifiers lists the normalised values an entity can be found under: its
// canonical name and its identifier, identity and name fields.
func identifiers(s *schema.Schema, e graph.Entity) []graph.Identifier {
	seen := map[graph.Identifier]bool{}
	var out []graph.Identifier
	add := func(field, v string) {
		id := graph.Identifier{Field: field, Value: NormalizeIdentifier(v)}
		if id.Value != "" && len(id.Value) <= 512 && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	add("canonical_name", e.CanonicalName)
	fields := append(slices.Clone(s.IdentityFields), s.NameFields...)
	for name, f := range s.Fields {
		if f.Identifier {
			fields = append(fields, name)
		}
	}
	slices.Sort(fields)
	for _, name := range slices.Compact(fields) {
		switch v := e.Snapshot[name].(type) {
		case string:
			add(name, v)
		case nil:
		default:
			add(name, schema.ValueText(v))
		}
	}
	return out
}

// timelineEvents derives an entity's events from the date fields its schema
// names. Each event points at the source of the observation the date came
// from.
func timelineEvents(s *schema.Schema, e graph.Entity, sourceOf map[string]string) []graph.TimelineEvent {
	var out []graph.TimelineEvent
	for _, name := range s.FieldNames() {
		f := s.Fields[name]
		str, ok := e.Snapshot[name].(string)
		if f.EventType == "" || !ok {
			continue
		}
		at, ok := schema.ParseDate(str)
		if !ok {
			continue
		}
		out = append(out, graph.TimelineEvent{
			ID: hashID("evt_", e.ID, name), UserID: e.UserID, EntityID: e.ID, EventType: f.EventType,
			Timestamp: str, Time: at, SourceID: sourceOf[e.Provenance[name]],
			Properties: map[string]any{"entity_type": e.Type, "field": name, "canonical_name": e.CanonicalName},
		})
	}
	return out
}

// readableEntity returns an entity the caller may read. Missing, other
// users' and unreadable entities are all ErrEntityNotFound; merged ones are
// a *MergedError unless allowMerged.
func (s *Service) readableEntity(ctx context.Context, tx *graph.Tx, c Caller, id string, allowMerged bool) (graph.Entity, error) {
	if err := checkID("entity_id", id); err != nil {
		return graph.Entity{}, err
	}
	e, err := tx.Entity(ctx, c.UserID, id)
	if errors.Is(err, graph.ErrNotFound) || (err == nil && !c.readable(e.Type)) {
		return graph.Entity{}, &NotFoundError{Kind: ErrEntityNotFound, ID: id}
	}
	if err != nil {
		return graph.Entity{}, err
	}
	if e.Merged() && !allowMerged {
		return graph.Entity{}, &MergedError{EntityID: e.ID, MergedInto: e.MergedInto}
	}
	return e, nil
}

// checkID rejects ids that cannot be ids, before they reach a query.
func checkID(field, id string) error {
	if id == "" {
		return invalid(field, "non-empty id", "empty string", "is required")
	}
	if len(id) > 256 {
		return invalid(field, "id of at most 256 bytes", "string", "is %d bytes long; ids are at most 256", len(id))
	}
	return nil
}

// Snapshot is an entity's state as the reducer computed it.
type Snapshot struct {
	Entity     graph.Entity
	ComputedAt time.Time
}

// EntitySnapshot returns an entity's snapshot with provenance. With a
// non-zero at it recomputes the snapshot from the observations recorded up
// to that time; an entity with none then did not exist yet.
func (s *Service) EntitySnapshot(ctx context.Context, c Caller, id string, at time.Time) (Snapshot, error) {
	var out Snapshot
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		e, err := s.readableEntity(ctx, tx, c, id, false)
		if err != nil {
			return err
		}
		if at.IsZero() {
			out = Snapshot{Entity: e, ComputedAt: e.ComputedAt}
			return nil
		}
		obs, err := tx.AllObservations(ctx, c.UserID, id)
		if err != nil {
			return err
		}
		obs = slices.DeleteFunc(obs, func(o graph.Observation) bool { return o.CreatedAt.After(at) })
		if obs, err = s.countedAt(ctx, c.UserID, obs, at); err != nil {
			return err
		}
		if len(obs) == 0 {
			return &NotFoundError{Kind: ErrEntityNotFound, ID: id}
		}
		sc, err := s.schemaFor(ctx, c.UserID, e.Type)
		if err != nil {
			return err
		}
		red := Reduce(sc, obs)
		e.Snapshot, e.Provenance = red.Snapshot, red.Provenance
		e.ObservationCount, e.LastObservationAt = red.ObservationCount, red.LastObservationAt
		e.CanonicalName = canonicalName(sc, red.Snapshot, id)
		out = Snapshot{Entity: e, ComputedAt: s.clock()}
		return nil
	})
	return out, err
}

// EntityQuery selects entities for ListEntities.
type EntityQuery struct {
	EntityType    string
	IncludeMerged bool
	Page          graph.Page
}

// ListEntities returns a page of the caller's readable entities, most
// recently observed first, and how many match in all.
func (s *Service) ListEntities(ctx context.Context, c Caller, q EntityQuery) ([]graph.Entity, int, error) {
	var out []graph.Entity
	var total int
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		f := graph.EntityFilter{UserID: c.UserID, IncludeMerged: q.IncludeMerged, Page: q.Page}
		var err error
		if f.Types, err = s.readableTypes(ctx, tx, c); err != nil {
			return err
		}
		if q.EntityType != "" {
			if f.Types == nil || slices.Contains(f.Types, q.EntityType) {
				f.Types = []string{q.EntityType}
			} else {
				f.Types = []string{}
			}
		}
		out, total, err = tx.ListEntities(ctx, f)
		return err
	})
	return out, total, err
}

// readableTypes returns the entity types the caller may read, or nil when it
// may read every type. The candidates are every registered type and every
// type the user has data of.
func (s *Service) readableTypes(ctx context.Context, tx *graph.Tx, c Caller) ([]string, error) {
	if c.Allowed == nil {
		return nil, nil
	}
	have, err := tx.EntityTypes(ctx, c.UserID)
	if err != nil {
		return nil, err
	}
	set, err := s.schemas.For(ctx, c.UserID)
	if err != nil {
		return nil, err
	}
	all := append(set.Types(), have...)
	slices.Sort(all)
	all = slices.Compact(all)
	readable := c.readableOf(all)
	if len(readable) == len(all) {
		// Every type there is: no filter, which the drivers answer from
		// their indexes alone (a list of types is a join per query).
		return nil, nil
	}
	return readable, nil
}

// EntitiesByIdentifier returns the readable entities whose name or an
// identifier field equals identifier after normalisation.
func (s *Service) EntitiesByIdentifier(ctx context.Context, c Caller, identifier, entityType string) ([]graph.Entity, error) {
	norm := NormalizeIdentifier(identifier)
	if norm == "" {
		return nil, invalid("identifier", "a name, email or other identifier with letters or digits", "string", "has nothing to match after normalisation")
	}
	var out []graph.Entity
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		found, err := tx.EntitiesByIdentifier(ctx, c.UserID, norm, entityType)
		out = slices.DeleteFunc(found, func(e graph.Entity) bool { return !c.readable(e.Type) })
		return err
	})
	return out, err
}

// Observations returns a page of an entity's observations, newest first.
func (s *Service) Observations(ctx context.Context, c Caller, id string, p graph.Page) ([]graph.Observation, int, graph.Entity, error) {
	var out []graph.Observation
	var total int
	var ent graph.Entity
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		var err error
		if ent, err = s.readableEntity(ctx, tx, c, id, false); err != nil {
			return err
		}
		out, total, err = tx.Observations(ctx, c.UserID, id, p)
		return err
	})
	return out, total, ent, err
}

// FieldProvenance traces one snapshot field to the observation that won and
// the source material it came from.
type FieldProvenance struct {
	Field       string
	Value       any
	Observation graph.Observation
	Source      graph.Source
}

// FieldProvenance returns the provenance chain of one field of an entity.
func (s *Service) FieldProvenance(ctx context.Context, c Caller, id, field string) (FieldProvenance, error) {
	if field == "" {
		return FieldProvenance{}, invalid("field", "a field name", "empty string", "is required")
	}
	var out FieldProvenance
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		e, err := s.readableEntity(ctx, tx, c, id, false)
		if err != nil {
			return err
		}
		obsID, ok := e.Provenance[field]
		if !ok {
			return &NotFoundError{Kind: ErrFieldNotFound, ID: id, Field: field}
		}
		o, err := tx.Observation(ctx, c.UserID, obsID)
		if err != nil {
			return fmt.Errorf("knowledge: provenance of %s.%s: %w", id, field, err)
		}
		src, err := tx.Source(ctx, c.UserID, o.SourceID)
		if err != nil {
			return fmt.Errorf("knowledge: provenance of %s.%s: %w", id, field, err)
		}
		out = FieldProvenance{Field: field, Value: e.Snapshot[field], Observation: o, Source: src}
		return nil
	})
	if err != nil {
		return FieldProvenance{}, err
	}
	srcs, err := s.redactSources(ctx, c, []graph.Source{out.Source})
	if err != nil {
		return FieldProvenance{}, err
	}
	if len(srcs) == 1 {
		out.Source = srcs[0]
	} else {
		out.Source = graph.Source{ID: out.Source.ID, UserID: out.Source.UserID, Kind: out.Source.Kind}
	}
	return out, nil
}

// TimelineQuery selects timeline events.
type TimelineQuery struct {
	EventType string
	SourceID  string
	EntityID  string
	After     time.Time
	Before    time.Time
	Page      graph.Page
	// Years asks for TimelinePage.Years too, MonthsOf (a year, 0 for
	// none) for TimelinePage.Months; PeriodsOnly for those alone, without
	// a page of events or its total (what a completion of periods needs,
	// at an index seek a period).
	Years       bool
	MonthsOf    int
	PeriodsOnly bool
}

// TimelinePage is a page of timeline events, newest first.
type TimelinePage struct {
	Events []graph.TimelineEvent
	// Total counts the events that match the query.
	Total int
	// Years (2026) are the years (UTC) in which the caller has events it
	// may read, newest first, however old (graph.Tx.TimelineYears), and
	// Months (2026-03) those of the year MonthsOf, when the query asked
	// for them: the whole timeline's, not only the page's.
	Years, Months []string
}

// Timeline returns a page of the caller's readable timeline events, newest
// first.
func (s *Service) Timeline(ctx context.Context, c Caller, q TimelineQuery) ([]graph.TimelineEvent, int, error) {
	p, err := s.TimelinePage(ctx, c, q)
	return p.Events, p.Total, err
}

// TimelinePage is Timeline with the months and years of the timeline when
// q asks for them, read in the same transaction.
func (s *Service) TimelinePage(ctx context.Context, c Caller, q TimelineQuery) (TimelinePage, error) {
	var p TimelinePage
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		types, err := s.readableTypes(ctx, tx, c)
		if err != nil {
			return err
		}
		if !q.PeriodsOnly {
			p.Events, p.Total, err = tx.ListTimelineEvents(ctx, graph.TimelineFilter{
				UserID: c.UserID, EventType: q.EventType, SourceID: q.SourceID, EntityID: q.EntityID,
				After: q.After, Before: q.Before, EntityTypes: types, Page: q.Page,
			})
		}
		if err == nil && q.Years {
			var years []int
			years, err = tx.TimelineYears(ctx, c.UserID, types)
			for _, y := range years {
				p.Years = append(p.Years, fmt.Sprintf("%04d", y))
			}
		}
		if err == nil && q.MonthsOf != 0 {
			var months []int
			months, err = tx.TimelineMonths(ctx, c.UserID, types, q.MonthsOf)
			for _, m := range months {
				p.Months = append(p.Months, fmt.Sprintf("%04d-%02d", q.MonthsOf, m))
			}
		}
		return err
	})
	return p, err
}

// related fills a store result with the live relationships of the stored
// entities and the readable entities at their other ends, a few of each.
// ids must be entities the caller may read: the neighbours of one it may
// not read would say that it exists. Without graph read there is nothing
// to show, as a traversal would refuse.
func (s *Service) related(ctx context.Context, tx *graph.Tx, c Caller, ids []string, res *StoreResult) error {
	const maxRelated = 50
	if len(ids) == 0 || !c.May(Read, ResourceGraph) {
		return nil
	}
	types, err := s.readableTypes(ctx, tx, c)
	if err != nil {
		return err
	}
	// Each entity's first maxRelated relationships, one entity after the
	// other, the repeats (a relationship between two of ids comes under
	// both) left out, the first maxRelated of what remains: as each comes
	// at most twice, the sequence's first 2*maxRelated hold them.
	rels, err := tx.RelationshipsOfEntities(ctx, graph.EntitiesRelationshipsQuery{
		UserID: c.UserID, EntityIDs: ids, EntityTypes: types, PerEntity: maxRelated, Limit: 2 * maxRelated,
	})
	if err != nil {
		return err
	}
	seenRel := map[string]bool{}
	var others []string
	for _, r := range rels {
		if seenRel[r.ID] || len(res.RelatedRelationships) >= maxRelated {
			continue
		}
		seenRel[r.ID] = true
		res.RelatedRelationships = append(res.RelatedRelationships, r)
		for _, end := range []string{r.SourceEntityID, r.TargetEntityID} {
			if !slices.Contains(ids, end) && !slices.Contains(others, end) {
				others = append(others, end)
			}
		}
	}
	if len(others) > maxRelated {
		others = others[:maxRelated]
	}
	ents, err := tx.Entities(ctx, c.UserID, others)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if c.readable(e.Type) {
			res.RelatedEntities = append(res.RelatedEntities, e)
		}
	}
	return nil
}
