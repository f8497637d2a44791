package knowledge

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// Source priorities. Extractions default to DefaultSourcePriority and may
// use 0..MaxStorePriority; only corrections carry CorrectionPriority, so a
// correction beats every extraction, earlier or later.
const (
	DefaultSourcePriority = 100
	MaxStorePriority      = 999
	CorrectionPriority    = 1000
)

// Reduction is the reducer's output: an entity's snapshot and, for each
// field, the observation whose value it holds.
type Reduction struct {
	Snapshot          map[string]any
	Provenance        map[string]string
	ObservationCount  int
	LastObservationAt time.Time
}

// Reduce computes a snapshot from observations under a schema's merge
// policies. It is a pure function of the set of observations: any order of
// the same observations gives the same snapshot and provenance, because every
// choice between observations is made by a total order (see better) that
// ends in the observation id.
//
// Per field, corrections (priority ≥ CorrectionPriority) beat everything
// else; among the rest the field's policy decides:
//
//   - last_write: latest observed_at, then highest priority, then lowest id;
//   - highest_priority: highest priority, then latest observed_at, then id;
//   - most_specific: highest specificity score, then latest, then priority, then id;
//   - merge_array: the union of every observation's array, elements in the
//     order first seen (oldest observation first), duplicates dropped; the
//     provenance is the newest contributing observation.
//
// Null values are absent values. Fields outside the schema merge as
// last_write.
func Reduce(s *schema.Schema, obs []graph.Observation) Reduction {
	r := Reduction{Snapshot: map[string]any{}, Provenance: map[string]string{}, ObservationCount: len(obs)}
	byField := map[string][]*graph.Observation{}
	for i := range obs {
		o := &obs[i]
		if o.ObservedAt.After(r.LastObservationAt) {
			r.LastObservationAt = o.ObservedAt
		}
		for name, v := range o.Fields {
			if v != nil {
				byField[name] = append(byField[name], o)
			}
		}
	}
	for name, cands := range byField {
		policy := schema.LastWrite
		if f, ok := s.Fields[name]; ok {
			policy = f.EffectivePolicy()
		}
		slices.SortFunc(cands, func(a, b *graph.Observation) int { return better(policy, a, b) })
		best := cands[0]
		if policy == schema.MergeArray && !isCorrection(best) {
			r.Snapshot[name], r.Provenance[name] = unionArrays(name, cands)
			continue
		}
		r.Snapshot[name] = best.Fields[name]
		r.Provenance[name] = best.ID
	}
	return r
}

func isCorrection(o *graph.Observation) bool { return o.SourcePriority >= CorrectionPriority }

// better orders observations best first for a policy; it is a total order.
func better(policy schema.MergePolicy, a, b *graph.Observation) int {
	if c := cmp.Compare(boolRank(isCorrection(b)), boolRank(isCorrection(a))); c != 0 {
		return c
	}
	latest := b.ObservedAt.Compare(a.ObservedAt)
	prio := cmp.Compare(b.SourcePriority, a.SourcePriority)
	id := strings.Compare(a.ID, b.ID)
	switch policy {
	case schema.HighestPriority:
		return cmp.Or(prio, latest, id)
	case schema.MostSpecific:
		return cmp.Or(cmp.Compare(b.SpecificityScore, a.SpecificityScore), latest, prio, id)
	default:
		return cmp.Or(latest, prio, id)
	}
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// unionArrays merges a field's arrays across observations, oldest first.
func unionArrays(name string, cands []*graph.Observation) (any, string) {
	ordered := slices.Clone(cands)
	slices.SortFunc(ordered, func(a, b *graph.Observation) int {
		return cmp.Or(a.ObservedAt.Compare(b.ObservedAt), strings.Compare(a.ID, b.ID))
	})
	seen := map[string]bool{}
	out := []any{}
	prov := ""
	for _, o := range ordered {
		items, ok := o.Fields[name].([]any)
		if !ok {
			items = []any{o.Fields[name]}
		}
		for _, it := range items {
			key, err := canonicalJSON(it)
			if err != nil || seen[string(key)] {
				continue
			}
			seen[string(key)] = true
			out = append(out, it)
		}
		prov = o.ID
	}
	return out, prov
}

// specificity is the share of a schema's fields that an observation fills.
func specificity(s *schema.Schema, fields map[string]any) float64 {
	if len(s.Fields) == 0 {
		return 0
	}
	n := 0
	for name := range s.Fields {
		if v, ok := fields[name]; ok && v != nil {
			n++
		}
	}
	return float64(n) / float64(len(s.Fields))
}

// canonicalName picks an entity's display name from its snapshot: the first
// non-empty name field, else the identity values, else the id.
func canonicalName(s *schema.Schema, snapshot map[string]any, id string) string {
	for _, f := range s.NameFields {
		if t := strings.TrimSpace(schema.ValueText(snapshot[f])); t != "" {
			return t
		}
	}
	var parts []string
	for _, f := range s.IdentityFields {
		if t := strings.TrimSpace(schema.ValueText(snapshot[f])); t != "" {
			parts = append(parts, t)
		}
	}
	if len(parts) > 0 {
		return strings.Join(parts, " ")
	}
	return id
}
