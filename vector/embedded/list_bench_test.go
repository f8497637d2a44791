package embedded_test

import (
	"strings"
	"testing"

	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/vectortest"
)

// BenchmarkListFiltered lists the newest 10 of 100,000 memories that
// carry a tag, for tags on 0.1% to 50% of them, and two tags (on 10% and
// 1%; the 1% are among the 10%): a search_memory without text, with tag
// filters.
func BenchmarkListFiltered(b *testing.B) {
	s := openStore(b)
	vectortest.Load(b, s, vectortest.BenchConfig{Dim: 8})
	cases := [][]string{{"p10", "p1"}}
	for _, f := range vectortest.BenchFilters {
		cases = append(cases, []string{f.Tag})
	}
	for _, tags := range cases {
		b.Run("tags_"+strings.Join(tags, "_"), func(b *testing.B) {
			for b.Loop() {
				res, err := s.Search(b.Context(), vector.Query{Filter: vector.Filter{UserID: vectortest.BenchUser,
					Collections: []string{vectortest.BenchCollection}, Tags: tags}, Limit: 10})
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Hits) != 10 {
					b.Fatalf("%d hits", len(res.Hits))
				}
			}
		})
	}
}
