package knowledge

import "os"

// The equivalence and scale tests of context loading must cross its
// bounds (contextLimits): more candidates than are embedded for a topic,
// more than twice as many (where the keyword scan stops), a keyword scan
// of several reads. At production's bounds that takes thousands of
// entities and seconds a load under the race detector. By default these
// tests give their Service a tenth of production's bounds and build a
// tenth of the entities, which crosses the same bounds through the same
// code; CAIRN_TEST_FULL_SCALE=1 runs them at production's bounds and sizes
// (docs/testing.md).
var fullScale = os.Getenv("CAIRN_TEST_FULL_SCALE") != ""

// testLimits are the context limits the tests give a Service.
func testLimits() contextLimits {
	if fullScale {
		return defaultContextLimits
	}
	l := defaultContextLimits
	return contextLimits{candidates: l.candidates / 10, topicCandidates: l.topicCandidates / 10,
		scanBatch: l.scanBatch / 10, scanMaxBatch: l.scanMaxBatch / 10}
}

// scaled is a count of entities chosen against production's bounds,
// scaled to testLimits'.
func scaled(n int) int {
	return n * testLimits().topicCandidates / MaxTopicCandidates
}

// withTestLimits gives s testLimits and returns it.
func withTestLimits(s *Service) *Service {
	s.limits = testLimits()
	return s
}
