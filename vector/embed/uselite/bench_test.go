package uselite

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// benchWords are the words the benchmark texts are made of.
var benchWords = strings.Fields(`the meeting about the quarterly budget moved to
Thursday afternoon because the finance team needs more time to review the
invoices from our suppliers and the travel expenses of the sales department
while the engineers finish the release of the new search feature`)

// benchText returns a text of exactly n tokens.
func benchText(b *testing.B, e *Embedder, n int) string {
	b.Helper()
	var words []string
	for i := 0; ; i++ {
		words = append(words, benchWords[i%len(benchWords)])
		text := strings.Join(words, " ")
		switch got := len(e.Tokenizer().Encode(text)); {
		case got == n:
			return text
		case got > n:
			b.Fatalf("no text of exactly %d tokens", n)
		}
	}
}

// BenchmarkEmbed measures Embed on batches of 64 texts of 16 and 64
// tokens, on every core GOMAXPROCS allows (go test -cpu 1 for one core).
// It reports texts per second per core, and the bytes and allocations of
// one text.
func BenchmarkEmbed(b *testing.B) {
	e := model(b)
	for _, tokens := range []int{16, 64} {
		b.Run(fmt.Sprintf("tokens=%d", tokens), func(b *testing.B) {
			text := benchText(b, e, tokens)
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

// BenchmarkModelMemory reports the heap the loaded model takes (weights
// packed for the matrix products, vocabulary and prefix tree), in MB.
func BenchmarkModelMemory(b *testing.B) {
	if !Available() {
		model(b)
	}
	var before, after runtime.MemStats
	var e *Embedder
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		var err error
		e, err = Load(modelFS, "model")
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
	}
	runtime.KeepAlive(e)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MB")
	b.ReportMetric(0, "ns/op")
}
