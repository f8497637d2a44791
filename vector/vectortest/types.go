package vectortest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cairnkg/cairn/vector"
)

// testTypes checks the entity types a memory's content is data of: they
// are saved sorted and without duplicates, read back by Get and listings,
// kept by Reembed, and Filter.ReadableTypes leaves out every memory
// carrying a type outside it, from listings and from both signals of a
// search.
func testTypes(t *testing.T, h Harness) {
	s := open(t, h)
	// Every row contains the query's word and lies near its vector, so
	// that each is found by both signals unless the filter leaves it out.
	docs := save(t, s, testSpace,
		vector.Memory{UserID: alice, Collection: "s", Text: "receipt of a note", Types: []string{"note"},
			CreatedAt: epoch.Add(4 * time.Hour), Embedding: along(32, 0.95, 1)},
		vector.Memory{UserID: alice, Collection: "s", Text: "receipt of an invoice", Types: []string{"invoice"},
			CreatedAt: epoch.Add(3 * time.Hour), Embedding: along(32, 0.94, 2)},
		vector.Memory{UserID: alice, Collection: "s", Text: "receipt of both", Types: []string{"note", "invoice", "note"},
			CreatedAt: epoch.Add(2 * time.Hour), Embedding: along(32, 0.93, 3)},
		vector.Memory{UserID: alice, Collection: "s", Text: "receipt of nothing typed",
			CreatedAt: epoch.Add(1 * time.Hour), Embedding: along(32, 0.92, 4)},
	)
	note, invoice, both, untyped := docs[0], docs[1], docs[2], docs[3]
	if want := []string{"invoice", "note"}; !slices.Equal(both.Types, want) {
		t.Errorf("Save returned types %q, want %q: sorted, without duplicates", both.Types, want)
	}
	ids := func(ms ...vector.Memory) []string {
		out := make([]string, len(ms))
		for i, m := range ms {
			out[i] = m.ID
		}
		return out
	}
	getTypes := func(name string) {
		t.Helper()
		got, err := s.Get(t.Context(), alice, ids(docs...))
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Clone(docs)
		for i := range want {
			want[i].Embedding = nil
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Get %s (-want +got):\n%s", name, diff)
		}
	}
	getTypes("after Save")

	// A collection's count counts what the readable types admit.
	for _, tc := range []struct {
		readable []string
		want     int
	}{{nil, 4}, {[]string{"note"}, 2}, {[]string{"invoice", "note"}, 4}, {[]string{}, 1}, {[]string{"other"}, 1}} {
		cols, err := s.Collections(t.Context(), alice, tc.readable)
		if err != nil || len(cols) != 1 || cols[0].Count != tc.want {
			t.Errorf("Collections with readable types %q = %+v, %v; want one collection of %d", tc.readable, cols, err, tc.want)
		}
	}

	list := func(readable []string) vector.Result {
		t.Helper()
		return search(t, s, vector.Query{Filter: vector.Filter{UserID: alice, Collections: []string{"s"}, ReadableTypes: readable}})
	}
	res := list(nil)
	if got, want := hitIDs(res.Hits), ids(docs...); !slices.Equal(got, want) || res.Total != len(want) {
		t.Errorf("listing with no readable types given: got %v (total %d), want every row %v", got, res.Total, want)
	}
	for _, h := range res.Hits {
		if i := slices.Index(ids(docs...), h.ID); i >= 0 && !slices.Equal(h.Types, docs[i].Types) {
			t.Errorf("listed %s with types %q, want %q", h.ID, h.Types, docs[i].Types)
		}
	}
	for _, tc := range []struct {
		name     string
		readable []string
		want     []vector.Memory // newest first, as listed
	}{
		{"note", []string{"note"}, []vector.Memory{note, untyped}},
		{"none", []string{}, []vector.Memory{untyped}},
		{"a type no row has", []string{"contract"}, []vector.Memory{untyped}},
		{"note and invoice", []string{"invoice", "note"}, []vector.Memory{note, invoice, both, untyped}},
		{"invoice", []string{"invoice", "invoice"}, []vector.Memory{invoice, untyped}},
	} {
		want := ids(tc.want...)
		res := list(tc.readable)
		if got := hitIDs(res.Hits); !slices.Equal(got, want) || res.Total != len(want) {
			t.Errorf("listing readable %s: got %v (total %d), want %v", tc.name, got, res.Total, want)
		}
		// A hybrid search: both signals must leave the rows out.
		res = search(t, s, vector.Query{
			Filter: vector.Filter{UserID: alice, Collections: []string{"s"}, ReadableTypes: tc.readable},
			Text:   "receipt", Vector: unit(32, 0), Space: testSpace,
		})
		got := hitIDs(res.Hits)
		slices.Sort(got)
		want = slices.Sorted(slices.Values(want))
		if !slices.Equal(got, want) || res.Total != len(want) {
			t.Errorf("search readable %s: got %v (total %d), want %v", tc.name, got, res.Total, want)
		}
		for _, h := range res.Hits {
			if !slices.Equal(h.Signals, []vector.Signal{vector.SignalVector, vector.SignalText}) {
				t.Errorf("search readable %s: hit %s found by %v, want by vector and text", tc.name, h.ID, h.Signals)
			}
		}
	}

	// Reembed replaces every row: the types stay, and so does the filter,
	// also on a driver that caches rows.
	axes := vector.Space{Embedder: "test:axes", Dimension: 16}
	n, err := s.Reembed(t.Context(), alice, "s", axes.Embedder, func(_ context.Context, ms []vector.Memory) ([][]float32, error) {
		out := make([][]float32, len(ms))
		for i := range ms {
			out[i] = unit(16, 0)
		}
		return out, nil
	})
	if err != nil || n != len(docs) {
		t.Fatalf("Reembed = %d, %v; want %d", n, err, len(docs))
	}
	getTypes("after Reembed")
	res = search(t, s, vector.Query{
		Filter: vector.Filter{UserID: alice, Collections: []string{"s"}, ReadableTypes: []string{"note"}},
		Text:   noMatchText, Vector: unit(16, 0), Space: axes,
	})
	want := ids(note, untyped)
	slices.Sort(want) // equally similar: by id
	if got := hitIDs(res.Hits); !slices.Equal(got, want) {
		t.Errorf("vector search readable note after Reembed: got %v, want %v", got, want)
	}
}

// testTypesTakeNoSlots checks that the rows ReadableTypes leaves out do
// not take the places of rows that pass it: more typed rows than a signal
// returns (vector.MinDepth) are nearer the query's vector and richer in
// its word, and newer, than the untyped ones, and a page of the untyped
// ones is still full, from both signals and from listings.
func testTypesTakeNoSlots(t *testing.T, h Harness) {
	s := open(t, h)
	const typed, untyped = vector.MinDepth + 20, 5
	var in []vector.Memory
	for i := range typed {
		in = append(in, vector.Memory{
			ID: fmt.Sprintf("mem_typed_%03d", i), UserID: alice, Collection: "k", Text: "invoice receipt receipt receipt",
			Types: []string{"invoice"}, CreatedAt: epoch.Add(time.Duration(untyped+i) * time.Hour),
			Embedding: along(32, 0.99, 1+i%31),
		})
	}
	for i := range untyped {
		in = append(in, vector.Memory{
			ID: fmt.Sprintf("mem_plain_%d", i), UserID: alice, Collection: "k",
			Text:      "a receipt kept among many other words that dilute it considerably",
			CreatedAt: epoch.Add(time.Duration(i) * time.Hour), Embedding: along(32, 0.8-0.01*float64(i), 1+i),
		})
	}
	// A second collection, so that listings of both merge them.
	in = append(in,
		vector.Memory{ID: "mem_other_typed", UserID: alice, Collection: "other", Text: "invoice receipt", Types: []string{"invoice"},
			CreatedAt: epoch.Add(1000 * time.Hour), Embedding: unit(32, 0)},
		vector.Memory{ID: "mem_other_plain", UserID: alice, Collection: "other", Text: "a receipt with other words",
			CreatedAt: epoch.Add(-time.Hour), Embedding: along(32, 0.75, 7)},
	)
	save(t, s, testSpace, in...)
	plain := func(ix ...int) []string {
		out := make([]string, len(ix))
		for i, x := range ix {
			out[i] = fmt.Sprintf("mem_plain_%d", x)
		}
		return out
	}
	readable := vector.Filter{UserID: alice, Collections: []string{"k"}, ReadableTypes: []string{"note"}}

	for _, tc := range []struct {
		name    string
		f       vector.Filter
		text    string
		vec     []float32
		signals []vector.Signal
	}{
		{"hybrid", readable, "receipt", unit(32, 0), []vector.Signal{vector.SignalVector, vector.SignalText}},
		{"vector", readable, noMatchText, unit(32, 0), []vector.Signal{vector.SignalVector}},
		{"text", readable, "receipt", make([]float32, 32), []vector.Signal{vector.SignalText}},
		{"hybrid with a keyword", vector.Filter{UserID: alice, Collections: []string{"k"}, ReadableTypes: []string{},
			Keywords: []string{"receipt"}}, "receipt", unit(32, 0), []vector.Signal{vector.SignalVector, vector.SignalText}},
	} {
		res := search(t, s, vector.Query{Filter: tc.f, Text: tc.text, Vector: tc.vec, Space: testSpace, Limit: untyped})
		got := hitIDs(res.Hits)
		slices.Sort(got)
		if want := plain(0, 1, 2, 3, 4); !slices.Equal(got, want) || res.Total != untyped {
			t.Errorf("%s search of %d: got %v (total %d), want the %d untyped rows %v", tc.name, untyped, got, res.Total, untyped, want)
		}
		for _, h := range res.Hits {
			if !slices.Equal(h.Signals, tc.signals) {
				t.Errorf("%s search: hit %s found by %v, want %v", tc.name, h.ID, h.Signals, tc.signals)
			}
		}
	}

	for _, tc := range []struct {
		name string
		q    vector.Query
		want []string
	}{
		{"newest", vector.Query{Filter: readable, Limit: 3}, plain(4, 3, 2)},
		{"newest without a total", vector.Query{Filter: readable, Limit: 3, NoTotal: true}, plain(4, 3, 2)},
		{"oldest", vector.Query{Filter: readable, Limit: 3, Sort: vector.SortCreatedAt, Ascending: true}, plain(0, 1, 2)},
		{"second page", vector.Query{Filter: readable, Limit: 3, Offset: 3}, plain(1, 0)},
		{"newest of two collections", vector.Query{Filter: vector.Filter{UserID: alice, Collections: []string{"k", "other"},
			ReadableTypes: []string{}}, Limit: 6}, append(plain(4, 3, 2, 1, 0), "mem_other_plain")},
	} {
		res := search(t, s, tc.q)
		total := untyped
		if len(tc.q.Collections) > 1 {
			total++
		}
		if tc.q.NoTotal {
			total = 0
		}
		if got := hitIDs(res.Hits); !slices.Equal(got, tc.want) || res.Total != total {
			t.Errorf("listing %s: got %v (total %d), want %v (total %d)", tc.name, got, res.Total, tc.want, total)
		}
	}
}
