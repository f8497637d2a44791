package vectortest

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cairnkg/cairn/vector"
)

func testReembed(t *testing.T, h Harness) {
	s := open(t, h)
	r := rand.New(rand.NewPCG(12, 13))
	var in []vector.Memory
	for i := range 30 {
		in = append(in, vector.Memory{
			UserID: alice, Collection: "notes", Text: "note", Tags: []string{"t"}, EntityIDs: []string{"ent_x"},
			Metadata: map[string]any{"i": float64(i)}, CreatedAt: epoch.Add(-1), Embedding: randomVector(r, 32),
		})
	}
	saved := save(t, s, testSpace, in...)
	save(t, s, testSpace, vector.Memory{UserID: bob, Collection: "notes", Text: "bob's", Embedding: randomVector(r, 32)})
	// Read through the cache first, so that a driver that caches must
	// notice the replacement.
	search(t, s, vector.Query{Filter: vector.Filter{UserID: alice, Collections: []string{"notes"}}, Text: "note",
		Vector: randomVector(r, 32), Space: testSpace, MinSimilarity: ptr(-1.0)})

	// The new embedder puts memory i on axis i%16 of 16 dimensions.
	small := vector.Space{Embedder: "test:axes", Dimension: 16}
	pos := map[string]int{}
	for i, m := range saved {
		pos[m.ID] = i
	}
	embed := func(_ context.Context, ms []vector.Memory) ([][]float32, error) {
		out := make([][]float32, len(ms))
		for i, m := range ms {
			out[i] = unit(16, pos[m.ID]%16)
		}
		return out, nil
	}
	n, err := s.Reembed(t.Context(), alice, "notes", small.Embedder, embed)
	if err != nil || n != len(saved) {
		t.Fatalf("Reembed = %d, %v; want %d", n, err, len(saved))
	}
	if n, err := s.Reembed(t.Context(), alice, "notes", small.Embedder, embed); err != nil || n != 0 {
		t.Errorf("Reembed into the space the collection has = %d, %v; want 0", n, err)
	}
	if n, err := s.Reembed(t.Context(), alice, "missing", small.Embedder, embed); err != nil || n != 0 {
		t.Errorf("Reembed of a collection without memories = %d, %v; want 0", n, err)
	}

	cols, err := s.Collections(t.Context(), alice, nil)
	if err != nil || len(cols) != 1 || cols[0].Space != small || cols[0].Count != len(saved) {
		t.Errorf("Collections after Reembed = %+v, %v", cols, err)
	}
	if cols, _ := s.Collections(t.Context(), bob, nil); len(cols) != 1 || cols[0].Space != testSpace {
		t.Errorf("bob's collection of the same name changed: %+v", cols)
	}
	got, err := s.Get(t.Context(), alice, []string{saved[0].ID, saved[29].ID})
	want := []vector.Memory{saved[0], saved[29]}
	for i := range want {
		want[i].Embedding = nil
	}
	if err != nil || !cmp.Equal(want, got, cmpopts.EquateEmpty()) {
		t.Errorf("memories changed beyond their embedding: %s, %v", cmp.Diff(want, got, cmpopts.EquateEmpty()), err)
	}
	// Searches use the new vectors: axis 3 holds memories 3 and 19.
	res := search(t, s, vector.Query{Filter: vector.Filter{UserID: alice, Collections: []string{"notes"}, Tags: []string{"t"}},
		Text: noMatchText, Vector: unit(16, 3), Space: small, MinSimilarity: ptr(0.99)})
	wantIDs := []string{saved[3].ID, saved[19].ID}
	slices.Sort(wantIDs)
	if ids := hitIDs(res.Hits); !slices.Equal(ids, wantIDs) {
		t.Errorf("search after Reembed: %v, want %v", ids, wantIDs)
	}
	_, err = s.Search(t.Context(), vector.Query{Filter: vector.Filter{UserID: alice, Collections: []string{"notes"}},
		Text: "note", Vector: randomVector(r, 32), Space: testSpace})
	if !errors.Is(err, vector.ErrDimensionMismatch) {
		t.Errorf("search in the old space: got %v, want ErrDimensionMismatch", err)
	}
	// New memories must come in the new space.
	save(t, s, small, vector.Memory{UserID: alice, Collection: "notes", Text: "after", Embedding: unit(16, 0)})

	all, err := s.AllCollections(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	wantAll := []vector.UserCollection{{UserID: alice, Collection: "notes", Space: small}, {UserID: bob, Collection: "notes", Space: testSpace}}
	if diff := cmp.Diff(wantAll, all); diff != "" {
		t.Errorf("AllCollections (-want +got):\n%s", diff)
	}
}
