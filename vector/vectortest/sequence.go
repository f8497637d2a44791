package vectortest

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/cairnkg/cairn/vector"
)

// testSequence checks listings ordered by OccurredAt, and that a question
// about what came after or before something ranks in the memories that
// occurred next to its best hit (vector.Sequence): those that pass the
// filter, in its collection, by meaning or by nearness, and only for such
// questions ranked by relevance.
func testSequence(t *testing.T, h Harness) {
	s := open(t, h)
	at := func(i int) time.Time { return epoch.Add(time.Duration(i) * time.Hour) }
	// Near the query's axis 1, below the threshold of 0.5.
	close := unit(32, 3)
	close[1] = 0.3
	n := float32(math.Sqrt(1 + 0.09))
	close[1], close[3] = close[1]/n, close[3]/n
	in := []vector.Memory{
		{Text: "breakfast with toast", Embedding: unit(32, 0), Tags: []string{"diary"}},
		{Text: "the concert was loud", Embedding: unit(32, 1), Tags: []string{"diary"}},
		{Text: "bought a bicycle", Embedding: unit(32, 2), Tags: []string{"diary"}},
		{Text: "went swimming", Embedding: close, Tags: []string{"diary"}},
		{Text: "a private note", Embedding: unit(32, 4), Tags: []string{"other"}},
	}
	for i := range in {
		// Saved newest first: created_at runs against occurred_at.
		in[i].UserID, in[i].Collection = alice, "diary"
		in[i].OccurredAt, in[i].CreatedAt = at(i), at(10-i)
	}
	m := save(t, s, testSpace, in...)
	// Another collection's memory, next to the anchor in time.
	save(t, s, testSpace, vector.Memory{UserID: alice, Collection: "work", Text: "a meeting", Tags: []string{"diary"},
		OccurredAt: at(1).Add(time.Minute), Embedding: unit(32, 5)})
	ids := func(ix ...int) []string {
		var out []string
		for _, i := range ix {
			out = append(out, m[i].ID)
		}
		return out
	}
	f := vector.Filter{UserID: alice, Collections: []string{"diary"}}
	for _, tc := range []struct {
		name string
		q    vector.Query
		want []string
	}{
		{"listing by occurred_at", vector.Query{Filter: f, Sort: vector.SortOccurredAt}, ids(4, 3, 2, 1, 0)},
		{"listing by occurred_at, ascending", vector.Query{Filter: f, Sort: vector.SortOccurredAt, Ascending: true}, ids(0, 1, 2, 3, 4)},
		{"listing by occurred_at, a page", vector.Query{Filter: f, Sort: vector.SortOccurredAt, Ascending: true, Limit: 2, Offset: 1}, ids(1, 2)},
		{"a question without a cue", vector.Query{Text: "the concert"}, ids(1)},
		{"after: the next ones by meaning", vector.Query{Text: "what came after the concert?"}, ids(1, 3, 2)},
		{"after: by nearness", vector.Query{Text: "what came after the concert?", Sequence: vector.Sequence{Weight: 1}}, ids(1, 2, 3)},
		{"after: one neighbour", vector.Query{Text: "what came after the concert?", Sequence: vector.Sequence{Neighbours: 1, Weight: 1, Meaning: 1}}, ids(1, 2)},
		{"after, within the date filter", vector.Query{Text: "what came after the concert?", Filter: vector.Filter{OccurredTo: at(2)}}, ids(1, 2)},
		{"before", vector.Query{Text: "what happened before the concert"}, ids(1, 0)},
		{"off", vector.Query{Text: "what came after the concert?", Sequence: vector.Sequence{Off: true}}, ids(1)},
		{"sorted by created_at", vector.Query{Text: "what came after the concert?", Sort: vector.SortCreatedAt}, ids(1)},
	} {
		q := tc.q
		q.UserID, q.Collections = alice, []string{"diary"}
		if q.Text != "" {
			q.Tags = []string{"diary"}
			q.Vector, q.Space, q.MinSimilarity = unit(32, 1), testSpace, ptr(0.5)
		}
		res := search(t, s, q)
		if got := hitIDs(res.Hits); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
			continue
		}
		for _, h := range res.Hits {
			if h.Text == "" {
				t.Errorf("%s: hit %s without its memory", tc.name, h.ID)
			}
			if q.Text != "" && h.ID != m[1].ID && !slices.Equal(h.Signals, []vector.Signal{vector.SignalSequence}) {
				t.Errorf("%s: neighbour %s found by %v, want sequence", tc.name, h.ID, h.Signals)
			}
		}
	}
	// Consent: a neighbour of entity types the caller may not read stays
	// out, as it does of the signals.
	typed := save(t, s, testSpace,
		vector.Memory{UserID: alice, Collection: "typed", Text: "the concert was loud", OccurredAt: at(1), Embedding: unit(32, 1)},
		vector.Memory{UserID: alice, Collection: "typed", Text: "a secret diagnosis", OccurredAt: at(2), Embedding: unit(32, 6), Types: []string{"Diagnosis"}},
		vector.Memory{UserID: alice, Collection: "typed", Text: "went swimming", OccurredAt: at(3), Embedding: unit(32, 7)})
	for _, tc := range []struct {
		readable []string
		want     []string
	}{
		{nil, []string{typed[0].ID, typed[1].ID, typed[2].ID}},
		{[]string{}, []string{typed[0].ID, typed[2].ID}},
	} {
		res := search(t, s, vector.Query{Filter: vector.Filter{UserID: alice, Collections: []string{"typed"}, ReadableTypes: tc.readable},
			Text: "what came after the concert?", Vector: unit(32, 1), Space: testSpace, MinSimilarity: ptr(0.5)})
		if got := hitIDs(res.Hits); !slices.Equal(got, tc.want) {
			t.Errorf("readable types %v: got %v, want %v", tc.readable, got, tc.want)
		}
	}
	if c := vector.SequenceCue("What did Tom do after his holiday?"); c != 1 {
		t.Errorf("cue of after: %d", c)
	}
	if c := vector.SequenceCue("Who did she meet before the wedding, after all?"); c != -1 {
		t.Errorf("cue of before then after: %d", c)
	}
	if c := vector.SequenceCue("Where does Tom work?"); c != 0 {
		t.Errorf("cue of none: %d", c)
	}
}
