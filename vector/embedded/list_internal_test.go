package embedded

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/vector"
)

// TestListFormsAgree: a listing with tag filters gives the same page
// whether its filters are read first (seqIn) or probed memory by memory
// (seqExists), whichever listForm picks, and its total is the count of
// what the plain condition keeps (countQuery joins).
func TestListFormsAgree(t *testing.T) {
	db := sqlitetest.Open(t)
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
				// The page in each form, and the total List gives with it.
				var got [2][]vector.Memory
				var total [2]int
				for k, form := range []seqForm{seqIn, seqExists} {
					var err error
					if got[k], err = d.page(t.Context(), q, form); err != nil {
						t.Fatal(err)
					}
					if _, total[k], err = d.List(t.Context(), q); err != nil {
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

// TestFilterPlans: the plans that make filtered listings and searches
// cost what their filters keep. Two tags are never two lists of seqs
// (SQLite seeks every pair of them); a count with a tag walks the tag's
// rows and finds memories by rowid; a listing whose filter keeps many
// walks the memories newest first and probes the filter.
func TestFilterPlans(t *testing.T) {
	db := sqlitetest.Open(t)
	two := vector.Filter{UserID: "u", Collections: []string{"a"}, Tags: []string{"x", "y"}, EntityID: "ent_1"}
	twoWhere, twoArgs := whereClause(two)
	count, countArgs := countQuery(vector.Filter{UserID: "u", Collections: []string{"a"}, Tags: []string{"x"}})
	dense, denseArgs := whereClauseAs(vector.Filter{UserID: "u", Collections: []string{"a"}, Tags: []string{"x"}}, seqExists)
	for _, c := range []struct {
		name, query string
		args        []any
		want        []string
		not         []string
	}{
		{"a listing with two tags and an entity, by confidence", `SELECT m.id FROM memories m WHERE ` + twoWhere +
			` ORDER BY m.confidence IS NULL, m.confidence, m.id LIMIT 10`, twoArgs, nil, []string{"LIST SUBQUERY 2"}},
		{"the rows a search with two tags and an entity may return", `SELECT m.collection, m.seq FROM memories m WHERE ` + twoWhere +
			` ORDER BY m.seq`, twoArgs, nil, []string{"LIST SUBQUERY 2"}},
		{"a count with a tag", count, countArgs,
			[]string{"SEARCH j USING PRIMARY KEY (user_id=? AND tag=?)", "SEARCH m USING INTEGER PRIMARY KEY (rowid=?)"}, nil},
		{"a listing whose tag keeps many", `SELECT m.id FROM memories m WHERE ` + dense + ` ORDER BY m.created_at DESC, m.id LIMIT 10`, denseArgs,
			[]string{"memories_collection_created", "EXISTS USING PRIMARY KEY"}, []string{"LIST SUBQUERY", "TEMP B-TREE"}},
	} {
		plan, err := sqlite.QueryPlan(t.Context(), db.Read, c.query, c.args...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, w := range c.want {
			if !strings.Contains(plan, w) {
				t.Errorf("plan of %s: %s; want %s", c.name, plan, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(plan, n) {
				t.Errorf("plan of %s: %s; want no %s", c.name, plan, n)
			}
		}
	}
}
