package knowledge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
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

// TypeCandidates are the candidate fields of one entity type.
type TypeCandidates struct {
	EntityType      string
	Fields          []CandidateField
	ConfidenceScore float64
	Reasoning       string
}

// AnalyzeRequest is analyze_schema_candidates' arguments.
type AnalyzeRequest struct {
	// EntityType limits the analysis to one type; empty analyses all.
	EntityType string
	// MinFrequency and MinConfidence filter the candidates; zero means
	// the defaults (5 and 0.8).
	MinFrequency  int
	MinConfidence *float64
}

// Analysis is analyze_schema_candidates' answer.
type Analysis struct {
	Recommendations []TypeCandidates
	TotalEntityTypes,
	TotalFields int
	MinFrequency  int
	MinConfidence float64
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// AnalyzeSchemaCandidates reads the caller's raw fragments (of the types it
// may read) and returns, per type, the fields its schema does not name that
// reach the thresholds. It is deterministic: the same fragments give the
// same answer, in any order of their storing.
func (s *Service) AnalyzeSchemaCandidates(ctx context.Context, c Caller, req AnalyzeRequest) (Analysis, error) {
	minFreq := cmp.Or(req.MinFrequency, DefaultCandidateFrequency)
	minConf := DefaultCandidateConfidence
	if req.MinConfidence != nil {
		minConf = *req.MinConfidence
	}
	typ := ""
	if req.EntityType != "" {
		typ = NormalizeTypeName(req.EntityType)
	}
	all, err := s.candidates(ctx, c, typ)
	if err != nil {
		return Analysis{}, err
	}
	out := Analysis{MinFrequency: minFreq, MinConfidence: minConf, Recommendations: []TypeCandidates{}}
	for _, tc := range all {
		tc.Fields = slices.DeleteFunc(tc.Fields, func(f CandidateField) bool { return f.Frequency < minFreq || f.Confidence < minConf })
		if len(tc.Fields) == 0 {
			continue
		}
		tc.ConfidenceScore, tc.Reasoning = summarise(tc)
		out.Recommendations = append(out.Recommendations, tc)
		out.TotalFields += len(tc.Fields)
	}
	out.TotalEntityTypes = len(out.Recommendations)
	return out, nil
}

func summarise(tc TypeCandidates) (float64, string) {
	sum := 0.0
	names := make([]string, len(tc.Fields))
	for i, f := range tc.Fields {
		sum += f.Confidence
		names[i] = fmt.Sprintf("%s (%s, %d times from %d sources, %.0f%% consistent)", f.Name, f.Type, f.Frequency, f.Sources, f.TypeConsistency*100)
	}
	return roundScore(sum / float64(len(tc.Fields))),
		fmt.Sprintf("raw fragments of %s carry fields its schema does not name: %s", tc.EntityType, strings.Join(names, "; "))
}

// candidates computes every candidate field of the caller's raw fragments
// (of one type, or of all when typ is empty), without thresholds, by type.
func (s *Service) candidates(ctx context.Context, c Caller, typ string) ([]TypeCandidates, error) {
	set, err := s.schemas.For(ctx, c.UserID)
	if err != nil {
		return nil, err
	}
	var frags []graph.RawFragment
	err = s.graph.View(ctx, func(tx *graph.Tx) error {
		var err error
		frags, err = tx.RawFragments(ctx, graph.RawFragmentQuery{UserID: c.UserID, EntityType: typ})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("knowledge: read raw fragments: %w", err)
	}
	type stat struct {
		n       int
		sources map[string]bool
		types   map[FieldType]int
		samples map[string]any
	}
	stats := map[string]map[string]*stat{}
	for _, f := range frags {
		if !c.readable(f.EntityType) {
			continue
		}
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
		st.types[valueType(f.Value)]++
		if b, err := canonicalJSON(f.Value); err == nil {
			st.samples[string(b)] = f.Value
		}
	}
	var out []TypeCandidates
	for _, t := range sortedKeys(stats) {
		tc := TypeCandidates{EntityType: t}
		for _, name := range sortedKeys(stats[t]) {
			st := stats[t][name]
			best := TypeString
			for _, ft := range fieldTypes {
				if st.types[ft] > st.types[best] {
					best = ft
				}
			}
			consistency := float64(st.types[best]) / float64(st.n)
			conf := consistency * math.Min(1, float64(st.n)/AutoEnhanceOccurrences) * math.Min(1, float64(len(st.sources))/AutoEnhanceSources)
			keys := sortedKeys(st.samples)
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
	return out, nil
}

// recommendationID is the id of the recommendation to add one field.
func recommendationID(userID, entityType, source, field string) string {
	return hashID("rec_", userID, entityType, source, field)
}

// autoEnhanceAfterStore runs after a store that kept raw fragments of
// types whose schema is the user's own (one that evolves from the data;
// global and built-in schemas change only by the operator or an explicit
// update, and analyze_schema_candidates reads their fragments on demand):
// for each such type of the call it stores a pending recommendation for
// every field whose fragments reach the candidate thresholds, and, when the
// user's auto-enhancement is on, promotes every field that reaches the
// auto-enhancement thresholds: one new version per field, in name order,
// with its fragments migrated, recorded as an auto_applied recommendation.
// Failures are logged, not returned: the store itself is committed.
func (s *Service) autoEnhanceAfterStore(ctx context.Context, c Caller, prepared []preparedEntity) {
	var types []string
	for _, pe := range prepared {
		if len(pe.unknown) > 0 && pe.schema.Owner == c.UserID && !slices.Contains(types, pe.schema.EntityType) {
			types = append(types, pe.schema.EntityType)
		}
	}
	slices.Sort(types)
	for _, t := range types {
		if err := s.enhanceType(ctx, c, t); err != nil {
			s.log.Warn("schema auto-enhancement", "user", c.UserID, "entity_type", t, "err", err)
		}
	}
}

func (s *Service) enhanceType(ctx context.Context, c Caller, typ string) error {
	on, err := s.schemas.store.AutoEnhance(ctx, c.UserID)
	if err != nil {
		return err
	}
	all, err := s.candidates(ctx, c, typ)
	if err != nil || len(all) == 0 {
		return err
	}
	now := s.clock()
	var recs []Recommendation
	var promote []CandidateField
	for _, f := range all[0].Fields {
		auto := on && f.TypeConsistency >= AutoEnhanceConsistency && f.Sources >= AutoEnhanceSources && f.Frequency >= AutoEnhanceOccurrences
		if !auto && (f.Frequency < DefaultCandidateFrequency || f.Confidence < DefaultCandidateConfidence) {
			continue
		}
		tc := TypeCandidates{EntityType: typ, Fields: []CandidateField{f}}
		conf, reason := summarise(tc)
		recs = append(recs, Recommendation{
			ID: recommendationID(c.UserID, typ, RecommendationFromRawFragments, f.Name), UserID: c.UserID, EntityType: typ,
			Fields: []RecommendedField{{Name: f.Name, Type: f.Type}}, Source: RecommendationFromRawFragments,
			Confidence: conf, Reasoning: reason, Status: RecommendationPending, CreatedAt: now, UpdatedAt: now,
		})
		if auto {
			promote = append(promote, f)
		}
	}
	if len(recs) > 0 {
		if err := s.schemas.store.PutRecommendations(ctx, recs); err != nil {
			return err
		}
	}
	for _, f := range promote {
		_, err := s.UpdateSchemaIncremental(ctx, c, SchemaUpdateRequest{
			EntityType: typ, Fields: []NewField{{Name: f.Name, Type: f.Type}}, Activate: true, MigrateExisting: true, By: byAutoEnhancement,
		})
		if errors.Is(err, ErrSchemaExists) {
			// Another process promoted a field at the same moment: the
			// next store tries again.
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// SchemaRecommendations returns the caller's stored recommendations for a
// type, filtered by source ("" or "all" for every source) and status (""
// for pending, "all" for every status); none for a type the caller may not
// read.
func (s *Service) SchemaRecommendations(ctx context.Context, c Caller, entityType, source string, status RecommendationStatus) ([]Recommendation, error) {
	recs, err := s.schemas.store.Recommendations(ctx, c.UserID, NormalizeTypeName(entityType))
	if err != nil {
		return nil, err
	}
	if status == "" {
		status = RecommendationPending
	}
	out := []Recommendation{}
	if !c.readable(NormalizeTypeName(entityType)) {
		return out, nil
	}
	for _, r := range recs {
		if (source == "" || source == "all" || r.Source == source) && (status == "all" || r.Status == status) {
			out = append(out, r)
		}
	}
	return out, nil
}

// SetAutoEnhance switches the caller's auto-enhancement.
func (s *Service) SetAutoEnhance(ctx context.Context, userID string, on bool) error {
	return s.schemas.store.SetAutoEnhance(ctx, userID, on)
}
