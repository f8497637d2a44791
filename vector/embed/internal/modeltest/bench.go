package modeltest

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Embedder is what the benchmark needs of a model.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// words are the words the benchmark texts are made of.
var words = strings.Fields(`the meeting about the quarterly budget moved to
Thursday afternoon because the finance team needs more time to review the
invoices from our suppliers and the travel expenses of the sales department
while the engineers finish the release of the new search feature`)

// Text returns a text of exactly n tokens as count counts them.
func Text(b *testing.B, count func(string) int, n int) string {
	b.Helper()
	var ws []string
	for i := 0; ; i++ {
		ws = append(ws, words[i%len(words)])
		text := strings.Join(ws, " ")
		switch got := count(text); {
		case got == n:
			return text
		case got > n:
			b.Fatalf("no text of exactly %d tokens", n)
		}
	}
}

// BenchmarkEmbed measures e.Embed on batches of 64 texts of 16 and 64
// tokens, on every core GOMAXPROCS allows (go test -cpu 1 for one core).
// It reports texts per second per core, and the bytes and allocations of
// one text. Its question case embeds one text of 16 tokens a call, as
// search_memory embeds its question: ns/op is a question's latency.
func BenchmarkEmbed(b *testing.B, e Embedder, count func(string) int) {
	b.Run("question", func(b *testing.B) {
		question := []string{Text(b, count, 16)}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.Embed(context.Background(), question); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, tokens := range []int{16, 64} {
		b.Run(fmt.Sprintf("tokens=%d", tokens), func(b *testing.B) {
			text := Text(b, count, tokens)
			batch := make([]string, 64)
			for i := range batch {
				batch[i] = text
			}
			b.ReportAllocs()
			start := time.Now()
			for b.Loop() {
				if _, err := e.Embed(context.Background(), batch); err != nil {
					b.Fatal(err)
				}
			}
			texts := float64(b.N * len(batch))
			b.ReportMetric(texts/time.Since(start).Seconds()/float64(runtime.GOMAXPROCS(0)), "texts/s/core")
		})
	}
}

// BenchmarkModelMemory reports the heap a loaded model takes (load
// returns it), in MB.
func BenchmarkModelMemory(b *testing.B, load func() (any, error)) {
	var before, after runtime.MemStats
	var m any
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		var err error
		if m, err = load(); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
	}
	runtime.KeepAlive(m)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MB")
	b.ReportMetric(0, "ns/op")
}
