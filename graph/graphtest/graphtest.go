// Package graphtest is the conformance suite of Cairn's graph: every graph
// driver's test file calls Run with a harness that makes fresh stores, and
// the suite checks, through the portable API only (*graph.Store, *graph.Tx),
// that the driver keeps the contracts written in package graph's doc
// comments.
//
// A driver's test needs nothing else:
//
//	func TestConformance(t *testing.T) { graphtest.Run(t, harness) }
//
// The suite assumes only what those contracts say, plus two conventions every
// driver keeps: maps (snapshots, provenance, metadata, fields) come back as
// JSON decodes them with numbers kept exact as json.Number, and the error fn
// returns from Store.Update or Store.View comes back from it, wrapped or not.
// It is deterministic (explicit timestamps wherever order matters, no sleeps)
// and must pass under the race detector.
package graphtest

import (
	"testing"

	"github.com/cairnkg/cairn/graph"
)

// Harness returns a new, empty store for one test; it registers its own
// cleanup with t.Cleanup. The suite calls it from parallel subtests, so it
// must be safe for concurrent use, and stores it returns must not share data.
type Harness func(t *testing.T) *graph.Store

// Run runs every conformance test against stores made by newStore.
func Run(t *testing.T, newStore Harness) {
	tests := []struct {
		name string
		run  func(*testing.T, Harness)
	}{
		{"Sources", testSources},
		{"ListSources", testListSources},
		{"Entities", testEntities},
		{"Identifiers", testIdentifiers},
		{"Observations", testObservations},
		{"Timeline", testTimeline},
		{"TimelinePeriods", testTimelinePeriods},
		{"Transactions", testTransactions},
		{"Isolation", testIsolation},
		{"CreateRelationship", testCreateRelationship},
		{"Cycles", testCycles},
		{"ConcurrentCycles", testConcurrentCycles},
		{"EndRelationship", testEndRelationship},
		{"RelationshipObservations", testRelationshipObservations},
		{"ListRelationships", testListRelationships},
		{"Edges", testEdges},
		{"RelationshipsOfEntities", testRelationshipsOfEntities},
		{"ShortestPath", testShortestPath},
		{"Reach", testReach},
		{"RelationshipOfType", testRelationshipOfType},
		{"Traverse", testTraverse},
		{"Expand", testExpand},
		{"Outbox", testOutbox},
		{"Changes", testChanges},
		{"BulkWrites", testBulkWrites},
		{"BulkRelationships", testBulkRelationships},
		{"EntitySearch", testEntitySearch},
		{"EntityCompletion", testEntityCompletion},
		{"TextScreen", testTextScreen},
		{"Export", testExport},
		{"UserDefinedTypes", testUserDefinedTypes},
		{"Erase", testErase},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newStore)
		})
	}
}
