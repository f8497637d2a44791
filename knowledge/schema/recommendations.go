package schema

import "time"

// RecommendationStatus is where a schema recommendation stands.
type RecommendationStatus string

// Recommendation statuses.
const (
	RecommendationPending  RecommendationStatus = "pending"
	RecommendationApproved RecommendationStatus = "approved"
	RecommendationRejected RecommendationStatus = "rejected"
	// RecommendationApplied: approved and applied as a new schema version.
	RecommendationApplied RecommendationStatus = "applied"
	// RecommendationAutoApplied: applied by auto-enhancement.
	RecommendationAutoApplied RecommendationStatus = "auto_applied"
)

// Recommendation sources.
const (
	RecommendationFromRawFragments = "raw_fragments"
	RecommendationFromAgent        = "agent"
	RecommendationFromInference    = "inference"
)

// RecommendedField is one field a recommendation would add.
type RecommendedField struct {
	Name     string    `json:"field_name"`
	Type     FieldType `json:"field_type"`
	Required bool      `json:"required,omitempty"`
}

// Recommendation is a stored proposal to add fields to a user's schema of a
// type. Its id is determined by the user, the type, the source and the
// fields, so that analysing the same fragments again finds it again.
type Recommendation struct {
	ID         string
	UserID     string
	EntityType string
	Fields     []RecommendedField
	Source     string
	Confidence float64
	Reasoning  string
	Status     RecommendationStatus
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// RecommendationID is the id of the recommendation, from a source, to add
// one field to a user's schema of a type.
func RecommendationID(userID, entityType, source, field string) string {
	return hashID("rec_", userID, entityType, source, field)
}
