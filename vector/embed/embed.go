package embed

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Embedder turns texts into vectors of a fixed dimension. Implementations are
// safe for concurrent use.
type Embedder interface {
	// Embed returns one vector per text, in input order. Every non-zero
	// vector is L2-normalised (unit length), so cosine similarity is a dot
	// product. An empty or whitespace-only text yields a zero vector.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Dimension is the length of every vector Embed returns; 0 means not
	// yet known (see Prober).
	Dimension() int
	// Name identifies provider and model, e.g. "local:hash-ngram-v1:384" or
	// "openai:text-embedding-3-small". It is recorded with each collection
	// so that a provider change is detected and `cairn reembed` can rebuild.
	Name() string
}

// Prober is implemented by embedders whose dimension is learned from the
// provider, so that callers can fail fast at start-up instead of on the
// first write.
type Prober interface {
	// Probe makes one small request so that Dimension is known, and reports
	// a clear error if the provider is unreachable or rejects the
	// credentials.
	Probe(ctx context.Context) error
}

// Thresholder is implemented by embedders that know the cosine similarity
// at which their vectors start to mean "related": memory search uses it as
// the default of minSimilarity when the client passes none. Embedders
// without it get vector.DefaultMinSimilarity.
type Thresholder interface {
	// MinSimilarity is the default threshold, measured on the embedder's
	// own vectors.
	MinSimilarity() float64
}

// ErrDimensionMismatch is returned (wrapped, with both lengths in the
// message) when a provider returns a vector whose length differs from the
// known Dimension; storing it would corrupt the collection.
var ErrDimensionMismatch = errors.New("embed: dimension mismatch")

// Provider names accepted by Config.Provider.
const (
	providerLocal  = "local"
	providerOpenAI = "openai"
)

// Config selects and configures a provider; it is filled from flags and
// environment by the command line.
type Config struct {
	// Provider is "local" or "openai" (case-insensitive); empty means
	// "local".
	Provider string
	// OpenAI configures the "openai" provider and is ignored otherwise.
	OpenAI OpenAIConfig
}

// New builds the embedder that cfg names, so that the command line needs no
// knowledge of the individual constructors. An unknown provider is an error
// that lists the valid ones.
func New(cfg Config) (Embedder, error) {
	switch p := strings.ToLower(strings.TrimSpace(cfg.Provider)); p {
	case "", providerLocal:
		return NewLocal(), nil
	case providerOpenAI:
		o, err := NewOpenAI(cfg.OpenAI)
		if err != nil {
			return nil, err
		}
		return o, nil
	default:
		return nil, fmt.Errorf("embed: unknown provider %q (valid: %s, %s)", cfg.Provider, providerLocal, providerOpenAI)
	}
}
