package graphtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/graph"
)

// testListEntityStats checks that ListEntityStats lists exactly what
// ListEntities lists, filter for filter and page for page, with each
// entity's statistics, and nothing of another user.
func testListEntityStats(t *testing.T, newStore Harness) {
	s := newStore(t)
	listFixture(t, s)
	putEntities(t, s, newEntity(bob, "ent_bob_1", "person", at(epoch, 6)))
	filters := map[string]graph.EntityFilter{
		"All":                 {},
		"IncludeMerged":       {IncludeMerged: true},
		"OneType":             {Types: []string{"person"}},
		"OneTypeWithMerged":   {Types: []string{"person"}, IncludeMerged: true},
		"TwoTypes":            {Types: []string{"person", "org"}},
		"UnknownType":         {Types: []string{"nope"}},
		"EmptyTypesMeansNone": {Types: []string{}},
		"FirstPage":           {Page: graph.Page{Limit: 2}},
		"MiddlePage":          {Page: graph.Page{Limit: 2, Offset: 1}},
		"PastTheEnd":          {Page: graph.Page{Limit: 2, Offset: 9}},
		"OffsetOnly":          {Page: graph.Page{Offset: 3}},
		"TextSigs":            {TextSigs: true},
		"TextSigsOfAPage":     {Types: []string{"person"}, IncludeMerged: true, TextSigs: true, Page: graph.Page{Limit: 2, Offset: 1}},
		// A context load's listing: room for every entity (a driver may
		// then read the degrees of all the user's relationships).
		"Room":              {Page: graph.Page{Limit: 1000}},
		"RoomWithAll":       {IncludeMerged: true, TextSigs: true, Page: graph.Page{Limit: 1000}},
		"RoomAfterAnOffset": {IncludeMerged: true, TextSigs: true, Page: graph.Page{Limit: 1000, Offset: 2}},
	}
	for name, f := range filters {
		t.Run(name, func(t *testing.T) {
			f.UserID = alice
			var want []graph.EntityStat
			got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.EntityStat, error) {
				ents, _, err := tx.ListEntities(ctx, f)
				if err != nil {
					return nil, err
				}
				for _, e := range ents {
					st := graph.EntityStat{
						ID: e.ID, Type: e.Type, ObservationCount: e.ObservationCount,
						LastObservationAt: e.LastObservationAt, MergedInto: e.MergedInto,
					}
					if f.TextSigs {
						st.TextSig = graph.EntityTextSig(e)
					}
					want = append(want, st)
				}
				return tx.ListEntityStats(ctx, f)
			})
			diff(t, "ListEntityStats", want, got)
		})
	}
	t.Run("Values", func(t *testing.T) {
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.EntityStat, error) {
			return tx.ListEntityStats(ctx, graph.EntityFilter{UserID: alice, Types: []string{"person"}, IncludeMerged: true, TextSigs: true})
		})
		want := []graph.EntityStat{}
		for _, e := range []graph.Entity{
			newEntity(alice, "ent_alice_5", "person", at(epoch, 7)),
			newEntity(alice, "ent_alice_1", "person", at(epoch, 5)),
			newEntity(alice, "ent_alice_2", "person", at(epoch, 3)),
		} {
			want = append(want, graph.EntityStat{ID: e.ID, Type: e.Type,
				ObservationCount: e.ObservationCount, LastObservationAt: e.LastObservationAt, TextSig: graph.EntityTextSig(e)})
		}
		want[0].MergedInto = "ent_alice_1"
		diff(t, "ListEntityStats of persons", want, got)
	})
	t.Run("Degrees", func(t *testing.T) {
		s := newStore(t)
		buildNeighbourhood(t, s)
		// Enough entities without relationships that a driver may read
		// the degrees otherwise than for a few ids.
		manyEntities(t, s, alice, 1100)
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) (map[string]map[string]int, error) {
			stats, err := tx.ListEntityStats(ctx, graph.EntityFilter{UserID: alice, Page: graph.Page{Limit: 2000}})
			if len(stats) != 1107 {
				t.Errorf("%d entity stats, want 1107", len(stats))
			}
			out := map[string]map[string]int{}
			for _, e := range stats {
				if e.Degrees != nil {
					out[e.ID] = degreeMap(t, e.Degrees)
				}
			}
			return out, err
		})
		// Link 7 (hub → f) ended; link 8 (hub → f) is live.
		want := map[string]map[string]int{
			"ent_alice_n": {"person": 3, "project": 1, "org": 1, "secret": 1},
			"ent_alice_a": {"hub": 1, "project": 1},
			"ent_alice_b": {"hub": 1, "person": 1},
			"ent_alice_c": {"hub": 1},
			"ent_alice_d": {"hub": 1},
			"ent_alice_e": {"hub": 1},
			"ent_alice_f": {"hub": 1},
		}
		diff(t, "degrees", want, got)
		// A page reads the degrees of its own entities.
		page := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.EntityStat, error) {
			return tx.ListEntityStats(ctx, graph.EntityFilter{UserID: alice, Types: []string{"hub", "person"}, Page: graph.Page{Limit: 2, Offset: 1}})
		})
		for _, e := range page {
			diff(t, "degrees of "+e.ID+" in a page", want[e.ID], degreeMap(t, e.Degrees))
		}
		if len(page) != 2 {
			t.Errorf("page of %d entity stats, want 2", len(page))
		}
		// WithoutDegrees lists the same, with the degrees left out or
		// counted all the same.
		for _, f := range []graph.EntityFilter{{Page: graph.Page{Limit: 2000}}, {Types: []string{"hub", "person"}, Page: graph.Page{Limit: 2, Offset: 1}}} {
			f.UserID = alice
			with := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.EntityStat, error) { return tx.ListEntityStats(ctx, f) })
			f.WithoutDegrees = true
			without := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.EntityStat, error) { return tx.ListEntityStats(ctx, f) })
			if len(without) != len(with) {
				t.Fatalf("WithoutDegrees: %d entity stats, want %d", len(without), len(with))
			}
			for i := range without {
				if without[i].Degrees == nil {
					with[i].Degrees = nil
				}
			}
			diff(t, "WithoutDegrees", with, without)
		}
		other := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.EntityStat, error) {
			return tx.ListEntityStats(ctx, graph.EntityFilter{UserID: bob})
		})
		if len(other) != 0 {
			t.Errorf("bob sees %d entity stats of alice's graph", len(other))
		}
	})
	t.Run("DegreesAgree", func(t *testing.T) { CheckDegrees(t, newStore(t), "\x1e\x1f") })
	t.Run("TextSig", func(t *testing.T) {
		// The signature is the written text's, replaced with it.
		s := newStore(t)
		e := newEntity(alice, "ent_alice_sig", "space_probe", epoch)
		e.Snapshot = map[string]any{"mission": "Rocket launch", "stage": json.Number("2")}
		putEntities(t, s, e)
		e.Snapshot = map[string]any{"mission": "Orbital survey", "mass": json.Number("1e21"), "tags": []any{"x"}}
		putEntities(t, s, e)
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.EntityStat, error) {
			return tx.ListEntityStats(ctx, graph.EntityFilter{UserID: alice, TextSigs: true})
		})
		if len(got) != 1 {
			t.Fatalf("%d entity stats, want 1", len(got))
		}
		diff(t, "text signature", graph.EntityTextSig(e), got[0].TextSig)
		if sig := got[0].TextSig; !sig.MayContain("orbital") || sig.MayContain("rocket") {
			t.Errorf("the signature is not the entity's new text's")
		}
	})
	t.Run("TextHash", func(t *testing.T) {
		// The text hash a signature holds is that of the text the entity
		// is read back as, on every backend, numbers in whatever notation
		// included; a text with bytes that are not UTF-8 has none.
		s := newStore(t)
		long := strings.Repeat("é", 200) // cut at MaxEntityText inside a rune
		snaps := map[string]map[string]any{
			"ent_alice_h1": {"mission": "Rocket <launch> & \"orbit\"", "flag": true, "tags": []any{"x"}, "none": nil},
			"ent_alice_h2": {"a": "Zürich 北京 🚀", "b": long, "c": "\u2028 tab\tnewline\n"},
			"ent_alice_h3": {"mission": "Survey", "stage": json.Number("2"), "mass": json.Number("1e21"), "ratio": json.Number("1.50"),
				"zero": json.Number("-0"), "tiny": json.Number("12E-9"), "f": 0.1 + 0.2, "big": json.Number("123456789012345678901234567890")},
			"ent_alice_h4": {},
			"ent_alice_h5": {"note": "bad \xff byte"},
		}
		var es []graph.Entity
		for id, snap := range snaps {
			e := newEntity(alice, id, "space_probe", epoch)
			e.Snapshot = snap
			es = append(es, e)
		}
		putEntities(t, s, es...)
		view(t, s, func(ctx context.Context, tx *graph.Tx) (struct{}, error) {
			stats, err := tx.ListEntityStats(ctx, graph.EntityFilter{UserID: alice, TextSigs: true})
			if err != nil {
				return struct{}{}, err
			}
			for _, st := range stats {
				back, err := tx.Entity(ctx, alice, st.ID)
				if err != nil {
					return struct{}{}, err
				}
				h, ok := st.TextSig.TextHash()
				if want := st.ID != "ent_alice_h5"; ok != want {
					t.Errorf("%s: signature holds a text hash: %v, want %v", st.ID, ok, want)
					continue
				}
				if sum := sha256.Sum256([]byte(graph.EntityText(back))); ok && h != hex.EncodeToString(sum[:]) {
					t.Errorf("%s: text hash %s is not that of the text read back, %q", st.ID, h, graph.EntityText(back))
				}
			}
			if len(stats) != len(snaps) {
				t.Errorf("%d entity stats, want %d", len(stats), len(snaps))
			}
			return struct{}{}, nil
		})
	})
	t.Run("OtherUser", func(t *testing.T) {
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.EntityStat, error) {
			return tx.ListEntityStats(ctx, graph.EntityFilter{UserID: bob})
		})
		if len(got) != 1 || got[0].ID != "ent_bob_1" {
			t.Errorf("bob's entity stats = %+v, want only ent_bob_1", got)
		}
	})
}

// degreeMap returns ds as a map from type to count, nil for none, and
// fails t if a type has more than one Degree.
func degreeMap(t *testing.T, ds []graph.Degree) map[string]int {
	t.Helper()
	if len(ds) == 0 {
		return nil
	}
	m := map[string]int{}
	for _, d := range ds {
		if _, dup := m[d.Type]; dup {
			t.Errorf("degrees %v count type %q twice", ds, d.Type)
		}
		m[d.Type] += d.Count
	}
	return m
}

// CheckDegrees writes a random graph of 600 entities into s, with self
// loops, ended relationships and ids with spaces, digits, letters beyond
// ASCII, and infix (control characters, say) in a seventh of them, and
// checks that ListEntityStats gives every entity the degrees counted from
// the relationships written, listed all at once and by pages of a few (a
// driver may count them otherwise for a few ids). A driver test can run it
// with its own settings (graph/embedded reads many relationships in
// chunks).
func CheckDegrees(t *testing.T, s *graph.Store, infix string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	types := []string{"person", "org", "project"}
	es := make([]graph.Entity, 600)
	for i := range es {
		odd := ""
		if i%7 == 3 {
			odd = infix
		}
		es[i] = newEntity(alice, fmt.Sprintf("ent_%d %s%s é世", i, strings.Repeat("9", i%4), odd), types[i%len(types)], at(epoch, i))
	}
	update(t, s, func(ctx context.Context, tx *graph.Tx) error { return tx.PutEntities(ctx, es) })
	want := map[string]map[string]int{}
	count := func(id, other string, n int) {
		if want[id] == nil {
			want[id] = map[string]int{}
		}
		if want[id][other] += n; want[id][other] == 0 {
			delete(want[id], other)
		}
		if len(want[id]) == 0 {
			delete(want, id)
		}
	}
	typeOf := map[string]string{}
	for _, e := range es {
		typeOf[e.ID] = e.Type
	}
	update(t, s, func(ctx context.Context, tx *graph.Tx) error {
		// One bulk call (BulkRelationships proves it answers as 1,500
		// CreateRelationship calls would, in far fewer statements).
		ins := make([]graph.NewRelationship, 1500)
		for k := range ins {
			src, dst := es[rng.IntN(len(es))], es[rng.IntN(len(es))]
			if k%50 == 0 {
				dst = src
			}
			ins[k] = graph.NewRelationship{UserID: alice,
				Type: []string{graph.RefersTo, graph.Settles}[k%2], SourceEntityID: src.ID, TargetEntityID: dst.ID, Now: at(epoch, k)}
		}
		outs, err := tx.CreateRelationships(ctx, ins)
		if err != nil {
			return err
		}
		var made []graph.Relationship
		for k, o := range outs {
			if o.Err != nil {
				return o.Err
			}
			if o.Created {
				made = append(made, o.Relationship)
				count(ins[k].SourceEntityID, typeOf[ins[k].TargetEntityID], 1)
				count(ins[k].TargetEntityID, typeOf[ins[k].SourceEntityID], 1)
			}
		}
		for _, rel := range made[:100] {
			if _, err := tx.EndRelationship(ctx, alice, rel.ID, at(epoch, 2000)); err != nil {
				return err
			}
			count(rel.SourceEntityID, typeOf[rel.TargetEntityID], -1)
			count(rel.TargetEntityID, typeOf[rel.SourceEntityID], -1)
		}
		return nil
	})
	degrees := func(f graph.EntityFilter) map[string]map[string]int {
		t.Helper()
		f.UserID = alice
		out := map[string]map[string]int{}
		for _, e := range view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.EntityStat, error) { return tx.ListEntityStats(ctx, f) }) {
			if m := degreeMap(t, e.Degrees); len(m) > 0 {
				out[e.ID] = m
			}
		}
		return out
	}
	diff(t, "degrees of every entity", want, degrees(graph.EntityFilter{Page: graph.Page{Limit: 1000}}))
	paged := map[string]map[string]int{}
	for off := 0; off < len(es); off += 250 {
		maps.Copy(paged, degrees(graph.EntityFilter{Page: graph.Page{Limit: 250, Offset: off}}))
	}
	diff(t, "degrees by pages", want, paged)
}
