package batch

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/cairnkg/cairn/vector/embed"
)

// fakeModel tokenizes a text into one id per word (the word's length) and
// encodes a sequence as the unit vector along axis len(seq)-1, so that the
// chunks of a text and their weights can be read back from its vector.
func fakeModel(maxTokens int) Model {
	return Model{
		Tokenize: func(s string) []int32 {
			var ids []int32
			for _, w := range strings.Fields(s) {
				ids = append(ids, int32(len(w)))
			}
			return ids
		},
		Encode: func(seqs [][]int32, _ int) [][]float32 {
			out := make([][]float32, len(seqs))
			for i, s := range seqs {
				out[i] = make([]float32, maxTokens)
				out[i][len(s)-1] = 1
			}
			return out
		},
		MaxTokens:   maxTokens,
		BatchTokens: 4,
		Dimension:   maxTokens,
	}
}

// TestEmbedChunks checks the rule for long texts: consecutive chunks of
// MaxTokens, averaged with their token counts as weights and
// renormalised; a blank text or one without tokens gets a zero vector;
// every text keeps its place whatever the batches.
func TestEmbedChunks(t *testing.T) {
	m := fakeModel(3)
	m.Tokenize = func(s string) []int32 {
		if s == "none" {
			return nil
		}
		return fakeModel(3).Tokenize(s)
	}
	texts := []string{"a b", "", "a b c d e", "none", "a", "  "}
	got, err := Embed(context.Background(), m, texts, 2)
	if err != nil {
		t.Fatal(err)
	}
	// "a b c d e": a chunk of 3 (axis 2, weight 3) and one of 2 (axis 1,
	// weight 2).
	n := float32(math.Sqrt(13))
	want := [][]float32{{0, 1, 0}, {0, 0, 0}, {0, 2 / n, 3 / n}, {0, 0, 0}, {1, 0, 0}, {0, 0, 0}}
	for i := range texts {
		for j := range want[i] {
			if math.Abs(float64(got[i][j]-want[i][j])) > 1e-6 {
				t.Errorf("Embed(%q) = %v, want %v", texts[i], got[i], want[i])
				break
			}
		}
	}
}

// TestEmbedCancelled checks that a done context stops Embed with its error.
func TestEmbedCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Embed(ctx, fakeModel(3), []string{"a b", "c d"}, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed with a cancelled context: err %v, want context.Canceled", err)
	}
}

// TestEmbedHonoursCores: without a bound, a batch's Encode may use
// GOMAXPROCS goroutines and the batches run on up to workers; with
// embed.WithCores(ctx, 1), Encode gets 1 and no two batches run at once.
func TestEmbedHonoursCores(t *testing.T) {
	m := fakeModel(4)
	var mu sync.Mutex
	var running, peak int
	var cores []int
	encode := m.Encode
	m.Encode = func(seqs [][]int32, n int) [][]float32 {
		mu.Lock()
		running++
		peak, cores = max(peak, running), append(cores, n)
		mu.Unlock()
		defer func() { mu.Lock(); running--; mu.Unlock() }()
		return encode(seqs, n)
	}
	texts := strings.Fields(strings.Repeat("aa bbb c dddd ", 16)) // 64 texts of one token: 16 batches of 4
	if _, err := Embed(embed.WithCores(t.Context(), 1), m, texts, 4); err != nil {
		t.Fatal(err)
	}
	if peak != 1 || len(cores) != 16 {
		t.Errorf("bounded to one core: %d batches at once, %d calls", peak, len(cores))
	}
	for _, n := range cores {
		if n != 1 {
			t.Fatalf("bounded to one core, Encode was allowed %d", n)
		}
	}
	cores = nil
	if _, err := Embed(t.Context(), m, texts[:1], 4); err != nil {
		t.Fatal(err)
	}
	if want := runtime.GOMAXPROCS(0); len(cores) != 1 || cores[0] != want {
		t.Errorf("unbounded, Encode was allowed %v, want [%d]", cores, want)
	}
}
