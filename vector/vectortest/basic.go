package vectortest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cairnkg/cairn/vector"
)

func testSaveAndGet(t *testing.T, h Harness) {
	s := open(t, h)
	r := rand.New(rand.NewPCG(1, 2))
	full := vector.Memory{
		UserID: alice, Collection: "notes", Text: "Alice prefers window seats on long flights",
		Title: "Seat preference", Tags: []string{"travel", "preference"}, Confidence: ptr(0.8),
		Metadata:  map[string]any{"source_llm": "model-a", "page": 3.0, "nested": map[string]any{"k": "v"}},
		EntityIDs: []string{"ent_a", "ent_b"}, SourceID: "src_1", Types: []string{"person", "invoice", "person"},
		CreatedAt: epoch.Add(1500 * time.Microsecond), Embedding: randomVector(r, testSpace.Dimension),
	}
	bare := vector.Memory{UserID: alice, Collection: "notes", Text: "a bare memory", Embedding: randomVector(r, testSpace.Dimension)}
	saved := save(t, s, testSpace, full, bare)
	if saved[0].ID == "" || saved[1].ID == "" || saved[0].ID == saved[1].ID {
		t.Fatalf("ids not assigned: %q, %q", saved[0].ID, saved[1].ID)
	}
	if want := []string{"invoice", "person"}; !slices.Equal(saved[0].Types, want) {
		t.Errorf("saved types %q, want %q: sorted, without duplicates", saved[0].Types, want)
	}
	if saved[1].CreatedAt.IsZero() || saved[1].CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt not set to a UTC time: %v", saved[1].CreatedAt)
	}

	got, err := s.Get(t.Context(), alice, []string{saved[1].ID, "mem_missing", saved[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	want := []vector.Memory{saved[1], saved[0]}
	for i := range want {
		want[i].Embedding = nil
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Get (-want +got):\n%s", diff)
	}

	dup := full
	dup.ID = saved[0].ID
	if _, err := s.Save(t.Context(), testSpace, dup); !errors.Is(err, vector.ErrConflict) {
		t.Errorf("saving an existing id: got %v, want ErrConflict", err)
	}
	// A failed batch stores nothing.
	fresh := bare
	fresh.ID = "mem_fresh_one"
	if _, err := s.Save(t.Context(), testSpace, fresh, dup); !errors.Is(err, vector.ErrConflict) {
		t.Errorf("batch with an existing id: got %v, want ErrConflict", err)
	}
	if got, _ := s.Get(t.Context(), alice, []string{"mem_fresh_one"}); len(got) != 0 {
		t.Errorf("a failed batch stored part of itself: %v", hitIDs(nil))
	}
}

func testValidation(t *testing.T, h Harness) {
	s := open(t, h)
	r := rand.New(rand.NewPCG(3, 4))
	ok := vector.Memory{UserID: alice, Collection: "c", Text: "t", Embedding: randomVector(r, testSpace.Dimension)}
	for _, tc := range []struct {
		name string
		edit func(m *vector.Memory)
	}{
		{"no user", func(m *vector.Memory) { m.UserID = "" }},
		{"no collection", func(m *vector.Memory) { m.Collection = "" }},
		{"no text", func(m *vector.Memory) { m.Text = "" }},
		{"confidence above 1", func(m *vector.Memory) { m.Confidence = ptr(1.5) }},
		{"negative confidence", func(m *vector.Memory) { m.Confidence = ptr(-0.1) }},
		{"empty tag", func(m *vector.Memory) { m.Tags = []string{""} }},
		{"empty type", func(m *vector.Memory) { m.Types = []string{"note", ""} }},
		{"type too long", func(m *vector.Memory) { m.Types = []string{strings.Repeat("x", vector.MaxTypeLen+1)} }},
		{"too many types", func(m *vector.Memory) {
			for i := range vector.MaxTypes + 1 {
				m.Types = append(m.Types, fmt.Sprintf("type_%d", i))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := ok
			tc.edit(&m)
			if _, err := s.Save(t.Context(), testSpace, m); !errors.Is(err, vector.ErrInvalid) {
				t.Errorf("got %v, want ErrInvalid", err)
			}
		})
	}
	base := vector.Query{Filter: vector.Filter{UserID: alice, Collections: []string{"c"}}}
	for _, tc := range []struct {
		name string
		edit func(q *vector.Query)
	}{
		{"no collections", func(q *vector.Query) { q.Collections = nil }},
		{"limit too big", func(q *vector.Query) { q.Limit = vector.MaxLimit + 1 }},
		{"negative offset", func(q *vector.Query) { q.Offset = -1 }},
		{"unknown sort", func(q *vector.Query) { q.Sort = "size" }},
		{"bad metadata key", func(q *vector.Query) { q.Metadata = map[string]string{"a.b": "x"} }},
		{"reversed dates", func(q *vector.Query) { q.OccurredFrom, q.OccurredTo = epoch, epoch.Add(-time.Hour) }},
		{"min similarity above 1", func(q *vector.Query) {
			q.Text, q.Vector, q.Space, q.MinSimilarity = "x", ok.Embedding, testSpace, ptr(1.5)
		}},
		{"vector of the wrong length", func(q *vector.Query) { q.Text, q.Vector, q.Space = "x", ok.Embedding[:3], testSpace }},
	} {
		t.Run("query "+tc.name, func(t *testing.T) {
			q := base
			tc.edit(&q)
			if _, err := s.Search(t.Context(), q); !errors.Is(err, vector.ErrInvalid) {
				t.Errorf("got %v, want ErrInvalid", err)
			}
		})
	}
}

func testSpaces(t *testing.T, h Harness) {
	s := open(t, h)
	r := rand.New(rand.NewPCG(5, 6))
	save(t, s, testSpace, vector.Memory{UserID: alice, Collection: "a", Text: "one", Embedding: randomVector(r, 32)})
	small := vector.Space{Embedder: "test:small", Dimension: 16}
	save(t, s, small, vector.Memory{UserID: alice, Collection: "b", Text: "two", Embedding: randomVector(r, 16)})
	// Another user's collection of the same name has its own space.
	save(t, s, small, vector.Memory{UserID: bob, Collection: "a", Text: "three", Embedding: randomVector(r, 16)})

	_, err := s.Save(t.Context(), small, vector.Memory{UserID: alice, Collection: "a", Text: "x", Embedding: randomVector(r, 16)})
	var se *vector.SpaceError
	if !errors.Is(err, vector.ErrDimensionMismatch) || !errors.As(err, &se) || se.Recorded != testSpace || se.Given != small {
		t.Errorf("saving 16 dimensions into a 32-dimensional collection: got %v, want a *SpaceError with ErrDimensionMismatch", err)
	}
	other := vector.Space{Embedder: "test:other", Dimension: 32}
	_, err = s.Save(t.Context(), other, vector.Memory{UserID: alice, Collection: "a", Text: "x", Embedding: randomVector(r, 32)})
	if !errors.Is(err, vector.ErrEmbedderMismatch) {
		t.Errorf("saving another embedder's vectors: got %v, want ErrEmbedderMismatch", err)
	}
	// A vector whose length contradicts its declared space.
	_, err = s.Save(t.Context(), testSpace, vector.Memory{UserID: alice, Collection: "a", Text: "x", Embedding: randomVector(r, 16)})
	if !errors.Is(err, vector.ErrDimensionMismatch) {
		t.Errorf("a 16-dimensional vector declared as 32: got %v, want ErrDimensionMismatch", err)
	}
	_, err = s.Search(t.Context(), vector.Query{
		Filter: vector.Filter{UserID: alice, Collections: []string{"a"}}, Text: "one", Vector: randomVector(r, 16), Space: small,
	})
	if !errors.Is(err, vector.ErrDimensionMismatch) {
		t.Errorf("searching with 16 dimensions: got %v, want ErrDimensionMismatch", err)
	}
	// A collection with no memories yet has no space and no results.
	res := search(t, s, vector.Query{
		Filter: vector.Filter{UserID: alice, Collections: []string{"empty"}}, Text: "one", Vector: randomVector(r, 16), Space: small,
	})
	if len(res.Hits) != 0 {
		t.Errorf("an empty collection returned %d hits", len(res.Hits))
	}

	cols, err := s.Collections(t.Context(), alice, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []vector.Collection{{Name: "a", Count: 1, Space: testSpace}, {Name: "b", Count: 1, Space: small}}
	if diff := cmp.Diff(want, cols); diff != "" {
		t.Errorf("Collections (-want +got):\n%s", diff)
	}
}

func testConcurrentFirstSave(t *testing.T, h Harness) {
	s := open(t, h)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 7))
			_, errs[i] = s.Save(t.Context(), testSpace, vector.Memory{
				UserID: alice, Collection: "race", Text: fmt.Sprintf("memory %d", i), Embedding: randomVector(r, 32),
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("save %d: %v", i, err)
		}
	}
	cols, err := s.Collections(t.Context(), alice, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) != 1 || cols[0].Count != n {
		t.Errorf("Collections = %+v, want one with %d memories", cols, n)
	}
}

func testUserIsolation(t *testing.T, h Harness) {
	s := open(t, h)
	r := rand.New(rand.NewPCG(8, 9))
	q := randomVector(r, 32)
	a := save(t, s, testSpace, vector.Memory{UserID: alice, Collection: "notes", Text: "alice secret plan", Embedding: q})
	b := save(t, s, testSpace, vector.Memory{UserID: bob, Collection: "notes", Text: "bob secret plan", Embedding: q, Tags: []string{"x"}})

	if got, err := s.Get(t.Context(), alice, []string{b[0].ID}); err != nil || len(got) != 0 {
		t.Errorf("alice read bob's memory by id: %v, %v", got, err)
	}
	res := search(t, s, vector.Query{
		Filter: vector.Filter{UserID: alice, Collections: []string{"notes"}}, Text: "secret plan", Vector: q, Space: testSpace,
		MinSimilarity: ptr(-1.0),
	})
	if ids := hitIDs(res.Hits); !slices.Equal(ids, []string{a[0].ID}) {
		t.Errorf("alice's search returned %v, want only her memory %s", ids, a[0].ID)
	}
	res = search(t, s, vector.Query{Filter: vector.Filter{UserID: alice, Collections: []string{"notes"}}})
	if ids := hitIDs(res.Hits); !slices.Equal(ids, []string{a[0].ID}) || res.Total != 1 {
		t.Errorf("alice's listing returned %v (total %d), want only %s", ids, res.Total, a[0].ID)
	}
	res = search(t, s, vector.Query{Filter: vector.Filter{UserID: alice, Collections: []string{"notes"}, Tags: []string{"x"}}})
	if len(res.Hits) != 0 {
		t.Errorf("a tag only bob uses matched alice's rows: %v", hitIDs(res.Hits))
	}
	cols, _ := s.Collections(t.Context(), bob, nil)
	if len(cols) != 1 || cols[0].Count != 1 {
		t.Errorf("bob's collections = %+v, want one memory", cols)
	}
}

// testVectors checks that Vectors reads back exactly the vectors saved, of
// the user's memories only, leaving out ids that do not exist.
func testVectors(t *testing.T, h Harness) {
	s := open(t, h)
	r := rand.New(rand.NewPCG(5, 6))
	other := vector.Space{Embedder: "other", Dimension: 3}
	saved := save(t, s, testSpace,
		vector.Memory{UserID: alice, Collection: "notes", Text: "one", Embedding: randomVector(r, testSpace.Dimension)},
		vector.Memory{UserID: alice, Collection: "notes", Text: "two", Embedding: randomVector(r, testSpace.Dimension)},
		vector.Memory{UserID: bob, Collection: "notes", Text: "bob's", Embedding: randomVector(r, testSpace.Dimension)},
	)
	small := save(t, s, other, vector.Memory{UserID: alice, Collection: "small", Text: "three",
		Embedding: []float32{1e-38, -3.4028235e38, 0.1}})
	got, err := s.Vectors(t.Context(), alice, []string{saved[0].ID, saved[1].ID, saved[2].ID, small[0].ID, "mem_missing"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float32{saved[0].ID: saved[0].Embedding, saved[1].ID: saved[1].Embedding, small[0].ID: small[0].Embedding}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Vectors (-want +got):\n%s", diff)
	}
	if got, err := s.Vectors(t.Context(), bob, nil); err != nil || len(got) != 0 {
		t.Errorf("Vectors of no id: %v, %v", got, err)
	}
}
