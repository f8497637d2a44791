package vectortest

import (
	"slices"
	"testing"

	"github.com/cairnkg/cairn/vector"
)

// testDeterministicRanking saves the same memories into two collections in
// opposite orders, so that their ids (random) compare differently, and
// checks that a search ranks both alike, in the order of the stable key:
// memories that tie by every signal come in the order of their text.
func testDeterministicRanking(t *testing.T, h Harness) {
	s := open(t, h)
	// Every text has "apple" once and the same length: BM25 ties them.
	texts := []string{"apple tart", "apple pie", "apple juice", "apple crumble", "apple cider", "apple sauce"}
	sameVector := along(32, 0.8, 1)
	for _, coll := range []string{"forward", "backward"} {
		order := slices.Clone(texts)
		if coll == "backward" {
			slices.Reverse(order)
		}
		ms := make([]vector.Memory, len(order))
		for i, text := range order {
			ms[i] = vector.Memory{UserID: alice, Collection: coll, Text: text, Embedding: sameVector}
		}
		save(t, s, testSpace, ms...)
	}
	want := slices.Sorted(slices.Values(texts))
	for _, mode := range []struct {
		name   string
		vector []float32
	}{{"text alone", make([]float32, 32)}, {"hybrid", unit(32, 0)}} {
		for _, coll := range []string{"forward", "backward"} {
			res := search(t, s, vector.Query{Filter: vector.Filter{UserID: alice, Collections: []string{coll}},
				Text: "apple", Vector: mode.vector, Space: testSpace})
			got := make([]string, len(res.Hits))
			for i, hit := range res.Hits {
				got[i] = hit.Text
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s, saved %s: ranked %q, want %q (equal scores by text)", mode.name, coll, got, want)
			}
		}
	}
}
