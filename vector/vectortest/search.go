package vectortest

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cairnkg/cairn/vector"
)

// along returns a unit vector whose cosine similarity to the unit vector
// along axis 0 is exactly sim, leaning towards axis other.
func along(dim int, sim float64, other int) []float32 {
	v := make([]float32, dim)
	v[0] = float32(sim)
	v[other] = float32(math.Sqrt(1 - sim*sim))
	return v
}

func testText(t *testing.T, h Harness) {
	s := open(t, h)
	docs := save(t, s, testSpace,
		vector.Memory{UserID: alice, Collection: "notes", Text: "the quarterly budget review meeting", Embedding: unit(32, 1)},
		vector.Memory{UserID: alice, Collection: "notes", Text: "budget planning for the garden", Embedding: unit(32, 2)},
		vector.Memory{UserID: alice, Collection: "notes", Text: "walking the dog in the park", Embedding: unit(32, 3)},
		vector.Memory{UserID: alice, Collection: "notes", Text: "notes from the offsite meeting", Embedding: unit(32, 4)},
		vector.Memory{UserID: alice, Collection: "notes", Title: "Dentist", Text: "appointment on tuesday", Embedding: unit(32, 5)},
	)
	zero := make([]float32, 32) // disables the vector signal
	run := func(text string, keywords ...string) []vector.Hit {
		t.Helper()
		res := search(t, s, vector.Query{
			Filter: vector.Filter{UserID: alice, Collections: []string{"notes"}, Keywords: keywords},
			Text:   text, Vector: zero, Space: testSpace,
		})
		for _, h := range res.Hits {
			if !slices.Equal(h.Signals, []vector.Signal{vector.SignalText}) || h.Similarity != nil {
				t.Errorf("%q: hit %s has signals %v and similarity %v, want text only", text, h.ID, h.Signals, h.Similarity)
			}
		}
		return res.Hits
	}
	set := func(hits []vector.Hit) []string {
		ids := hitIDs(hits)
		slices.Sort(ids)
		return ids
	}
	ids := func(ix ...int) []string {
		out := make([]string, len(ix))
		for i, x := range ix {
			out[i] = docs[x].ID
		}
		slices.Sort(out)
		return out
	}
	if got, want := set(run("budget")), ids(0, 1); !slices.Equal(got, want) {
		t.Errorf("budget: got %v, want %v", got, want)
	}
	hits := run("budget meeting")
	if got, want := set(hits), ids(0, 1, 3); !slices.Equal(got, want) {
		t.Errorf("budget meeting: got %v, want %v", got, want)
	} else if hits[0].ID != docs[0].ID {
		t.Errorf("budget meeting: the row with both words is not first: %v", hitIDs(hits))
	}
	if got, want := set(run("Meetings!")), ids(0, 3); !slices.Equal(got, want) {
		t.Errorf("meetings (stemmed): got %v, want %v", got, want)
	}
	if got, want := set(run("dentist")), ids(4); !slices.Equal(got, want) {
		t.Errorf("a word of the title: got %v, want %v", got, want)
	}
	if got := run(noMatchText); len(got) != 0 {
		t.Errorf("a word no row has matched %v", hitIDs(got))
	}
	if got := run("on the"); len(got) != 0 {
		t.Errorf("function words alone matched %v; they would match nearly every memory", hitIDs(got))
	}
	if got, want := set(run("the dog in the park")), ids(2); !slices.Equal(got, want) {
		t.Errorf("a sentence with function words: got %v, want %v", got, want)
	}
	if got, want := set(run("budget", "garden")), ids(1); !slices.Equal(got, want) {
		t.Errorf("budget with keyword garden: got %v, want %v", got, want)
	}
	res := search(t, s, vector.Query{Filter: vector.Filter{UserID: alice, Collections: []string{"notes"}, Keywords: []string{"budget", "review"}}})
	if got, want := set(res.Hits), ids(0); !slices.Equal(got, want) || res.Total != 1 {
		t.Errorf("listing with keywords budget and review: got %v (total %d), want %v", got, res.Total, want)
	}
}

func testHybrid(t *testing.T, h Harness) {
	s := open(t, h)
	docs := save(t, s, testSpace,
		vector.Memory{UserID: alice, Collection: "n", Text: "orchid greenhouse orchid", Embedding: along(32, 0.95, 1)},
		vector.Memory{UserID: alice, Collection: "n", Text: "unrelated words here", Embedding: along(32, 0.9, 2)},
		vector.Memory{UserID: alice, Collection: "n", Text: "orchid care", Embedding: unit(32, 3)},
		vector.Memory{UserID: alice, Collection: "n", Text: "nothing at all", Embedding: unit(32, 4)},
		vector.Memory{UserID: alice, Collection: "n", Text: "below the threshold", Embedding: along(32, 0.6, 5)},
	)
	res := search(t, s, vector.Query{
		Filter: vector.Filter{UserID: alice, Collections: []string{"n"}}, Text: "orchid", Vector: unit(32, 0), Space: testSpace,
	})
	if len(res.Hits) != 3 || res.Total != 3 || res.HasMore {
		t.Fatalf("got %v (total %d, has_more %v), want 3 hits: two by vector at the default 0.7, two by text, one by both",
			hitIDs(res.Hits), res.Total, res.HasMore)
	}
	first := res.Hits[0]
	if first.ID != docs[0].ID || !slices.Equal(first.Signals, []vector.Signal{vector.SignalVector, vector.SignalText}) {
		t.Errorf("first hit %s with %v, want %s by vector and text", first.ID, first.Signals, docs[0].ID)
	}
	if first.Similarity == nil || math.Abs(*first.Similarity-0.95) > 1e-4 {
		t.Errorf("first hit's similarity %v, want 0.95", first.Similarity)
	}
	if want := vector.DefaultFusion.VectorWeight + vector.DefaultFusion.TextWeight; math.Abs(first.Score-want) > 1e-9 {
		t.Errorf("first hit's score %v, want %v (the best of both signals)", first.Score, want)
	}
	if first.Text != "orchid greenhouse orchid" {
		t.Errorf("hit carries text %q", first.Text)
	}
	// The same search with the query's embedding computed by the store
	// (Query.Embed, beside the text signal) finds the same, and an
	// embedding that fails fails the search with its error, even where
	// no collection of the query exists.
	lazy := search(t, s, vector.Query{
		Filter: vector.Filter{UserID: alice, Collections: []string{"n"}}, Text: "orchid", Space: testSpace,
		Embed: func(context.Context) ([]float32, error) { return unit(32, 0), nil },
	})
	if got, want := hitIDs(lazy.Hits), hitIDs(res.Hits); !slices.Equal(got, want) || lazy.Total != res.Total {
		t.Errorf("with Embed: %v (total %d), want %v (total %d) as with Vector", got, lazy.Total, want, res.Total)
	}
	failed := errors.New("the embedder is down")
	for _, coll := range []string{"n", "no such collection"} {
		_, err := s.Search(t.Context(), vector.Query{
			Filter: vector.Filter{UserID: alice, Collections: []string{coll}}, Text: "orchid", Space: testSpace,
			Embed: func(context.Context) ([]float32, error) { return nil, failed },
		})
		if !errors.Is(err, failed) {
			t.Errorf("collection %q, failing Embed: err = %v, want %v", coll, err, failed)
		}
	}
	if _, err := s.Search(t.Context(), vector.Query{
		Filter: vector.Filter{UserID: alice, Collections: []string{"n"}}, Text: "orchid", Space: testSpace,
		Embed: func(context.Context) ([]float32, error) { return unit(16, 0), nil },
	}); err == nil {
		t.Error("Embed of 16 dimensions in a space of 32: no error")
	}
	for _, h := range res.Hits[1:] {
		switch h.ID {
		case docs[1].ID:
			if !slices.Equal(h.Signals, []vector.Signal{vector.SignalVector}) || h.Similarity == nil || math.Abs(*h.Similarity-0.9) > 1e-4 {
				t.Errorf("vector-only hit: signals %v similarity %v", h.Signals, h.Similarity)
			}
			if h.Score >= first.Score {
				t.Errorf("vector-only hit at rank 2 scores %v, not below the first's %v", h.Score, first.Score)
			}
		case docs[2].ID:
			if !slices.Equal(h.Signals, []vector.Signal{vector.SignalText}) || h.Similarity != nil {
				t.Errorf("text-only hit: signals %v similarity %v", h.Signals, h.Similarity)
			}
		default:
			t.Errorf("unexpected hit %s %q", h.ID, h.Text)
		}
	}
	// A lower threshold admits the row at 0.6.
	res = search(t, s, vector.Query{
		Filter: vector.Filter{UserID: alice, Collections: []string{"n"}}, Text: "orchid", Vector: unit(32, 0), Space: testSpace,
		MinSimilarity: ptr(0.5),
	})
	if !slices.Contains(hitIDs(res.Hits), docs[4].ID) || len(res.Hits) != 4 {
		t.Errorf("min similarity 0.5: got %v, want the row at 0.6 too", hitIDs(res.Hits))
	}
	// Sorting a search by creation time keeps its candidates.
	res = search(t, s, vector.Query{
		Filter: vector.Filter{UserID: alice, Collections: []string{"n"}}, Text: "orchid", Vector: unit(32, 0), Space: testSpace,
		Sort: vector.SortCreatedAt, Ascending: true,
	})
	if len(res.Hits) != 3 || !slices.IsSortedFunc(res.Hits, func(a, b vector.Hit) int { return a.CreatedAt.Compare(b.CreatedAt) }) {
		t.Errorf("sorted by created_at ascending: got %v", hitIDs(res.Hits))
	}
}

func testListing(t *testing.T, h Harness) {
	s := open(t, h)
	r := rand.New(rand.NewPCG(10, 11))
	conf := []*float64{ptr(0.5), nil, ptr(0.9), ptr(0.1), nil, ptr(0.9)}
	var in []vector.Memory
	for i, c := range conf {
		in = append(in, vector.Memory{
			UserID: alice, Collection: "l", Text: "listed memory", Confidence: c,
			CreatedAt: epoch.Add(time.Duration(i) * time.Hour), Embedding: randomVector(r, 32),
			Tags:      []string{"all", []string{"odd", "even"}[(i+1)%2]},
			EntityIDs: []string{"ent_" + string(rune('a'+i%3))}, SourceID: "src_" + string(rune('a'+i%2)),
			Metadata: map[string]any{"llm": []string{"x", "y"}[i%2], "n": i},
		})
	}
	m := save(t, s, testSpace, in...)
	list := func(q vector.Query) vector.Result {
		t.Helper()
		q.UserID, q.Collections = alice, []string{"l"}
		return search(t, s, q)
	}
	want := func(name string, res vector.Result, total int, ix ...int) {
		t.Helper()
		var ids []string
		for _, i := range ix {
			ids = append(ids, m[i].ID)
		}
		if got := hitIDs(res.Hits); !slices.Equal(got, ids) || res.Total != total {
			t.Errorf("%s: got %v (total %d), want %v (total %d)", name, got, res.Total, ids, total)
		}
	}
	want("newest first", list(vector.Query{}), 6, 5, 4, 3, 2, 1, 0)
	want("oldest first", list(vector.Query{Sort: vector.SortCreatedAt, Ascending: true}), 6, 0, 1, 2, 3, 4, 5)
	// Ties on confidence go by id; rows without one come last either way.
	hi := []int{2, 5}
	if m[5].ID < m[2].ID {
		hi = []int{5, 2}
	}
	nul := []int{1, 4}
	if m[4].ID < m[1].ID {
		nul = []int{4, 1}
	}
	want("most confident first", list(vector.Query{Sort: vector.SortConfidence}), 6, hi[0], hi[1], 0, 3, nul[0], nul[1])
	want("least confident first", list(vector.Query{Sort: vector.SortConfidence, Ascending: true}), 6, 3, 0, hi[0], hi[1], nul[0], nul[1])
	res := list(vector.Query{Limit: 2, Offset: 2})
	want("page 2", res, 6, 3, 2)
	if !res.HasMore {
		t.Error("page 2 of 3 says has_more false")
	}
	if res := list(vector.Query{Limit: 2, Offset: 4}); res.HasMore {
		t.Error("the last page says has_more true")
	}
	want("past the end", list(vector.Query{Offset: 10}), 6)
	want("date range, inclusive", list(vector.Query{Filter: vector.Filter{OccurredFrom: epoch.Add(time.Hour), OccurredTo: epoch.Add(3 * time.Hour)}}), 3, 3, 2, 1)
	want("min confidence", list(vector.Query{Filter: vector.Filter{MinConfidence: ptr(0.5)}}), 3, 5, 2, 0)
	want("tags all match", list(vector.Query{Filter: vector.Filter{Tags: []string{"all", "even"}}}), 3, 4, 2, 0)
	want("entity", list(vector.Query{Filter: vector.Filter{EntityID: "ent_b"}}), 2, 4, 1)
	want("source", list(vector.Query{Filter: vector.Filter{SourceID: "src_b"}}), 3, 5, 3, 1)
	want("metadata", list(vector.Query{Filter: vector.Filter{Metadata: map[string]string{"llm": "x"}}}), 3, 4, 2, 0)
	want("everything", list(vector.Query{Filter: vector.Filter{
		Tags: []string{"even"}, MinConfidence: ptr(0.5), SourceID: "src_a", Metadata: map[string]string{"llm": "x"},
		OccurredFrom: epoch, OccurredTo: epoch.Add(10 * time.Hour),
	}}), 2, 2, 0)
}
