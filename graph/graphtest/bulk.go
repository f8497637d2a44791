package graphtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/cairnkg/cairn/graph"
)

// bulkSize is larger than any chunk a driver splits a bulk write into
// (SQLite's bound parameters), so that the chunk boundaries are crossed.
const bulkSize = 1200

// testBulkWrites checks the bulk methods that the store pipeline writes
// with: each does what its one-row counterpart does for every row it is
// given, at any size.
func testBulkWrites(t *testing.T, newStore Harness) {
	t.Run("PutEntities", func(t *testing.T) {
		s := newStore(t)
		old := newEntity(alice, "ent_alice_0003", "person", epoch)
		putEntities(t, s, old)
		var es []graph.Entity
		for i := range bulkSize {
			e := newEntity(alice, fmt.Sprintf("ent_alice_%04d", i), []string{"person", "org"}[i%2], at(epoch, i))
			e.Snapshot["n"] = i
			if i%7 == 0 {
				e.MergedInto, e.MergedAt = "ent_alice_0001", at(epoch, i+1)
			}
			es = append(es, e)
		}
		es[3].CanonicalName = "replaced"
		update(t, s, func(ctx context.Context, tx *graph.Tx) error {
			if err := tx.PutEntities(ctx, nil); err != nil {
				return fmt.Errorf("put no entities: %w", err)
			}
			return tx.PutEntities(ctx, es)
		})
		ids := entityIDs(es)
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Entity, error) {
			return tx.Entities(ctx, alice, ids)
		})
		diff(t, "Entities after PutEntities", jsonValue(t, es), got)
		if n := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Entity, error) {
			return tx.Entities(ctx, bob, ids)
		}); len(n) != 0 {
			t.Errorf("bob reads %d of alice's entities", len(n))
		}
	})

	t.Run("InsertObservations", func(t *testing.T) {
		s := newStore(t)
		const src = "src_alice_1"
		putSources(t, s, newSource(alice, src, epoch), newSource(bob, "src_bob_1", epoch))
		entities := []string{"ent_alice_a", "ent_alice_b", "ent_alice_c"}
		var obs []graph.Observation
		for i := range bulkSize {
			o := newObservation(alice, fmt.Sprintf("obs_alice_%04d", i), entities[i%3], src, i)
			o.Fields = map[string]any{"n": i}
			obs = append(obs, o)
		}
		bobs := newObservation(bob, "obs_bob_1", "ent_alice_a", "src_bob_1", 1)
		update(t, s, func(ctx context.Context, tx *graph.Tx) error {
			if err := tx.InsertObservations(ctx, nil); err != nil {
				return fmt.Errorf("insert no observations: %w", err)
			}
			if err := tx.InsertObservations(ctx, []graph.Observation{bobs}); err != nil {
				return err
			}
			return tx.InsertObservations(ctx, obs)
		})
		want := jsonValue(t, obs)
		byID := func(a, b graph.Observation) int { return cmp.Compare(a.ID, b.ID) }

		got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Observation, error) {
			return tx.EntitiesObservations(ctx, alice, []string{"ent_alice_a", "ent_alice_c", "ent_alice_missing"})
		})
		slices.SortFunc(got, byID)
		var wantAC []graph.Observation
		for _, o := range want {
			if o.EntityID != "ent_alice_b" {
				wantAC = append(wantAC, o)
			}
		}
		slices.SortFunc(wantAC, byID)
		diff(t, "EntitiesObservations", wantAC, got)

		asked := []string{want[5].ID, "obs_alice_missing", want[1].ID, want[5].ID, "obs_bob_1"}
		got = view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Observation, error) {
			return tx.ObservationsByID(ctx, alice, asked)
		})
		diff(t, "ObservationsByID (the order of ids; missing ids, repeats and other users' left out)",
			[]graph.Observation{want[5], want[1]}, got)
		var all []string
		for _, o := range want {
			all = append(all, o.ID)
		}
		got = view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Observation, error) {
			return tx.ObservationsByID(ctx, alice, all)
		})
		diff(t, "ObservationsByID of every observation", want, got)

		for _, tc := range []struct {
			name string
			obs  []graph.Observation
		}{
			{"ExistingID", []graph.Observation{newObservation(alice, "obs_alice_new", "ent_alice_a", src, 1), obs[7]}},
			{"RepeatedID", []graph.Observation{newObservation(alice, "obs_alice_twice", "ent_alice_a", src, 1), newObservation(alice, "obs_alice_twice", "ent_alice_a", src, 2)}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error { return tx.InsertObservations(ctx, tc.obs) })
				if !errors.Is(err, graph.ErrConflict) {
					t.Errorf("InsertObservations: err = %v, want graph.ErrConflict", err)
				}
			})
		}
	})

	t.Run("InsertRawFragments", func(t *testing.T) {
		s := newStore(t)
		const src = "src_alice_1"
		putSources(t, s, newSource(alice, src, epoch))
		var fs []graph.RawFragment
		for i := range bulkSize {
			fs = append(fs, graph.RawFragment{
				ID: fmt.Sprintf("raw_alice_%04d", i), UserID: alice, SourceID: src, EntityID: "ent_alice_a", EntityType: "person",
				Field: fmt.Sprintf("f%d", i), Value: []any{i, "x"}, CreatedAt: at(epoch, i),
			})
		}
		update(t, s, func(ctx context.Context, tx *graph.Tx) error {
			if err := tx.InsertRawFragments(ctx, nil); err != nil {
				return fmt.Errorf("insert no fragments: %w", err)
			}
			return tx.InsertRawFragments(ctx, fs)
		})
		err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error {
			return tx.InsertRawFragment(ctx, fs[bulkSize-1])
		})
		if !errors.Is(err, graph.ErrConflict) {
			t.Errorf("InsertRawFragment of an id InsertRawFragments stored: err = %v, want graph.ErrConflict", err)
		}
		twice := graph.RawFragment{ID: "raw_alice_twice", UserID: alice, SourceID: src, EntityID: "ent_alice_a", EntityType: "person", Field: "f", Value: 1, CreatedAt: epoch}
		err = tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error {
			return tx.InsertRawFragments(ctx, []graph.RawFragment{twice, twice})
		})
		if !errors.Is(err, graph.ErrConflict) {
			t.Errorf("InsertRawFragments with an id twice: err = %v, want graph.ErrConflict", err)
		}
	})

	t.Run("SetEntityIdentifiers", func(t *testing.T) {
		s := newStore(t)
		var es []graph.Entity
		var sets []graph.EntityIdentifiers
		for i := range bulkSize / 2 {
			id := fmt.Sprintf("ent_alice_%04d", i)
			es = append(es, newEntity(alice, id, "person", at(epoch, i)))
			sets = append(sets, graph.EntityIdentifiers{EntityID: id, Identifiers: []graph.Identifier{
				{Field: "name", Value: fmt.Sprintf("name %d", i)}, {Field: "team", Value: fmt.Sprintf("team %d", i%3)},
			}})
		}
		es = append(es, newEntity(alice, "ent_alice_other", "person", epoch))
		putEntities(t, s, es...)
		update(t, s, func(ctx context.Context, tx *graph.Tx) error {
			if err := tx.SetIdentifiers(ctx, alice, "ent_alice_other", []graph.Identifier{{Field: "team", Value: "team 0"}}); err != nil {
				return err
			}
			if err := tx.SetEntityIdentifiers(ctx, alice, nil); err != nil {
				return fmt.Errorf("set no identifiers: %w", err)
			}
			return tx.SetEntityIdentifiers(ctx, alice, sets)
		})
		lookup := func(t *testing.T, value string) []string {
			t.Helper()
			return entityIDs(view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Entity, error) {
				return tx.EntitiesByIdentifier(ctx, alice, value, "")
			}))
		}
		diff(t, "EntitiesByIdentifier(name 599)", []string{"ent_alice_0599"}, lookup(t, "name 599"))
		if got := lookup(t, "team 0"); len(got) != bulkSize/6+1 || !slices.Contains(got, "ent_alice_other") {
			t.Errorf("EntitiesByIdentifier(team 0) = %d entities, want %d with ent_alice_other", len(got), bulkSize/6+1)
		}
		// Replacing: the sets' entities lose what they had, others keep it.
		update(t, s, func(ctx context.Context, tx *graph.Tx) error {
			return tx.SetEntityIdentifiers(ctx, alice, []graph.EntityIdentifiers{
				{EntityID: "ent_alice_0000", Identifiers: []graph.Identifier{{Field: "name", Value: "renamed"}}},
				{EntityID: "ent_alice_0003"},
			})
		})
		diff(t, "EntitiesByIdentifier(name 0) after replacing", []string(nil), lookup(t, "name 0"))
		diff(t, "EntitiesByIdentifier(renamed)", []string{"ent_alice_0000"}, lookup(t, "renamed"))
		if got := lookup(t, "team 0"); len(got) != bulkSize/6-1 || !slices.Contains(got, "ent_alice_other") {
			t.Errorf("EntitiesByIdentifier(team 0) after replacing = %d entities, want %d with ent_alice_other", len(got), bulkSize/6-1)
		}
	})

	t.Run("ReplaceEntityTimelines", func(t *testing.T) {
		s := newStore(t)
		const src = "src_alice_1"
		putSources(t, s, newSource(alice, src, epoch))
		var timelines []graph.EntityTimeline
		var want []graph.TimelineEvent
		for i := range bulkSize / 2 {
			id := fmt.Sprintf("ent_alice_%04d", i)
			evs := []graph.TimelineEvent{newEvent(alice, fmt.Sprintf("tle_alice_%04d_a", i), id, "start", src, i)}
			if i%2 == 0 {
				evs = append(evs, newEvent(alice, fmt.Sprintf("tle_alice_%04d_b", i), id, "end", src, i+bulkSize))
			}
			timelines = append(timelines, graph.EntityTimeline{EntityID: id, Events: evs})
			want = append(want, evs...)
		}
		other := newEvent(alice, "tle_alice_other", "ent_alice_other", "start", src, 1)
		replaceEvents(t, s, alice, "ent_alice_other", other)
		update(t, s, func(ctx context.Context, tx *graph.Tx) error {
			if err := tx.ReplaceEntityTimelines(ctx, alice, nil); err != nil {
				return fmt.Errorf("replace no timelines: %w", err)
			}
			return tx.ReplaceEntityTimelines(ctx, alice, timelines)
		})
		list := func(t *testing.T) []graph.TimelineEvent {
			t.Helper()
			return view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.TimelineEvent, error) {
				evs, _, err := tx.ListTimelineEvents(ctx, graph.TimelineFilter{UserID: alice, Page: graph.Page{Limit: 10 * bulkSize}})
				return evs, err
			})
		}
		sorted := func(evs []graph.TimelineEvent) []graph.TimelineEvent {
			evs = slices.Clone(evs)
			slices.SortFunc(evs, func(a, b graph.TimelineEvent) int { return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(a.ID, b.ID)) })
			return evs
		}
		diff(t, "ListTimelineEvents after ReplaceEntityTimelines", jsonValue(t, sorted(append(want, other))), list(t))
		// Replacing: the timelines' entities lose what they had, others
		// keep theirs.
		again := newEvent(alice, "tle_alice_again", "ent_alice_0001", "start", src, 5)
		update(t, s, func(ctx context.Context, tx *graph.Tx) error {
			return tx.ReplaceEntityTimelines(ctx, alice, []graph.EntityTimeline{
				{EntityID: "ent_alice_0000"}, {EntityID: "ent_alice_0001", Events: []graph.TimelineEvent{again}},
			})
		})
		left := slices.DeleteFunc(slices.Clone(want), func(ev graph.TimelineEvent) bool {
			return ev.EntityID == "ent_alice_0000" || ev.EntityID == "ent_alice_0001"
		})
		diff(t, "ListTimelineEvents after replacing two timelines", jsonValue(t, sorted(append(left, other, again))), list(t))
	})
}
