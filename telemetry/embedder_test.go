package telemetry

import (
	"context"
	"testing"

	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
)

// thresholdEmbedder is an embedder with its own search threshold.
type thresholdEmbedder struct{ embed.Embedder }

func (thresholdEmbedder) MinSimilarity() float64 { return 0.4 }

type probing struct{ embed.Embedder }

func (probing) Probe(context.Context) error { return nil }

// TestInstrumentEmbedderKeepsCapabilities: the decorator keeps the name,
// the dimension, a Prober, and the embedder's default search threshold, so
// that metrics never change which memories a search returns.
func TestInstrumentEmbedderKeepsCapabilities(t *testing.T) {
	m := NewMetrics()
	local := embed.NewLocal()
	for name, tc := range map[string]struct {
		e         embed.Embedder
		threshold float64
		prober    bool
	}{
		"plain":      {local, vector.DefaultMinSimilarity, false},
		"threshold":  {thresholdEmbedder{local}, 0.4, false},
		"prober":     {probing{local}, vector.DefaultMinSimilarity, true},
		"both, deep": {probing{thresholdEmbedder{local}}, vector.DefaultMinSimilarity, true},
	} {
		got := InstrumentEmbedder(tc.e, m, nil)
		if got.Name() != local.Name() || got.Dimension() != local.Dimension() {
			t.Errorf("%s: name %q, dimension %d; want the embedder's", name, got.Name(), got.Dimension())
		}
		th, ok := got.(embed.Thresholder)
		if !ok || th.MinSimilarity() != tc.threshold {
			t.Errorf("%s: threshold %v (%v), want %v", name, th, ok, tc.threshold)
		}
		if _, ok := got.(embed.Prober); ok != tc.prober {
			t.Errorf("%s: Prober %v, want %v", name, ok, tc.prober)
		}
		if _, err := got.Embed(t.Context(), []string{"coffee"}); err != nil {
			t.Fatal(err)
		}
	}
}
