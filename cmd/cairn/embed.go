package main

import (
	"context"
	"flag"
	"log/slog"
	"strings"
	"time"

	"github.com/cairnkg/cairn/vector/embed"
)

// embedAPIKeyEnv holds the embedding provider's API key. It has no flag:
// a key on the command line would show in ps and shell history.
const embedAPIKeyEnv = "CAIRN_EMBED_API_KEY"

// embedProbeTimeout bounds the start-up check of a remote provider.
const embedProbeTimeout = 10 * time.Second

// embedFlags choose the embedding provider of memories.
type embedFlags struct {
	provider       string
	baseURL        string
	model          string
	dimensions     int
	sendDimensions bool
}

func (e *embedFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&e.provider, "embed-provider", "local", "embedding provider: local (offline, deterministic) or openai (any OpenAI-compatible /embeddings API: OpenAI, Ollama, vLLM, TEI)")
	fs.StringVar(&e.baseURL, "embed-base-url", "", "API root of the openai provider, e.g. https://api.openai.com/v1 or http://localhost:11434/v1; the key comes from "+embedAPIKeyEnv)
	fs.StringVar(&e.model, "embed-model", "", "embedding model of the openai provider, e.g. text-embedding-3-small or nomic-embed-text")
	fs.IntVar(&e.dimensions, "embed-dimensions", 0, "expected vector length of the openai provider; 0 learns it from the provider")
	fs.BoolVar(&e.sendDimensions, "embed-send-dimensions", false, "ask the openai provider for --embed-dimensions (OpenAI text-embedding-3 models support it)")
}

var embedEnv = []envVar{
	{"embed-provider", "CAIRN_EMBED_PROVIDER"},
	{"embed-base-url", "CAIRN_EMBED_BASE_URL"},
	{"embed-model", "CAIRN_EMBED_MODEL"},
	{"embed-dimensions", "CAIRN_EMBED_DIMENSIONS"},
	{"embed-send-dimensions", "CAIRN_EMBED_SEND_DIMENSIONS"},
}

// open builds the embedder the flags name. A remote provider is probed
// once: if it does not answer, serving goes on and memory tools report
// SERVICE_UNAVAILABLE until it does, since the graph tools do not need it.
func (e *embedFlags) open(ctx context.Context, getenv func(string) string, log *slog.Logger) (embed.Embedder, error) {
	provider := strings.ToLower(strings.TrimSpace(e.provider))
	if provider == "local" || provider == "" {
		if e.baseURL != "" || e.model != "" || e.dimensions != 0 {
			return nil, usageError{"--embed-base-url, --embed-model and --embed-dimensions apply to --embed-provider openai only"}
		}
		return embed.NewLocal(), nil
	}
	if provider == "openai" && (e.baseURL == "" || e.model == "") {
		return nil, usageError{"--embed-provider openai needs --embed-base-url and --embed-model"}
	}
	emb, err := embed.New(embed.Config{Provider: provider, OpenAI: embed.OpenAIConfig{
		BaseURL: e.baseURL, Model: e.model, APIKey: getenv(embedAPIKeyEnv),
		Dimensions: e.dimensions, SendDimensions: e.sendDimensions,
	}})
	if err != nil {
		return nil, usageError{err.Error()}
	}
	if p, ok := emb.(embed.Prober); ok {
		pctx, cancel := context.WithTimeout(ctx, embedProbeTimeout)
		defer cancel()
		if err := p.Probe(pctx); err != nil {
			log.Warn("embedding provider is not answering; memory tools fail until it does", "embedder", emb.Name(), "err", err)
		} else {
			log.Info("embedding provider ready", "embedder", emb.Name(), "dimension", emb.Dimension())
		}
	}
	return emb, nil
}
