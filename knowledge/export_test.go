package knowledge

// Test hooks for the external tests (package knowledge_test); see
// limits_internal_test.go.

// WithTestLimits gives s the context limits of the tests (a tenth of
// production's unless CAIRN_TEST_FULL_SCALE is set) and returns it.
func WithTestLimits(s *Service) *Service { return withTestLimits(s) }

// Scaled scales a count of entities chosen against production's context
// limits to the tests' limits.
func Scaled(n int) int { return scaled(n) }

// TopicCandidatesInTests is the tests' bound on the entities embedded for a
// topic (MaxTopicCandidates unless scaled down).
func TopicCandidatesInTests() int { return testLimits().topicCandidates }
