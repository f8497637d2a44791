package knowledge

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// testSchema has one field per merge policy.
var testSchema = &schema.Schema{
	EntityType: "thing", Version: "1",
	Fields: map[string]schema.Field{
		"name":   {Type: schema.TypeString},
		"status": {Type: schema.TypeString, Policy: schema.HighestPriority},
		"notes":  {Type: schema.TypeString, Policy: schema.MostSpecific},
		"tags":   {Type: schema.TypeArray, Policy: schema.MergeArray},
		"amount": {Type: schema.TypeNumber, Policy: schema.HighestPriority},
	},
}

func obs(id string, at time.Time, prio int, spec float64, fields map[string]any) graph.Observation {
	return graph.Observation{ID: id, ObservedAt: at, SourcePriority: prio, SpecificityScore: spec, Fields: fields}
}

func TestReducePolicies(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		obs      []graph.Observation
		wantSnap map[string]any
		wantProv map[string]string
	}{
		{
			name: "last_write takes the latest observation",
			obs: []graph.Observation{
				obs("o1", t0, 100, 0.1, map[string]any{"name": "Acme"}),
				obs("o2", t0.Add(time.Hour), 50, 0.1, map[string]any{"name": "ACME Ltd"}),
			},
			wantSnap: map[string]any{"name": "ACME Ltd"},
			wantProv: map[string]string{"name": "o2"},
		},
		{
			name: "last_write ties on time go to the higher priority, then the lower id",
			obs: []graph.Observation{
				obs("o2", t0, 100, 0.1, map[string]any{"name": "B"}),
				obs("o1", t0, 100, 0.1, map[string]any{"name": "A"}),
				obs("o3", t0, 90, 0.1, map[string]any{"name": "C"}),
			},
			wantSnap: map[string]any{"name": "A"},
			wantProv: map[string]string{"name": "o1"},
		},
		{
			name: "highest_priority beats a later, lower-priority value",
			obs: []graph.Observation{
				obs("o1", t0, 200, 0.1, map[string]any{"status": "paid"}),
				obs("o2", t0.Add(time.Hour), 100, 0.1, map[string]any{"status": "sent"}),
			},
			wantSnap: map[string]any{"status": "paid"},
			wantProv: map[string]string{"status": "o1"},
		},
		{
			name: "most_specific takes the fullest observation",
			obs: []graph.Observation{
				obs("o1", t0, 100, 0.8, map[string]any{"notes": "long and detailed"}),
				obs("o2", t0.Add(time.Hour), 100, 0.2, map[string]any{"notes": "short"}),
			},
			wantSnap: map[string]any{"notes": "long and detailed"},
			wantProv: map[string]string{"notes": "o1"},
		},
		{
			name: "merge_array unions oldest first without duplicates",
			obs: []graph.Observation{
				obs("o2", t0.Add(time.Hour), 100, 0.1, map[string]any{"tags": []any{"b", "c"}}),
				obs("o1", t0, 100, 0.1, map[string]any{"tags": []any{"a", "b"}}),
			},
			wantSnap: map[string]any{"tags": []any{"a", "b", "c"}},
			wantProv: map[string]string{"tags": "o2"},
		},
		{
			name: "a correction beats a later extraction under every policy",
			obs: []graph.Observation{
				obs("c1", t0, CorrectionPriority, 0.05, map[string]any{"name": "Fixed", "status": "void", "tags": []any{"x"}}),
				obs("o9", t0.Add(time.Hour), MaxStorePriority, 1, map[string]any{"name": "Later", "status": "paid", "tags": []any{"y"}}),
			},
			wantSnap: map[string]any{"name": "Fixed", "status": "void", "tags": []any{"x"}},
			wantProv: map[string]string{"name": "c1", "status": "c1", "tags": "c1"},
		},
		{
			name: "the latest correction wins among corrections",
			obs: []graph.Observation{
				obs("c1", t0, CorrectionPriority, 0.1, map[string]any{"name": "First fix"}),
				obs("c2", t0.Add(time.Minute), CorrectionPriority, 0.1, map[string]any{"name": "Second fix"}),
			},
			wantSnap: map[string]any{"name": "Second fix"},
			wantProv: map[string]string{"name": "c2"},
		},
		{
			name: "null values are absent",
			obs: []graph.Observation{
				obs("o1", t0, 100, 0.1, map[string]any{"name": "Acme"}),
				obs("o2", t0.Add(time.Hour), 100, 0.1, map[string]any{"name": nil}),
			},
			wantSnap: map[string]any{"name": "Acme"},
			wantProv: map[string]string{"name": "o1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Reduce(testSchema, tt.obs)
			if diff := cmp.Diff(tt.wantSnap, got.Snapshot); diff != "" {
				t.Errorf("snapshot (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantProv, got.Provenance); diff != "" {
				t.Errorf("provenance (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReduceOrderIndependent is the reducer's determinism property: for
// random sets of observations (with ties on time, priority and specificity,
// corrections, and overlapping arrays), every permutation gives the same
// snapshot and provenance.
func TestReduceOrderIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	values := func(field string) any {
		switch field {
		case "tags":
			n := rng.IntN(3)
			out := make([]any, n)
			for i := range out {
				out[i] = fmt.Sprintf("t%d", rng.IntN(4))
			}
			return out
		case "amount":
			return json.Number(fmt.Sprint(rng.IntN(5)))
		default:
			return fmt.Sprintf("%s-%d", field, rng.IntN(4))
		}
	}
	fields := testSchema.FieldNames()
	for round := range 500 {
		n := 1 + rng.IntN(8)
		set := make([]graph.Observation, n)
		for i := range set {
			f := map[string]any{}
			for _, name := range fields {
				if rng.IntN(2) == 0 {
					f[name] = values(name)
				}
			}
			prio := []int{50, 100, 100, CorrectionPriority}[rng.IntN(4)]
			set[i] = obs(fmt.Sprintf("o%02d", i), t0.Add(time.Duration(rng.IntN(3))*time.Hour), prio, float64(rng.IntN(3))/2, f)
		}
		want := Reduce(testSchema, set)
		for range 10 {
			perm := make([]graph.Observation, n)
			for i, j := range rng.Perm(n) {
				perm[i] = set[j]
			}
			got := Reduce(testSchema, perm)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("round %d: a permutation changed the reduction (-first +permuted):\n%s", round, diff)
			}
		}
	}
}
