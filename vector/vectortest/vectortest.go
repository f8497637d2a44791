// Package vectortest is the conformance suite of vector drivers. A driver's
// test file opens a fresh store per test and calls Run:
//
//	func TestConformance(t *testing.T) {
//		vectortest.Run(t, vectortest.Harness{Open: open})
//	}
//
// The suite is oracle-based: it keeps every row it saves, computes the
// exact answer of each search itself, and compares.
package vectortest

import (
	"testing"

	"github.com/cairnkg/cairn/vector"
)

// Harness tells the suite how to get a store.
type Harness struct {
	// Open returns a new, empty store; the harness closes it when the test
	// ends.
	Open func(t *testing.T) *vector.Store
	// Approximate says the driver's Nearest may reorder near neighbours
	// (an ANN index): ranking checks then require a recall@10 of at least
	// MinRecall against the exact order instead of the exact order itself.
	// Counts are checked exactly either way.
	Approximate bool
	// OpenEntities, when set, returns a new, empty memory store and the
	// entity-embedding store of the same backend, for the entity tests;
	// the harness closes them when the test ends.
	OpenEntities func(t *testing.T) (*vector.Store, *vector.EntityStore)
	// OpenErasable, when set, returns a new, empty entity-embedding store
	// and a function that records an erasure of a user in its database as
	// the control plane does (a row of user_erasures), for the erasure
	// case; the harness closes the store's database when the test ends.
	OpenErasable func(t *testing.T) (*vector.EntityStore, func(t *testing.T, userID string))
}

// MinRecall is the recall@10 an approximate driver must reach, on
// clustered and on uniformly spread vectors alike.
const MinRecall = 0.95

// Run runs the whole suite.
func Run(t *testing.T, h Harness) {
	t.Run("SaveAndGet", func(t *testing.T) { testSaveAndGet(t, h) })
	t.Run("Validation", func(t *testing.T) { testValidation(t, h) })
	t.Run("Spaces", func(t *testing.T) { testSpaces(t, h) })
	t.Run("ConcurrentFirstSave", func(t *testing.T) { testConcurrentFirstSave(t, h) })
	t.Run("UserIsolation", func(t *testing.T) { testUserIsolation(t, h) })
	t.Run("Text", func(t *testing.T) { testText(t, h) })
	t.Run("Hybrid", func(t *testing.T) { testHybrid(t, h) })
	t.Run("DeterministicRanking", func(t *testing.T) { testDeterministicRanking(t, h) })
	t.Run("OccurredAt", func(t *testing.T) { testOccurredAt(t, h) })
	t.Run("Sequence", func(t *testing.T) { testSequence(t, h) })
	t.Run("Listing", func(t *testing.T) { testListing(t, h) })
	t.Run("Vectors", func(t *testing.T) { testVectors(t, h) })
	t.Run("Reembed", func(t *testing.T) { testReembed(t, h) })
	t.Run("Types", func(t *testing.T) { testTypes(t, h) })
	t.Run("TypesTakeNoSlots", func(t *testing.T) { testTypesTakeNoSlots(t, h) })
	t.Run("Oracle", func(t *testing.T) { testOracle(t, h) })
	t.Run("Recall", func(t *testing.T) { testRecall(t, h) })
	t.Run("Forget", func(t *testing.T) { testForget(t, h) })
	t.Run("ForgetImport", func(t *testing.T) { testForgetImport(t, h) })
	if h.OpenEntities != nil {
		t.Run("Entities", func(t *testing.T) { testEntities(t, h) })
	}
	if h.OpenErasable != nil {
		t.Run("ErasedUserGetsNoEntityEmbeddings", func(t *testing.T) { testErasedUserGetsNoEntityEmbeddings(t, h) })
	}
}
