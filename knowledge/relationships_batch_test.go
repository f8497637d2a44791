package knowledge_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// TestCreateRelationshipsMatchesOneByOne is the batch's oracle test: the
// same requests sent one by one with CreateRelationship, on a store seeded
// alike, give the same outcome for each (relationship, created, error) and
// leave the same relationships with the same merged metadata. The requests
// mix acyclic types (one by one in the batch) with others (set-based), and
// cover repeats (of an edge that existed, with the same and with other
// metadata, and of one made earlier in the batch, with equal and with
// different metadata), renewals of ended relationships (once, and again in
// the same batch), a cycle closed by edges of the same batch, self-loops,
// unknown types, missing, merged, unreadable (consent) and other users'
// entities, numbers in metadata (which come back from the store as
// json.Number), and metadata over the field bound.
func TestCreateRelationshipsMatchesOneByOne(t *testing.T) {
	for _, b := range knowledge.GraphBackends {
		t.Run(b.Name, func(t *testing.T) {
			now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
			seed := func(t *testing.T) (*knowledge.Service, map[string]string) {
				s := knowledge.NewService(b.Open(t), schema.NewRegistry(), knowledge.Options{Now: func() time.Time { return now }, MaxFieldBytes: 64})
				ids := map[string]string{}
				for _, n := range []string{"A", "B", "C", "D", "Dup"} {
					ids[n] = company(t, s, alice, n)
				}
				ids["bob"] = company(t, s, bob, "Bob's")
				ids["P"] = store(t, s, alice, map[string]any{"entity_type": "person", "name": "P"}).Entities[0].EntityID
				relate(t, s, alice, graph.PartOf, ids["A"], ids["B"], map[string]any{"since": "2020"})
				relate(t, s, alice, graph.RefersTo, ids["A"], ids["D"], map[string]any{"w": 1})
				relate(t, s, alice, graph.RefersTo, ids["A"], ids["P"], nil)
				for _, ended := range [][2]string{{"C", "D"}, {"B", "A"}} {
					relate(t, s, alice, graph.RefersTo, ids[ended[0]], ids[ended[1]], map[string]any{"k": "old", "n": 1})
					if _, err := s.DeleteRelationship(t.Context(), alice, graph.RefersTo, ids[ended[0]], ids[ended[1]]); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := s.MergeEntities(t.Context(), alice, ids["Dup"], ids["D"], "same"); err != nil {
					t.Fatal(err)
				}
				return s, ids
			}
			// The caller may not read people: P is as missing to it.
			caller := alice
			caller.Allowed = func(_ knowledge.Action, r string) bool { return r != knowledge.EntityResource("person") }
			batchSvc, ids := seed(t)
			singleSvc, _ := seed(t)
			req := func(typ, from, to string, meta map[string]any) knowledge.RelationshipRequest {
				return knowledge.RelationshipRequest{Type: typ, SourceEntityID: ids[from], TargetEntityID: ids[to], Metadata: meta}
			}
			reqs := []knowledge.RelationshipRequest{
				req(graph.PartOf, "A", "B", map[string]any{"role": "division"}),                // existed: another observation
				req(graph.PartOf, "B", "C", nil),                                               // new
				req(graph.PartOf, "B", "C", map[string]any{"note": "again"}),                   // made earlier in this batch
				req(graph.PartOf, "C", "A", nil),                                               // closes A → B → C → A
				req(graph.DependsOn, "C", "C", nil),                                            // self-loop
				req("LIKES", "A", "B", nil),                                                    // unknown type
				req("not a type!", "A", "B", nil),                                              // malformed type
				req(graph.RefersTo, "A", "nope", nil),                                          // missing
				req(graph.RefersTo, "A", "bob", nil),                                           // another user's
				req(graph.RefersTo, "Dup", "A", nil),                                           // merged: lands on D
				req(graph.RefersTo, "A", "C", map[string]any{"big": strings.Repeat("x", 100)}), // over the field bound
				req(graph.RefersTo, "", "C", nil),                                              // empty id
				req(graph.RefersTo, "A", "C", nil),                                             // fine after the failures
				req(graph.RefersTo, "A", "C", nil),                                             // the same again: existing, no second observation
				// From here on, mostly the set-based path (types that are
				// not acyclic), mixed with acyclic ones.
				req(graph.RefersTo, "A", "D", map[string]any{"w": 1}),                       // existed with this very observation
				req(graph.RefersTo, "A", "D", map[string]any{"w": 2}),                       // existed: another observation
				req(graph.RefersTo, "C", "D", map[string]any{"k": "new", "n": 3}),           // ended: renewed
				req(graph.DependsOn, "A", "C", nil),                                         // acyclic, new
				req(graph.RefersTo, "C", "D", map[string]any{"n": 4}),                       // renewed earlier in this batch
				req(graph.RefersTo, "B", "C", map[string]any{"n": 5}),                       // new, with a number
				req(graph.RefersTo, "B", "C", map[string]any{"n": 5}),                       // the same again: no second observation
				req(graph.DependsOn, "C", "A", nil),                                         // closes A → C → A within the batch
				req(graph.RefersTo, "B", "C", map[string]any{"n": 6.5, "x": []any{1, "y"}}), // again, other metadata
				req(graph.RefersTo, "A", "P", nil),                                          // exists, but P is unreadable
				req(graph.Settles, "P", "A", nil),                                           // unreadable source
				req(graph.RefersTo, "A", "A", map[string]any{"self": true}),                 // a self-loop of a type that allows it
				req(graph.RefersTo, "Dup", "C", map[string]any{"via": "dup"}),               // merged: lands on D → C
				req(graph.RefersTo, "D", "C", map[string]any{"via": "D"}),                   // the same edge, named directly
				req(graph.RefersTo, "B", "A", nil),                                          // ended: renewed, no metadata
				req(graph.RefersTo, "C", "nope", nil),                                       // missing
				req(graph.Settles, "A", "B", map[string]any{"n": 7}),                        // new
			}
			reqs[len(reqs)-2].TargetEntityID = "ent_nope"
			reqs[7].TargetEntityID = "ent_nope"
			got, err := batchSvc.CreateRelationships(t.Context(), caller, reqs)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(reqs) {
				t.Fatalf("%d results for %d requests", len(got), len(reqs))
			}
			for i, r := range reqs {
				rel, created, err := singleSvc.CreateRelationship(t.Context(), caller, r)
				want := knowledge.RelationshipResult{Relationship: rel, Created: created, Err: err}
				if diff := cmp.Diff(outcome(want), outcome(got[i])); diff != "" {
					t.Errorf("request %d (%s %s → %s): batch differs from one by one (-one by one +batch):\n%s", i, r.Type, r.SourceEntityID, r.TargetEntityID, diff)
				}
			}
			// Spot checks, so that the oracle cannot agree on nonsense.
			var cycle *graph.CycleError
			if !errors.As(got[3].Err, &cycle) || !cmp.Equal(cycle.Cycle(), []string{ids["C"], ids["A"], ids["B"], ids["C"]}) {
				t.Errorf("C PART_OF A: %v, want the cycle C → A → B → C through the batch's own B → C", got[3].Err)
			}
			if got[0].Created || !got[1].Created || got[2].Created || got[2].Relationship.ID != got[1].Relationship.ID {
				t.Errorf("created = %v %v %v, want existing, created, existing (same id)", got[0].Created, got[1].Created, got[2].Created)
			}
			if got[9].Relationship.SourceEntityID != ids["D"] || !got[12].Created {
				t.Errorf("merged source landed on %s (want D %s); last request created = %v", got[9].Relationship.SourceEntityID, ids["D"], got[12].Created)
			}
			if !got[16].Created || got[18].Created || got[20].Created || got[26].Relationship.SourceEntityID != ids["D"] || !got[28].Created {
				t.Errorf("created = renewal %v, renewed again %v, same observation again %v; merged source on %s (want D); renewal without metadata %v",
					got[16].Created, got[18].Created, got[20].Created, got[26].Relationship.SourceEntityID, got[28].Created)
			}
			if !errors.As(got[21].Err, &cycle) {
				t.Errorf("C DEPENDS_ON A: %v, want a cycle through the batch's own A → C", got[21].Err)
			}
			if n := got[20].Relationship.ObservationCount; n != 1 {
				t.Errorf("B REFERS_TO C with the same metadata twice: %d observations, want 1", n)
			}
			// Every relationship the batch made or found, as each store
			// now holds it, with its observations.
			type key struct{ typ, src, dst string }
			seen := map[key]bool{}
			for _, r := range got {
				k := key{r.Relationship.Type, r.Relationship.SourceEntityID, r.Relationship.TargetEntityID}
				if r.Err != nil || seen[k] {
					continue
				}
				seen[k] = true
				a, aobs, err := batchSvc.RelationshipSnapshot(t.Context(), alice, k.typ, k.src, k.dst)
				if err != nil {
					t.Fatal(err)
				}
				o, oobs, err := singleSvc.RelationshipSnapshot(t.Context(), alice, k.typ, k.src, k.dst)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(o, a); diff != "" {
					t.Errorf("%s %s → %s after the batch differs from one by one (-one by one +batch):\n%s", k.typ, k.src, k.dst, diff)
				}
				if diff := cmp.Diff(oobs, aobs); diff != "" {
					t.Errorf("observations of %s %s → %s differ (-one by one +batch):\n%s", k.typ, k.src, k.dst, diff)
				}
			}
			if len(seen) < 12 {
				t.Errorf("%d relationships compared, want at least 12", len(seen))
			}
		})
	}
}

// outcome is what a result says, comparable across services: the error's
// text without the single call's prefix.
func outcome(r knowledge.RelationshipResult) map[string]any {
	if r.Err != nil {
		return map[string]any{"err": strings.TrimPrefix(r.Err.Error(), "knowledge: create relationship: ")}
	}
	return map[string]any{"rel": r.Relationship, "created": r.Created}
}

func TestCreateRelationshipsBounds(t *testing.T) {
	s, _ := newService(t)
	for _, n := range []int{0, knowledge.MaxRelationshipsPerCall + 1} {
		_, err := s.CreateRelationships(t.Context(), alice, make([]knowledge.RelationshipRequest, n))
		if !errors.Is(err, knowledge.ErrValidation) {
			t.Errorf("%d requests: err = %v, want a validation error", n, err)
		}
	}
}

// TestCreateRelationshipsConcurrentCycle runs two batches at once, each
// with one half of a cycle: A PART_OF B and B PART_OF A. Whichever commits
// second must see the first's edge, so exactly one edge of each pair is
// created and the other is refused as a cycle, on every backend.
func TestCreateRelationshipsConcurrentCycle(t *testing.T) {
	for _, b := range knowledge.GraphBackends {
		t.Run(b.Name, func(t *testing.T) {
			s := knowledge.NewService(b.Open(t), schema.NewRegistry(), knowledge.Options{})
			const pairs = 20
			var fwd, back []knowledge.RelationshipRequest
			for i := range pairs {
				a, c := company(t, s, alice, fmt.Sprint("A", i)), company(t, s, alice, fmt.Sprint("B", i))
				fwd = append(fwd, knowledge.RelationshipRequest{Type: graph.PartOf, SourceEntityID: a, TargetEntityID: c})
				back = append(back, knowledge.RelationshipRequest{Type: graph.PartOf, SourceEntityID: c, TargetEntityID: a})
			}
			var wg sync.WaitGroup
			results := make([][]knowledge.RelationshipResult, 2)
			errs := make([]error, 2)
			for i, reqs := range [][]knowledge.RelationshipRequest{fwd, back} {
				wg.Go(func() { results[i], errs[i] = s.CreateRelationships(t.Context(), alice, reqs) })
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			for i := range pairs {
				f, r := results[0][i], results[1][i]
				created := 0
				for _, x := range []knowledge.RelationshipResult{f, r} {
					switch {
					case x.Err == nil && x.Created:
						created++
					case !errors.Is(x.Err, graph.ErrCycle):
						t.Errorf("pair %d: %+v, want created or a cycle", i, x)
					}
				}
				if created != 1 {
					t.Errorf("pair %d: %d edges created (%v, %v), want exactly one", i, created, f.Err, r.Err)
				}
			}
		})
	}
}

// TestCycleErrorShowsOnlyAReadablePath: a refused edge's path is graph
// data, shown only to a caller that may read the graph and every entity on
// it; the edge is refused all the same.
func TestCycleErrorShowsOnlyAReadablePath(t *testing.T) {
	s, _ := newService(t)
	a, p, b := company(t, s, alice, "A"), store(t, s, alice, map[string]any{"entity_type": "person", "name": "P"}).Entities[0].EntityID, company(t, s, alice, "B")
	relate(t, s, alice, graph.PartOf, a, p, nil)
	relate(t, s, alice, graph.PartOf, p, b, nil)
	allow := func(deny ...string) knowledge.Caller {
		return knowledge.Caller{UserID: alice.UserID, Allowed: func(_ knowledge.Action, r string) bool {
			for _, d := range deny {
				if r == d {
					return false
				}
			}
			return true
		}}
	}
	for _, tc := range []struct {
		name     string
		c        knowledge.Caller
		wantPath []string
	}{
		{"reads everything", allow(), []string{b, a, p, b}},
		{"no graph read", allow(knowledge.ResourceGraph), nil},
		{"no person read", allow(knowledge.EntityResource("person")), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := knowledge.RelationshipRequest{Type: graph.PartOf, SourceEntityID: b, TargetEntityID: a}
			_, _, single := s.CreateRelationship(t.Context(), tc.c, req)
			res, err := s.CreateRelationships(t.Context(), tc.c, []knowledge.RelationshipRequest{req})
			if err != nil {
				t.Fatal(err)
			}
			for name, err := range map[string]error{"CreateRelationship": single, "CreateRelationships": res[0].Err} {
				var cycle *graph.CycleError
				if !errors.As(err, &cycle) {
					t.Fatalf("%s: err = %v, want a cycle", name, err)
				}
				if diff := cmp.Diff(tc.wantPath, cycle.Cycle()); diff != "" {
					t.Errorf("%s: path (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

// BenchmarkCreateRelationships writes 100 relationships among fresh
// companies, in one CreateRelationships call or in 100 CreateRelationship
// calls, on each graph backend (PostgreSQL with CAIRN_TEST_DATABASE_URL),
// of an acyclic type (PART_OF: every edge also pays the cycle check, one by
// one) and of one that is not (REFERS_TO: the batch's set-based path).
func BenchmarkCreateRelationships(b *testing.B) {
	for _, backend := range knowledge.GraphBackends {
		for _, batch := range []bool{true, false} {
			for _, typ := range []string{graph.PartOf, graph.RefersTo} {
				b.Run(fmt.Sprint(backend.Name, "/batch=", batch, "/type=", typ), func(b *testing.B) {
					benchmarkCreateRelationships(b, backend, batch, typ)
				})
			}
		}
	}
}

func benchmarkCreateRelationships(b *testing.B, backend knowledge.GraphBackend, batch bool, typ string) {
	s := knowledge.NewService(backend.Open(b), schema.NewRegistry(), knowledge.Options{})
	var ents []map[string]any
	for i := range 200 {
		ents = append(ents, map[string]any{"entity_type": "company", "name": fmt.Sprint("Co ", i)})
	}
	res, err := s.Store(b.Context(), alice, knowledge.StoreRequest{Entities: ents})
	if err != nil {
		b.Fatal(err)
	}
	round := 0
	for b.Loop() {
		reqs := make([]knowledge.RelationshipRequest, 100)
		for i := range reqs {
			// New edges for 100 rounds, then repeats.
			reqs[i] = knowledge.RelationshipRequest{Type: typ, SourceEntityID: res.Entities[i].EntityID,
				TargetEntityID: res.Entities[100+(i+round)%100].EntityID}
		}
		round++
		if batch {
			if _, err := s.CreateRelationships(b.Context(), alice, reqs); err != nil {
				b.Fatal(err)
			}
			continue
		}
		for _, r := range reqs {
			if _, _, err := s.CreateRelationship(b.Context(), alice, r); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "rels/s")
}
