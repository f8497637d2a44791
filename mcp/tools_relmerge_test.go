package mcp_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/graph"
	graphneo4j "github.com/cairnkg/cairn/graph/neo4j"
	"github.com/cairnkg/cairn/graph/neo4j/neo4jtest"
	"github.com/cairnkg/cairn/vector"
)

// relMergeWorld is the graph TestRelationshipRetractionAcrossMerge
// builds: a and b are the same person twice, c a company; b WORKS_AT c
// (intern, desk 5), then a WORKS_AT c (clerk, then manager since 2020
// with a marker). The merge is a into b, which has the same relationship
// already.
type relMergeWorld struct {
	e       *env
	a, b, c string
	marker  string
	// obs and src are each create's observation of a→c (b→c for intern)
	// and source, by role.
	obs, src map[string]string
}

func newRelMergeWorld(t *testing.T, b storeBackend, holds *func(*testing.T, *env, string) bool) *relMergeWorld {
	t.Helper()
	e := newEnvWith(t, envOptions{backend: &b, contextStores: true})
	w := &relMergeWorld{e: e, obs: map[string]string{}, src: map[string]string{},
		marker: "zqr" + strings.TrimPrefix(vector.NewID(), "mem_")[:12] + "q"}
	w.a = storeOne(t, e, map[string]any{"entity_type": "person", "name": "Ann Lee"})
	w.b = storeOne(t, e, map[string]any{"entity_type": "person", "name": "Ann B. Lee"})
	w.c = storeOne(t, e, map[string]any{"entity_type": "company", "name": "Acme Tools"})
	for _, r := range []struct {
		from string
		meta map[string]any
	}{
		{w.b, map[string]any{"role": "intern", "desk": 5}},
		{w.a, map[string]any{"role": "clerk"}},
		{w.a, map[string]any{"role": "manager", "since": 2020, "note": "promoted " + w.marker}},
	} {
		e.mustCall(t, "create_relationship", map[string]any{"relationship_type": "WORKS_AT", "source_entity_id": r.from, "target_entity_id": w.c, "metadata": r.meta})
	}
	for _, from := range []string{w.a, w.b} {
		for _, o := range w.snapshot(t, from)["observations"].([]any) {
			o := o.(map[string]any)
			role := o["metadata"].(map[string]any)["role"].(string)
			w.obs[role], w.src[role] = o["id"].(string), o["source_id"].(string)
		}
	}
	if len(w.obs) != 3 {
		t.Fatalf("observations %v", w.obs)
	}
	if !(*holds)(t, e, w.marker) {
		t.Fatal("the store does not hold the marker: the check after the erasure could not fail")
	}
	return w
}

// snapshot is get_relationship_snapshot of from WORKS_AT c.
func (w *relMergeWorld) snapshot(t *testing.T, from string) map[string]any {
	t.Helper()
	return w.e.mustCall(t, "get_relationship_snapshot", map[string]any{"relationship_type": "WORKS_AT", "source_entity_id": from, "target_entity_id": w.c})
}

func (w *relMergeWorld) merge(t *testing.T) {
	t.Helper()
	out := w.e.mustCall(t, "merge_entities", map[string]any{"from_entity_id": w.a, "to_entity_id": w.b})
	if out["relationships_moved"] != 1.0 {
		t.Fatalf("merge answered %v", out)
	}
}

// retract retracts (or undoes) role's observation, through the relationship
// it was created on (a→c: before a merge the live one, after it the ended
// one), or through its copy on b→c.
func (w *relMergeWorld) retract(t *testing.T, role string, copied, undo bool) {
	t.Helper()
	rel, id := w.snapshot(t, w.a)["snapshot"].(map[string]any)["id"].(string), w.obs[role]
	if copied {
		s := w.snapshot(t, w.b)
		rel, id = s["snapshot"].(map[string]any)["id"].(string), ""
		for _, o := range s["observations"].([]any) {
			if o := o.(map[string]any); o["source_id"] == w.src[role] {
				id = o["id"].(string)
			}
		}
		if id == "" || id == w.obs[role] {
			t.Fatalf("no copy of %s's observation on b→c: %v", role, s["observations"])
		}
	}
	out := w.e.mustCall(t, "retract", map[string]any{"relationship_id": rel, "relationship_observation_ids": []string{id}, "undo": undo, "reason": "never promoted"})
	if len(out["observation_ids"].([]any)) == 0 {
		t.Fatalf("retract answered %v", out)
	}
}

func (w *relMergeWorld) retractSource(t *testing.T, role string, undo bool) {
	t.Helper()
	out := w.e.mustCall(t, "retract", map[string]any{"source_id": w.src[role], "undo": undo})
	if len(out["relationships"].([]any)) == 0 {
		t.Fatalf("retracting the source answered %v", out)
	}
}

func (w *relMergeWorld) eraseSource(t *testing.T, role string) {
	t.Helper()
	w.e.mustCall(t, "erase", map[string]any{"kind": "source", "ids": []string{w.src[role]}})
}

// relMergeOutcome is what a scenario leaves on the live b→c: its metadata,
// each field's observation named by the role of the create it came from
// (a copy keeps its source), how many observations count, and the roles
// of those it holds.
type relMergeOutcome struct {
	Metadata     map[string]any
	Provenance   map[string]string
	Count        float64
	Observations []string
}

func (w *relMergeWorld) outcome(t *testing.T) relMergeOutcome {
	t.Helper()
	s := w.snapshot(t, w.b)
	snap := s["snapshot"].(map[string]any)
	if snap["ended_at"] != nil && snap["ended_at"] != "" {
		t.Fatalf("b→c ended: %v", snap)
	}
	role := map[string]string{}
	for r, src := range w.src {
		role[src] = r
	}
	sourceOf := map[string]string{}
	out := relMergeOutcome{Metadata: snap["snapshot"].(map[string]any), Provenance: map[string]string{}, Count: snap["observation_count"].(float64), Observations: []string{}}
	for _, o := range s["observations"].([]any) {
		o := o.(map[string]any)
		sourceOf[o["id"].(string)] = o["source_id"].(string)
		out.Observations = append(out.Observations, role[o["source_id"].(string)])
	}
	slices.Sort(out.Observations)
	for f, id := range snap["provenance"].(map[string]any) {
		out.Provenance[f] = role[sourceOf[id.(string)]]
	}
	return out
}

// TestRelationshipRetractionAcrossMerge (issue 37): a merge carries a
// relationship's observations to the target, so that retracting one of
// them, or its source, holds in whichever order the merge and the
// retraction (or its undo) come, whether the retraction names the old
// relationship or the moved one; an edge the target already has combines
// with the moved one as their observations say (each keeps its own time);
// a source that observes the moved relationship twice loses only the
// observation retracted; and erasing a source after the merge leaves nothing of it on the moved
// relationship, nor anywhere in the store.
func TestRelationshipRetractionAcrossMerge(t *testing.T) {
	var n4j *neo4jtest.Server
	split := storeBackend{"Neo4j", func(t testing.TB) backendStores {
		n4j = neo4jtest.Take(t)
		return onPostgres(t, func(*postgres.DB) graph.Driver { return graphneo4j.New(n4j.Driver, n4j.Config.Database) })
	}}
	holds := func(t *testing.T, e *env, marker string) bool {
		t.Helper()
		return holdsMarker(t, e, marker) || n4j != nil && neo4jHolds(t, n4j, marker)
	}
	// Every field from the newest observation that counts: manager (a→c,
	// newest) over clerk (a→c) over intern (b→c, oldest).
	all := relMergeOutcome{
		Metadata:   map[string]any{"role": "manager", "since": 2020.0, "desk": 5.0, "note": "promoted <marker>"},
		Provenance: map[string]string{"role": "manager", "since": "manager", "desk": "intern", "note": "manager"},
		Count:      3, Observations: []string{"clerk", "intern", "manager"},
	}
	withoutManager := relMergeOutcome{
		Metadata:   map[string]any{"role": "clerk", "desk": 5.0},
		Provenance: map[string]string{"role": "clerk", "desk": "intern"},
		Count:      2, Observations: []string{"clerk", "intern", "manager"},
	}
	erased := withoutManager
	erased.Observations = []string{"clerk", "intern"}
	scenarios := []struct {
		name string
		run  func(t *testing.T, w *relMergeWorld)
		want relMergeOutcome
	}{
		{"merge", func(t *testing.T, w *relMergeWorld) { w.merge(t) }, all},
		{"retract then merge", func(t *testing.T, w *relMergeWorld) {
			w.retract(t, "manager", false, false)
			w.merge(t)
		}, withoutManager},
		{"merge then retract the old relationship's", func(t *testing.T, w *relMergeWorld) {
			w.merge(t)
			w.retract(t, "manager", false, false)
		}, withoutManager},
		{"merge then retract the copy", func(t *testing.T, w *relMergeWorld) {
			w.merge(t)
			w.retract(t, "manager", true, false)
		}, withoutManager},
		{"retract, merge, undo", func(t *testing.T, w *relMergeWorld) {
			w.retract(t, "manager", false, false)
			w.merge(t)
			w.retract(t, "manager", false, true)
		}, all},
		{"retract, merge, undo through the copy", func(t *testing.T, w *relMergeWorld) {
			w.retract(t, "manager", false, false)
			w.merge(t)
			w.retract(t, "manager", true, true)
		}, all},
		{"merge, retract, undo", func(t *testing.T, w *relMergeWorld) {
			w.merge(t)
			w.retract(t, "manager", true, false)
			w.retract(t, "manager", false, true)
		}, all},
		{"retract the source then merge", func(t *testing.T, w *relMergeWorld) {
			w.retractSource(t, "manager", false)
			w.merge(t)
		}, withoutManager},
		{"merge then retract the source", func(t *testing.T, w *relMergeWorld) {
			w.merge(t)
			w.retractSource(t, "manager", false)
		}, withoutManager},
		{"merge, retract the source, undo", func(t *testing.T, w *relMergeWorld) {
			w.merge(t)
			w.retractSource(t, "manager", false)
			w.retractSource(t, "manager", true)
		}, all},
		{"merge, the same request again, retract it", func(t *testing.T, w *relMergeWorld) {
			// a→c as b→c was created lands on b→c after the merge: the
			// same content, so the same source as intern's, which now
			// observes b→c twice. Retracting the new observation leaves
			// the first counting: a retraction takes out an observation
			// and the copies merges made of it, not whatever else its
			// source said.
			w.merge(t)
			w.e.mustCall(t, "create_relationship", map[string]any{"relationship_type": "WORKS_AT", "source_entity_id": w.a, "target_entity_id": w.c,
				"metadata": map[string]any{"role": "intern", "desk": 5}})
			s := w.snapshot(t, w.b)
			again := ""
			for _, o := range s["observations"].([]any) {
				if o := o.(map[string]any); o["source_id"] == w.src["intern"] && o["id"] != w.obs["intern"] {
					again = o["id"].(string)
				}
			}
			if again == "" || s["snapshot"].(map[string]any)["snapshot"].(map[string]any)["role"] != "intern" {
				t.Fatalf("the same request after the merge: %v", s)
			}
			out := w.e.mustCall(t, "retract", map[string]any{"relationship_id": s["snapshot"].(map[string]any)["id"], "relationship_observation_ids": []string{again}})
			if ids := out["observation_ids"].([]any); len(ids) != 1 || ids[0] != again {
				t.Errorf("retract answered %v, want only %s", out, again)
			}
		}, relMergeOutcome{Metadata: all.Metadata, Provenance: all.Provenance, Count: 3, Observations: []string{"clerk", "intern", "intern", "manager"}}},
		{"erase the source then merge", func(t *testing.T, w *relMergeWorld) {
			w.eraseSource(t, "manager")
			w.merge(t)
		}, erased},
		{"merge then erase the source", func(t *testing.T, w *relMergeWorld) {
			w.merge(t)
			w.eraseSource(t, "manager")
		}, erased},
	}
	for _, b := range []storeBackend{embeddedBackend, postgresBackend, split} {
		t.Run(b.name, func(t *testing.T) {
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) {
					n4j = nil
					w := newRelMergeWorld(t, b, &holds)
					sc.run(t, w)
					want := sc.want
					if _, ok := want.Metadata["note"]; ok {
						want.Metadata = maps.Clone(want.Metadata)
						want.Metadata["note"] = "promoted " + w.marker
					}
					if diff := cmp.Diff(want, w.outcome(t)); diff != "" {
						t.Errorf("b→c (-want +got):\n%s", diff)
					}
					if slices.Equal(sc.want.Observations, erased.Observations) && holds(t, w.e, w.marker) {
						t.Error("the store still holds the erased source's marker")
					}
				})
			}
		})
	}
}
