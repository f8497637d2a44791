package knowledge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge/schema"
)

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
	Recommendations []schema.TypeCandidates
	TotalEntityTypes,
	TotalFields int
	MinFrequency  int
	MinConfidence float64
}

// AnalyzeSchemaCandidates reads the caller's raw fragments (of the types it
// may read) and returns, per type, the fields its schema does not name that
// reach the thresholds. It is deterministic: the same fragments give the
// same answer, in any order of their storing.
func (s *Service) AnalyzeSchemaCandidates(ctx context.Context, c Caller, req AnalyzeRequest) (Analysis, error) {
	minFreq := cmp.Or(req.MinFrequency, schema.DefaultCandidateFrequency)
	minConf := schema.DefaultCandidateConfidence
	if req.MinConfidence != nil {
		minConf = *req.MinConfidence
	}
	typ := ""
	if req.EntityType != "" {
		typ = schema.NormalizeTypeName(req.EntityType)
	}
	all, err := s.candidates(ctx, c, typ)
	if err != nil {
		return Analysis{}, err
	}
	out := Analysis{MinFrequency: minFreq, MinConfidence: minConf, Recommendations: []schema.TypeCandidates{}}
	for _, tc := range all {
		tc.Fields = slices.DeleteFunc(tc.Fields, func(f schema.CandidateField) bool { return !f.Meets(minFreq, minConf) })
		if len(tc.Fields) == 0 {
			continue
		}
		tc.ConfidenceScore, tc.Reasoning = tc.Summarise()
		out.Recommendations = append(out.Recommendations, tc)
		out.TotalFields += len(tc.Fields)
	}
	out.TotalEntityTypes = len(out.Recommendations)
	return out, nil
}

// candidates computes every candidate field of the caller's raw fragments
// (of one type, or of all when typ is empty, and of the types it may
// read), without thresholds, by type (see schema.Candidates).
func (s *Service) candidates(ctx context.Context, c Caller, typ string) ([]schema.TypeCandidates, error) {
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
	frags = slices.DeleteFunc(frags, func(f graph.RawFragment) bool { return !c.readable(f.EntityType) })
	return schema.Candidates(set, frags), nil
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
	on, err := s.schemas.Store().AutoEnhance(ctx, c.UserID)
	if err != nil {
		return err
	}
	all, err := s.candidates(ctx, c, typ)
	if err != nil || len(all) == 0 {
		return err
	}
	now := s.clock()
	var recs []schema.Recommendation
	var promote []schema.CandidateField
	for _, f := range all[0].Fields {
		auto := on && f.Promotable()
		if !auto && !f.Meets(schema.DefaultCandidateFrequency, schema.DefaultCandidateConfidence) {
			continue
		}
		tc := schema.TypeCandidates{EntityType: typ, Fields: []schema.CandidateField{f}}
		conf, reason := tc.Summarise()
		recs = append(recs, schema.Recommendation{
			ID: schema.RecommendationID(c.UserID, typ, schema.RecommendationFromRawFragments, f.Name), UserID: c.UserID, EntityType: typ,
			Fields: []schema.RecommendedField{{Name: f.Name, Type: f.Type}}, Source: schema.RecommendationFromRawFragments,
			Confidence: conf, Reasoning: reason, Status: schema.RecommendationPending, CreatedAt: now, UpdatedAt: now,
		})
		if auto {
			promote = append(promote, f)
		}
	}
	if len(recs) > 0 {
		if err := s.schemas.Store().PutRecommendations(ctx, recs); err != nil {
			return err
		}
	}
	for _, f := range promote {
		_, err := s.UpdateSchemaIncremental(ctx, c, SchemaUpdateRequest{
			EntityType: typ, Fields: []NewField{{Name: f.Name, Type: f.Type}}, Activate: true, MigrateExisting: true, By: byAutoEnhancement,
		})
		if errors.Is(err, schema.ErrExists) {
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
func (s *Service) SchemaRecommendations(ctx context.Context, c Caller, entityType, source string, status schema.RecommendationStatus) ([]schema.Recommendation, error) {
	recs, err := s.schemas.Store().Recommendations(ctx, c.UserID, schema.NormalizeTypeName(entityType))
	if err != nil {
		return nil, err
	}
	if status == "" {
		status = schema.RecommendationPending
	}
	out := []schema.Recommendation{}
	if !c.readable(schema.NormalizeTypeName(entityType)) {
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
	return s.schemas.Store().SetAutoEnhance(ctx, userID, on)
}
