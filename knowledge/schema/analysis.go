package schema

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/cairnkg/cairn/graph"
)

// Thresholds of schema evolution (Neotoma v1, §2.7 and §3.18).
const (
	// DefaultCandidateFrequency and DefaultCandidateConfidence are
	// analyze_schema_candidates' defaults, and what a field's raw
	// fragments must reach for a pending recommendation to be stored.
	DefaultCandidateFrequency  = 5
	DefaultCandidateConfidence = 0.8
	// AutoEnhanceConsistency, AutoEnhanceSources and
	// AutoEnhanceOccurrences are what a field must reach to be promoted by
	// auto-enhancement.
	AutoEnhanceConsistency = 0.95
	AutoEnhanceSources     = 2
	AutoEnhanceOccurrences = 3
	// maxSampleValues bounds a candidate's sample values.
	maxSampleValues = 10
)

// CandidateField is what the raw fragments say about one field no schema
// names.
type CandidateField struct {
	Name string
	// Type is the most frequent type among its values (ties: string,
	// number, date, boolean, array, object).
	Type FieldType
	// Frequency counts its fragments; Sources the sources they came from.
	Frequency int
	Sources   int
	// TypeConsistency is the share of its values of Type.
	TypeConsistency float64
	// Confidence is TypeConsistency, scaled down while the field has been
	// seen fewer than AutoEnhanceOccurrences times or from fewer than
	// AutoEnhanceSources sources: min(1, frequency/3) × min(1, sources/2)
	// × type consistency.
	Confidence float64
	// SampleValues are up to 10 distinct values, in the order of their
	// JSON text.
	SampleValues []any
	// NamingPatternMatch says the name is snake_case, as schema fields are.
	NamingPatternMatch bool
}

// Meets reports whether the field reaches a minimum frequency and a
// minimum confidence.
func (f CandidateField) Meets(minFrequency int, minConfidence float64) bool {
	return f.Frequency >= minFrequency && f.Confidence >= minConfidence
}

// Promotable reports whether the field reaches the auto-enhancement
// thresholds (AutoEnhanceConsistency, AutoEnhanceSources and
// AutoEnhanceOccurrences).
func (f CandidateField) Promotable() bool {
	return f.TypeConsistency >= AutoEnhanceConsistency && f.Sources >= AutoEnhanceSources && f.Frequency >= AutoEnhanceOccurrences
}

// TypeCandidates are the candidate fields of one entity type.
type TypeCandidates struct {
	EntityType      string
	Fields          []CandidateField
	ConfidenceScore float64
	Reasoning       string
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// Summarise returns the candidates' confidence score (the mean of their
// fields' confidences) and the reasoning that explains them.
func (tc TypeCandidates) Summarise() (float64, string) {
	sum := 0.0
	names := make([]string, len(tc.Fields))
	for i, f := range tc.Fields {
		sum += f.Confidence
		names[i] = fmt.Sprintf("%s (%s, %d times from %d sources, %.0f%% consistent)", f.Name, f.Type, f.Frequency, f.Sources, f.TypeConsistency*100)
	}
	return roundScore(sum / float64(len(tc.Fields))),
		fmt.Sprintf("raw fragments of %s carry fields its schema does not name: %s", tc.EntityType, strings.Join(names, "; "))
}

// Candidates computes every candidate field of raw fragments (the ones a
// caller may read), without thresholds, by type: the fields the type's
// schema in set does not name. It is deterministic: the same fragments
// give the same answer, in any order.
func Candidates(set *Set, frags []graph.RawFragment) []TypeCandidates {
	type stat struct {
		n       int
		sources map[string]bool
		types   map[FieldType]int
		samples map[string]any
	}
	stats := map[string]map[string]*stat{}
	for _, f := range frags {
		if sc, ok := set.Lookup(f.EntityType); ok {
			if _, known := sc.Fields[f.Field]; known {
				continue
			}
		}
		byField := stats[f.EntityType]
		if byField == nil {
			byField = map[string]*stat{}
			stats[f.EntityType] = byField
		}
		st := byField[f.Field]
		if st == nil {
			st = &stat{sources: map[string]bool{}, types: map[FieldType]int{}, samples: map[string]any{}}
			byField[f.Field] = st
		}
		st.n++
		st.sources[f.SourceID] = true
		st.types[ValueType(f.Value)]++
		if b, err := canonicalJSON(f.Value); err == nil {
			st.samples[string(b)] = f.Value
		}
	}
	var out []TypeCandidates
	for _, t := range slices.Sorted(maps.Keys(stats)) {
		tc := TypeCandidates{EntityType: t}
		for _, name := range slices.Sorted(maps.Keys(stats[t])) {
			st := stats[t][name]
			best := TypeString
			for _, ft := range fieldTypes {
				if st.types[ft] > st.types[best] {
					best = ft
				}
			}
			consistency := float64(st.types[best]) / float64(st.n)
			conf := consistency * math.Min(1, float64(st.n)/AutoEnhanceOccurrences) * math.Min(1, float64(len(st.sources))/AutoEnhanceSources)
			keys := slices.Sorted(maps.Keys(st.samples))
			if len(keys) > maxSampleValues {
				keys = keys[:maxSampleValues]
			}
			samples := make([]any, len(keys))
			for i, k := range keys {
				samples[i] = st.samples[k]
			}
			tc.Fields = append(tc.Fields, CandidateField{
				Name: name, Type: best, Frequency: st.n, Sources: len(st.sources), TypeConsistency: roundScore(consistency),
				Confidence: roundScore(conf), SampleValues: samples, NamingPatternMatch: snakeCase.MatchString(name),
			})
		}
		out = append(out, tc)
	}
	return out
}
