package knowledge_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cairnkg/cairn/knowledge"
)

// BenchmarkUserContext measures get_user_context (the knowledge call behind
// the tool) on the embedded store with 10,000 entities and a memory index of
// 10,000 memories, at the default budget, without and with a topic, and
// reports p50 and p95 latency besides the mean.
//
//	go test -run '^$' -bench UserContext -benchtime 50x ./knowledge/
func BenchmarkUserContext(b *testing.B) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	env := newContextEnv(b, bulkMemories(10_000, now))
	bulkEntities(b, env.graph, alice.UserID, 10_000, now)
	if _, _, err := env.svc.UpdateProfile(b.Context(), alice, map[string]any{"name": "Alice", "city": "Lyon"}, "bench"); err != nil {
		b.Fatal(err)
	}
	for _, topic := range []string{"", "company detail 42"} {
		b.Run(fmt.Sprintf("topic=%q", topic), func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				out, err := env.svc.UserContext(b.Context(), alice, knowledge.ContextRequest{Topic: topic})
				lat = append(lat, time.Since(start))
				if err != nil || out.TokensUsed > out.BudgetTokens {
					b.Fatalf("%v (tokens %d)", err, out.TokensUsed)
				}
			}
			slices.Sort(lat)
			pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.95), "p95-ms")
		})
	}
}
