package mcp

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// EntityTypesIn are the arguments of list_entity_types.
type EntityTypesIn struct {
	Keyword *string `json:"keyword,omitempty" jsonschema:"e.g. payment, email, date"`
}

// FieldSummaryOut describes one schema field.
type FieldSummaryOut struct {
	Type        string `json:"type" jsonschema:"string, number, date, boolean, array or object"`
	Required    bool   `json:"required"`
	MergePolicy string `json:"merge_policy" jsonschema:"last_write, highest_priority, most_specific or merge_array"`
	Description string `json:"description,omitempty"`
}

// EntityTypeOut describes one entity type.
type EntityTypeOut struct {
	EntityType      string                     `json:"entity_type"`
	SchemaVersion   string                     `json:"schema_version"`
	Description     string                     `json:"description"`
	FieldNames      []string                   `json:"field_names"`
	FieldSummary    map[string]FieldSummaryOut `json:"field_summary"`
	IdentityFields  []string                   `json:"identity_fields" jsonschema:"the fields whose normalised values determine the entity id"`
	SimilarityScore *float64                   `json:"similarity_score,omitempty" jsonschema:"0..1, present when a keyword was given"`
	MatchType       string                     `json:"match_type,omitempty" jsonschema:"keyword or vector, present when a keyword was given"`
}

// EntityTypesOut lists entity types.
type EntityTypesOut struct {
	EntityTypes  []EntityTypeOut `json:"entity_types"`
	Total        int             `json:"total"`
	Keyword      *string         `json:"keyword"`
	SearchMethod string          `json:"search_method" jsonschema:"all, keyword_exact or vector_semantic"`
}

func listEntityTypesTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:  "list_entity_types",
		title: "List entity types",
		description: "List entity types with their fields and merge policies; a keyword keeps those whose name, fields or " +
			"description match (or are close in meaning), best first. Call before store to choose entity_type.",
		toolset: ToolsetSchema, ann: readOnly, budget: BudgetSummary, requires: reads(consent.ResourceSchema),
		shape: func(s *jsonschema.Schema) { maxLen(prop(s, "keyword"), 256) },
	}, func(ctx context.Context, call *Call, in EntityTypesIn) (EntityTypesOut, error) {
		res, err := d.Knowledge.SearchEntityTypes(ctx, call.Caller(), deref(in.Keyword))
		if err != nil {
			return EntityTypesOut{}, err
		}
		out := EntityTypesOut{Keyword: in.Keyword, SearchMethod: res.Method, EntityTypes: []EntityTypeOut{}}
		if in.Keyword != nil && *in.Keyword == "" {
			out.Keyword = nil
		}
		for _, m := range res.Matches {
			t := entityTypeOut(m.Schema)
			if m.MatchType != "" {
				score := m.Score
				t.SimilarityScore, t.MatchType = &score, m.MatchType
			}
			out.EntityTypes = append(out.EntityTypes, t)
		}
		out.Total = len(out.EntityTypes)
		return out, nil
	})
}

func entityTypeOut(s *schema.Schema) EntityTypeOut {
	out := EntityTypeOut{
		EntityType: s.EntityType, SchemaVersion: s.Version, Description: s.Description,
		FieldNames: s.FieldNames(), FieldSummary: map[string]FieldSummaryOut{}, IdentityFields: s.IdentityFields,
	}
	for name, f := range s.Fields {
		policy := string(f.Policy)
		if policy == "" {
			policy = string(schema.LastWrite)
		}
		out.FieldSummary[name] = FieldSummaryOut{Type: string(f.Type), Required: f.Required, MergePolicy: policy, Description: f.Description}
	}
	return out
}
