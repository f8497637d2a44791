package bge

import (
	"testing"

	"github.com/cairnkg/cairn/vector/embed/internal/modeltest"
)

// BenchmarkEmbed measures Embed on batches of 64 texts of 16 and 64
// tokens (modeltest.BenchmarkEmbed; [CLS] and [SEP] not counted), in texts
// per second per core, as minilm's and uselite's BenchmarkEmbed do.
func BenchmarkEmbed(b *testing.B) {
	e := model(b)
	modeltest.BenchmarkEmbed(b, e, func(s string) int { return len(e.Tokenizer().Encode(s)) })
}

// BenchmarkModelMemory reports the heap the loaded model takes (word and
// position embeddings, weights packed for the matrix products,
// vocabulary), in MB.
func BenchmarkModelMemory(b *testing.B) {
	if !Available() {
		model(b)
	}
	modeltest.BenchmarkModelMemory(b, func() (any, error) { return Load(modelFS, "model") })
}
