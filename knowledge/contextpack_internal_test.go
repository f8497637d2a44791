package knowledge

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
)

// TestPackBoundsChangeNothing checks that the size bounds with which
// pack spares encoding the response after each addition decide exactly as
// encoding it would: on random context loads and budgets, from ones that
// cut the profile to ones that fit everything, pack gives what a packer
// that measures every addition gives. The packer that measures encodes
// the response once per addition, which costs about 30 ms a round under
// the race detector: 100 rounds by default, 400 with
// CAIRN_TEST_FULL_SCALE=1 (the first 100 are the same).
func TestPackBoundsChangeNothing(t *testing.T) {
	rounds := 100
	if fullScale {
		rounds = 400
	}
	rng := rand.New(rand.NewPCG(18, 11))
	word := func() string {
		words := []string{"quill", "acme", "<b>", "Zoë", "engineer", "\u2028", "&", "launch", "42", "\"quoted\"", "naïve"}
		var b strings.Builder
		for i := range 1 + rng.IntN(12) {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		return b.String()
	}
	value := func() any {
		switch rng.IntN(6) {
		case 0:
			return rng.Float64() * 1e6
		case 1:
			return int64(rng.IntN(100000))
		case 2:
			return []any{word(), rng.IntN(9)}
		case 3:
			return map[string]any{"a": word(), "b": strings.Repeat("x", rng.IntN(600))}
		case 4:
			return strings.Repeat(word()+" ", 1+rng.IntN(40))
		default:
			return word()
		}
	}
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for round := range rounds {
		in := contextInput{profile: map[string]any{}, memoriesAvail: rng.IntN(2) == 0, readableEntities: rng.IntN(30000)}
		for i := range rng.IntN(8) {
			in.profile[fmt.Sprint("member_", i)] = value()
		}
		for i := range rng.IntN(12) {
			in.types = append(in.types, TypeCount{EntityType: fmt.Sprint("type_", i), Count: rng.IntN(5000)})
		}
		for i := range rng.IntN(6) {
			in.collections = append(in.collections, MemoryCollection{Name: fmt.Sprint("col_", i), Count: rng.IntN(900)})
		}
		for i := range rng.IntN(ContextTopEntities + 1) {
			snap := map[string]any{"name": fmt.Sprint("Entity ", i)}
			fields := rng.IntN(10)
			if rng.IntN(20) == 0 {
				fields = 200 // facts_omitted in three digits
			}
			for j := range fields {
				snap[fmt.Sprint("field_", j)] = value()
			}
			// Raw fields too (facts marked raw_fields), one sometimes
			// shadowed by a snapshot field of its name.
			var raw map[string]any
			for j := range rng.IntN(4) {
				if raw == nil {
					raw = map[string]any{}
				}
				raw[fmt.Sprint("raw_", j)] = value()
				if rng.IntN(4) == 0 {
					raw["field_0"] = value()
				}
			}
			in.ranked = append(in.ranked, rankedEntity{score: rng.Float64(), raw: raw, entity: graph.Entity{
				ID: fmt.Sprint("ent_", round, "_", i), Type: "person", CanonicalName: fmt.Sprint("Entity ", i), Snapshot: snap}})
		}
		for i := range rng.IntN(ContextRecentMemories + 1) {
			m := MemorySummary{ID: fmt.Sprint("mem_", i), Collection: "notes", Text: strings.Repeat(word()+" ", rng.IntN(80)),
				CreatedAt: at.Add(-time.Duration(i) * time.Minute)}
			if rng.IntN(2) == 0 {
				m.Title = word()
			}
			in.recent = append(in.recent, m)
		}
		if rng.IntN(3) == 0 {
			in.notes = []string{"only the 20000 most recently observed entities were ranked"}
		}
		budget := 50 + rng.IntN(6000)
		got, gerr := newPacker(budget, "topic", in).pack(in)
		all := newPacker(budget, "topic", in)
		all.measureAll = true
		want, werr := all.pack(in)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d, budget %d: pack gave\n%+v (%v)\nmeasuring every addition gives\n%+v (%v)", round, budget, got, gerr, want, werr)
		}
	}
}
