package knowledge_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed/uselite"
	"github.com/cairnkg/cairn/vector/vectortest"
)

// BenchmarkMemoriesWithModel reports the latency of save_memory and
// search_memory, as the knowledge call behind each tool, with the built-in
// sentence model at 100,000 memories, on each vector driver:
//
//	go test ./knowledge -run '^$' -bench MemoriesWithModel -benchtime 100x
//
// The 100,000 memories are vectortest's clustered vectors recorded in the
// model's space (embedding that many texts with the model would take
// minutes and changes no latency); each save and query embeds its own text
// with the model, so both figures include a real embedding: about 12 words
// for a save, 3 for a query. On PostgreSQL the table is analysed after the
// load, as autovacuum would have done. Searches are hybrid (meaning and words) with
// the model's default threshold, the top 10.
func BenchmarkMemoriesWithModel(b *testing.B) {
	model, err := uselite.New()
	if errors.Is(err, uselite.ErrUnavailable) {
		b.Skip("the model files are not built in: run scripts/provision-model.sh")
	}
	if err != nil {
		b.Fatal(err)
	}
	space := vector.Space{Embedder: model.Name(), Dimension: model.Dimension()}
	caller := knowledge.Caller{UserID: vectortest.BenchUser, AgentID: "bench"}
	words := []string{"coffee", "lasagna", "invoice", "meeting", "garden", "holiday", "dentist", "budget", "concert", "train", "recipe", "rent"}
	for _, mb := range memoryBackends {
		b.Run(mb.name, func(b *testing.B) {
			st := mb.open(b)
			cfg := vectortest.BenchConfig{Dim: model.Dimension(), Space: space}
			if st.settle != nil {
				cfg.AfterLoad = func(b *testing.B) { st.settle(b) }
			}
			vectortest.Load(b, st.memories, cfg)
			svc := knowledge.NewService(st.graph, schema.NewRegistry(), knowledge.Options{Memories: st.memories, Embedder: model})
			text := func(i, n int) string {
				out := fmt.Sprintf("note %d:", i)
				for k := range n {
					out += " " + words[(i*7+k*5)%len(words)]
				}
				return out
			}
			pct := func(lat []time.Duration, p float64) float64 {
				slices.Sort(lat)
				return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
			}
			b.Run("save", func(b *testing.B) {
				var lat []time.Duration
				i := 0
				for b.Loop() {
					start := time.Now()
					if _, err := svc.SaveMemory(b.Context(), caller, knowledge.MemoryRequest{Collection: vectortest.BenchCollection, Text: text(i, 12)}); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
					i++
				}
				b.ReportMetric(pct(lat, 0.50), "p50-ms")
				b.ReportMetric(pct(lat, 0.95), "p95-ms")
			})
			b.Run("search", func(b *testing.B) {
				var lat []time.Duration
				i := 0
				for b.Loop() {
					start := time.Now()
					if _, err := svc.SearchMemories(b.Context(), caller, knowledge.MemoryQuery{Collections: []string{vectortest.BenchCollection}, Query: text(i, 3)}); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
					i++
				}
				b.ReportMetric(pct(lat, 0.50), "p50-ms")
				b.ReportMetric(pct(lat, 0.95), "p95-ms")
			})
		})
	}
}
