package vector_test

import (
	"math"
	"testing"

	"github.com/cairnkg/cairn/vector"
)

// TestFuseScoresScalesFromFloors checks FuseScores' scaling: a similarity
// from the search's threshold to the best candidate's, a BM25 score from
// 0 to the best one's, so that the worst candidate of a signal still
// counts by how close it comes to the best.
func TestFuseScoresScalesFromFloors(t *testing.T) {
	f := vector.Fusion{Method: vector.FuseScores, VectorWeight: 1, TextWeight: 0.5}
	vec := []vector.Scored{{ID: "a", Score: 0.85}, {ID: "b", Score: 0.65}}
	text := []vector.Scored{{ID: "c", Score: 4}, {ID: "b", Score: 2}}
	hits := f.Fuse(vec, text, 0.45)
	want := map[string]float64{
		"a": 1,             // (0.85-0.45)/(0.85-0.45)
		"b": 0.5 + 0.5*0.5, // (0.65-0.45)/0.4, plus half of 2/4
		"c": 0.5,           // text alone, the best: its whole weight
	}
	order := []string{"a", "b", "c"}
	if len(hits) != len(order) {
		t.Fatalf("%d hits, want %d", len(hits), len(order))
	}
	for i, h := range hits {
		if h.ID != order[i] {
			t.Errorf("hit %d is %s, want %s", i, h.ID, order[i])
		}
		if math.Abs(h.Score-want[h.ID]) > 1e-12 {
			t.Errorf("%s scores %v, want %v", h.ID, h.Score, want[h.ID])
		}
	}
	// A lone candidate exactly at the threshold has nothing to be scaled
	// against: it is its signal's best and gets the whole weight.
	hits = f.Fuse([]vector.Scored{{ID: "a", Score: 0.45}}, nil, 0.45)
	if len(hits) != 1 || hits[0].Score != 1 {
		t.Errorf("a lone candidate at the threshold: %+v, want score 1", hits)
	}
}
