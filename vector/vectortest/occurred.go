package vectortest

import (
	"slices"
	"testing"
	"time"

	"github.com/cairnkg/cairn/vector"
)

// occurredAt is when m happened as Save records it: OccurredAt, or
// CreatedAt when the caller left it zero.
func occurredAt(m vector.Memory) time.Time {
	if m.OccurredAt.IsZero() {
		return m.CreatedAt
	}
	return m.OccurredAt
}

// testOccurredAt checks that a memory keeps the time it happened, apart
// from the time it was saved, and that date filters bound the former.
func testOccurredAt(t *testing.T, h Harness) {
	s := open(t, h)
	saved := epoch.Add(48 * time.Hour)
	long := time.Date(2019, time.March, 3, 9, 30, 0, 123456789, time.FixedZone("CET", 3600))
	ms := save(t, s, testSpace,
		vector.Memory{UserID: alice, Collection: "talk", Text: "we met at the harbour", CreatedAt: saved, OccurredAt: long, Embedding: unit(32, 1)},
		vector.Memory{UserID: alice, Collection: "talk", Text: "saved and said today", CreatedAt: saved, Embedding: unit(32, 2)},
	)
	wantLong := long.UTC().Truncate(time.Microsecond)
	got, err := s.Get(t.Context(), alice, []string{ms[0].ID, ms[1].ID})
	if err != nil || len(got) != 2 {
		t.Fatalf("get: %v, %v", got, err)
	}
	if !got[0].OccurredAt.Equal(wantLong) || got[0].OccurredAt.Location() != time.UTC || !got[0].CreatedAt.Equal(saved) {
		t.Errorf("occurred_at %v, created_at %v; want %v and %v", got[0].OccurredAt, got[0].CreatedAt, wantLong, saved)
	}
	if !got[1].OccurredAt.Equal(saved) {
		t.Errorf("a memory saved without occurred_at has %v, want its created_at %v", got[1].OccurredAt, saved)
	}
	for _, tc := range []struct {
		name     string
		from, to time.Time
		text     string
		want     []string
	}{
		{"listing, the year it happened", time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2019, 12, 31, 0, 0, 0, 0, time.UTC), "", []string{ms[0].ID}},
		{"listing, the day it was saved", saved.Add(-time.Hour), saved.Add(time.Hour), "", []string{ms[1].ID}},
		{"search, the year it happened", time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2019, 12, 31, 0, 0, 0, 0, time.UTC), "harbour today", []string{ms[0].ID}},
		{"search, inclusive bounds", wantLong, wantLong, "harbour today", []string{ms[0].ID}},
	} {
		q := vector.Query{Filter: vector.Filter{UserID: alice, Collections: []string{"talk"}, OccurredFrom: tc.from, OccurredTo: tc.to}}
		if tc.text != "" {
			q.Text, q.Vector, q.Space, q.MinSimilarity = tc.text, unit(32, 1), testSpace, ptr(-1.0)
		}
		if got := hitIDs(search(t, s, q).Hits); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
