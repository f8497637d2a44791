package embedded

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/vector"
)

// TestNearestSplitMatchesOneScan: a search over enough rows to be split
// between processors (scanParts) answers exactly what one scan of them all
// answers, ties between equal similarities included (they are broken by
// id whichever part found them), on every way rows are chosen: all of
// them, by tag from the cache, and by a filter read from SQLite.
func TestNearestSplitMatchesOneScan(t *testing.T) {
	db := sqlitetest.Open(t)
	s := vector.NewStore(New(db))
	space := vector.Space{Embedder: "test", Dimension: 4}
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// The store splits scans of parallelRows rows; this test, to stay
	// quick, splits scans of 100.
	const rows, splitRows = 2000, 100
	var ms []vector.Memory
	for i := range rows {
		tags := []string{"all"}
		if i%3 != 0 {
			tags = append(tags, "most")
		}
		// Few distinct vectors, so that many rows tie.
		m := vector.Memory{ID: fmt.Sprintf("mem_%06d", (i*7919)%rows), UserID: "u", Collection: "c", Text: fmt.Sprint("memory ", i), Tags: tags,
			CreatedAt: epoch.Add(time.Duration(i) * time.Second), Metadata: map[string]any{"parity": []string{"even", "odd"}[i%2]},
			Embedding: []float32{float32(i % 5), float32(i % 7), 1, float32(i % 3)}}
		ms = append(ms, m)
	}
	if _, err := s.Save(t.Context(), space, ms...); err != nil {
		t.Fatal(err)
	}
	d := New(db)
	d.splitRows = splitRows
	filters := map[string]vector.Filter{
		"all":      {},
		"tag":      {Tags: []string{"most"}},
		"metadata": {Metadata: map[string]string{"parity": "odd"}},
		"created":  {OccurredFrom: epoch.Add(2 * time.Minute), OccurredTo: epoch.Add(25 * time.Minute)},
	}
	for name, f := range filters {
		f.UserID, f.Collections = "u", []string{"c"}
		for _, k := range []int{1, 10, 100} {
			q := vector.VectorQuery{Filter: f, Vector: []float32{2, 3, 1, 1}, MinSimilarity: -1, K: k}
			procs := runtime.GOMAXPROCS(1)
			one, err := d.Nearest(t.Context(), q)
			runtime.GOMAXPROCS(max(procs, 4))
			split, err2 := d.Nearest(t.Context(), q)
			runtime.GOMAXPROCS(procs)
			if err != nil || err2 != nil {
				t.Fatalf("%s k=%d: %v, %v", name, k, err, err2)
			}
			if len(one) != k {
				t.Errorf("%s k=%d: %d rows", name, k, len(one))
			}
			if diff := cmp.Diff(one, split); diff != "" {
				t.Errorf("%s k=%d: split scan differs from one scan (-one +split):\n%s", name, k, diff)
			}
		}
	}
}
