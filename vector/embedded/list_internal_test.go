package embedded

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/vector"
)

// TestListFormsAgree: a listing with tag filters gives the same page and
// total whether its filters are read first (seqIn) or probed memory by
// memory (seqExists), whichever denseFilter picks, and its total is the
// count of what the plain condition keeps (countQuery joins).
func TestListFormsAgree(t *testing.T) {
	db, err := sqlite.OpenFile(t.Context(), filepath.Join(t.TempDir(), "cairn.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := vector.NewStore(New(db))
	space := vector.Space{Embedder: "test", Dimension: 2}
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ms []vector.Memory
	for i := range 1200 {
		tags := []string{"all"}
		if i%2 == 0 {
			tags = append(tags, "half")
		}
		if i%97 == 0 {
			tags = append(tags, "few")
		}
		m := vector.Memory{ID: fmt.Sprintf("mem_%05d", i), UserID: "u", Collection: []string{"a", "b"}[i%3/2], Text: fmt.Sprint("memory ", i),
			Tags: tags, CreatedAt: epoch.Add(time.Duration(i%700) * time.Minute), Embedding: []float32{1, float32(i)}}
		if i%5 == 0 {
			c := float64(i%10) / 10
			m.Confidence = &c
		}
		ms = append(ms, m)
	}
	if _, err := s.Save(t.Context(), space, ms...); err != nil {
		t.Fatal(err)
	}
	d := New(db)
	defer func(f func(int, int, int) bool) { denseFilter = f }(denseFilter)
	for _, tags := range [][]string{{"half"}, {"few"}, {"half", "few"}, {"all", "half"}, nil} {
		for _, q := range []vector.ListQuery{
			{Limit: 10}, {Limit: 100, Offset: 30}, {Limit: 10, Offset: 590},
			{Limit: 10, Ascending: true}, {Limit: 25, Sort: vector.SortConfidence}, {Limit: 25, Sort: vector.SortConfidence, Ascending: true},
		} {
			for _, cols := range [][]string{{"a"}, {"a", "b"}} {
				q.Filter = vector.Filter{UserID: "u", Collections: cols, Tags: tags}
				if q.Sort == "" {
					q.Sort = vector.SortCreatedAt
				}
				var got [2][]vector.Memory
				var total [2]int
				for k, dense := range []bool{false, true} {
					denseFilter = func(int, int, int) bool { return dense }
					if got[k], total[k], err = d.List(t.Context(), q); err != nil {
						t.Fatal(err)
					}
				}
				name := fmt.Sprintf("tags %v, collections %v, %+v", tags, cols, q)
				where, args := whereClause(q.Filter)
				var plain int
				if err := db.Read.QueryRowContext(t.Context(), `SELECT count(*) FROM memories m WHERE `+where, args...).Scan(&plain); err != nil {
					t.Fatal(err)
				}
				if total[0] != plain {
					t.Errorf("%s: total %d, want %d", name, total[0], plain)
				}
				if diff := cmp.Diff(got[0], got[1]); diff != "" || total[0] != total[1] {
					t.Errorf("%s: the two forms differ (totals %d, %d; -in +exists):\n%s", name, total[0], total[1], diff)
				}
				if len(got[0]) == 0 && q.Offset < total[0] {
					t.Errorf("%s: an empty page of %d", name, total[0])
				}
			}
		}
	}
}
