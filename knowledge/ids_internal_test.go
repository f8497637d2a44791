package knowledge

import (
	"testing"
	"time"
)

// TestRelationshipObservationIDs checks that a relationship observation's
// id is the same for the same request at the same time, differs
// otherwise, and sorts by time, so that an index on it is written in
// order.
func TestRelationshipObservationIDs(t *testing.T) {
	at := time.Date(2026, 11, 27, 11, 0, 0, 123456000, time.UTC)
	id := relationshipObservationID("rel_a", "src_a", at)
	if got := relationshipObservationID("rel_a", "src_a", at); got != id {
		t.Errorf("the same request gave %s, then %s", id, got)
	}
	if len(id) != len("robs_")+13+16 {
		t.Errorf("id %s: length %d", id, len(id))
	}
	for _, other := range []string{
		relationshipObservationID("rel_b", "src_a", at),
		relationshipObservationID("rel_a", "src_b", at),
		relationshipObservationID("rel_a", "src_a", at.Add(time.Microsecond)),
	} {
		if other == id {
			t.Errorf("another request got the same id %s", id)
		}
	}
	prev := ""
	for i := range 1000 {
		// Later times sort later whatever the relationship and source.
		next := relationshipObservationID(string(rune('a'+i%26)), "src", at.Add(time.Duration(i)*time.Microsecond))
		if next <= prev {
			t.Fatalf("%s, then %s a microsecond later", prev, next)
		}
		prev = next
	}
}

// TestMovedObservationIDs checks that a merge's copy of a relationship
// observation names its root, whichever copy it was made from, and that
// the copies of one root on two relationships differ.
func TestMovedObservationIDs(t *testing.T) {
	root := relationshipObservationID("rel_a", "src_a", time.Date(2026, 11, 27, 11, 0, 0, 0, time.UTC))
	if got := rootObservationID(root); got != root {
		t.Errorf("the root of %s is %s", root, got)
	}
	onB := movedObservationID(rootObservationID(root), "rel_b")
	onC := movedObservationID(rootObservationID(onB), "rel_c")
	if rootObservationID(onB) != root || rootObservationID(onC) != root {
		t.Errorf("copies %s, %s do not name their root %s", onB, onC, root)
	}
	if onC != movedObservationID(root, "rel_c") || onB == onC || onB == root {
		t.Errorf("copies %s, %s of %s", onB, onC, root)
	}
}
