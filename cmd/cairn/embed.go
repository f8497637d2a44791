package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
	"github.com/cairnkg/cairn/vector/embed/bge"
	"github.com/cairnkg/cairn/vector/embed/minilm"
	"github.com/cairnkg/cairn/vector/embed/uselite"
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
	fs.StringVar(&e.provider, "embed-provider", "", "embedding provider: bge (the built-in bge-small-en-v1.5, offline), use-lite (the built-in Universal Sentence Encoder Lite, offline, faster, weaker on conversations), minilm (the built-in all-MiniLM-L6-v2, offline), local (lexical: shared words, offline, deterministic) or openai (any OpenAI-compatible /embeddings API: OpenAI, Ollama, vLLM, TEI); empty: "+defaultModel+" when built in, else "+fallbackModel+", else local, except on a store whose memories are in another offline embedder's space, which keeps it")
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

// Embedding providers of --embed-provider.
const (
	providerAuto    = ""
	providerLocal   = "local"
	providerUSELite = "use-lite"
	providerMiniLM  = "minilm"
	providerBGE     = "bge"
	providerOpenAI  = "openai"
)

// defaultModel is the built-in model used when no provider is named (one
// of builtInModels): changing this line switches the default embedder. A
// store whose memories are in another offline embedder's space keeps that
// embedder when no provider is named (keepRecordedSpace) until `cairn
// reembed` moves it. bge replaced use-lite as the default with issue 36
// (docs/memories.md has the figures).
const defaultModel = providerBGE

// fallbackModel is the built-in model used when no provider is named and
// the binary lacks the default's files (a build whose Maven step failed),
// before the lexical embedder.
const fallbackModel = providerUSELite

// autoFallback is the embedder of a binary without the default model's
// files when no provider is named: fallbackModel if it has its files, else
// the lexical embedder; the log and /readyz say which, and why.
func autoFallback(log *slog.Logger) embedChoice {
	if m, err := openModel(fallbackModel); err == nil {
		note := missingNote(defaultModel, "memories are embedded with "+m.Name()+" instead")
		log.Warn(note, "embedder", m.Name())
		return embedChoice{Embedder: m, auto: true, note: note}
	}
	note := modelMissing(defaultModel)
	log.Warn(note, "embedder", embed.NewLocal().Name())
	return embedChoice{Embedder: embed.NewLocal(), note: note}
}

// builtInModel is a sentence model this binary may carry: its provider
// name, the space its vectors are in, how to open it, and the script that
// puts its files in place for go build.
type builtInModel struct {
	provider, space string
	open            func() (embed.Embedder, error)
	unavailable     error
	what, script    string
}

// builtInModels are the offline sentence models, by provider name.
var builtInModels = map[string]builtInModel{
	providerUSELite: {providerUSELite, uselite.Name, opener(uselite.New), uselite.ErrUnavailable,
		"the sentence-embedding model", "scripts/provision-model.sh"},
	providerMiniLM: {providerMiniLM, minilm.Name, opener(minilm.New), minilm.ErrUnavailable,
		"the MiniLM sentence-embedding model", "scripts/provision-minilm.sh"},
	providerBGE: {providerBGE, bge.Name, opener(bge.New), bge.ErrUnavailable,
		"the bge-small-en-v1.5 sentence-embedding model", "scripts/provision-bge.sh"},
}

// opener makes a model's New an embed.Embedder constructor (whose nil
// model is never a non-nil embedder).
func opener[M embed.Embedder](open func() (M, error)) func() (embed.Embedder, error) {
	return func() (embed.Embedder, error) {
		m, err := open()
		if err != nil {
			return nil, err
		}
		return m, nil
	}
}

// errNotBuiltIn is what openModel returns for a model whose files the
// binary lacks.
var errNotBuiltIn = errors.New("model not built in")

// openModel returns the built-in model a provider of builtInModels names,
// or errNotBuiltIn.
func openModel(provider string) (embed.Embedder, error) {
	b := builtInModels[provider]
	m, err := b.open()
	if errors.Is(err, b.unavailable) {
		return nil, errNotBuiltIn
	}
	return m, err
}

// inProcess reports whether e is one of the built-in models, which embed
// on the machine's own cores.
func inProcess(e embed.Embedder) bool {
	switch e.(type) {
	case *uselite.Embedder, *minilm.Embedder, *bge.Embedder:
		return true
	}
	return false
}

// embedChoice is the embedder the flags chose, and what serve reports
// about it.
type embedChoice struct {
	embed.Embedder
	// auto is set when no provider was named: on a store whose memories
	// are in the lexical space, serve keeps the lexical embedder (see
	// keepRecordedSpace).
	auto bool
	// note says why the embedder is not the sentence model, for the log
	// and /readyz; empty otherwise.
	note string
}

// modelMissing is the note of a binary built without the files of the
// built-in model provider names, which says how to build them in.
func modelMissing(provider string) string {
	return missingNote(provider, "memory search matches words, not meaning")
}

// missingNote says that the built-in model provider names is not in the
// binary, what follows, and how to build it in.
func missingNote(provider, so string) string {
	b := builtInModels[provider]
	return b.what + " is not built into this binary, so " + so + "; build with ./scripts/serve (or run " + b.script + " before go build)"
}

// open builds the embedder the flags name. A remote provider is probed
// once: if it does not answer, serving goes on and memory tools report
// SERVICE_UNAVAILABLE until it does, since the graph tools do not need it.
// Without a provider it is the built-in model, or the lexical embedder
// (said once in the log) when the binary has no model files.
func (e *embedFlags) open(ctx context.Context, getenv func(string) string, log *slog.Logger) (embedChoice, error) {
	provider := strings.ToLower(strings.TrimSpace(e.provider))
	_, builtIn := builtInModels[provider]
	if provider == providerAuto || provider == providerLocal || builtIn {
		if e.baseURL != "" || e.model != "" || e.dimensions != 0 {
			return embedChoice{}, usageError{"--embed-base-url, --embed-model and --embed-dimensions apply to --embed-provider openai only"}
		}
	}
	if provider == providerLocal {
		return embedChoice{Embedder: embed.NewLocal()}, nil
	}
	if builtIn || provider == providerAuto {
		name := provider
		if provider == providerAuto {
			name = defaultModel
		}
		m, err := openModel(name)
		if errors.Is(err, errNotBuiltIn) && provider == providerAuto {
			return autoFallback(log), nil
		}
		if err != nil {
			if errors.Is(err, errNotBuiltIn) {
				return embedChoice{}, usageError{"--embed-provider " + name + ": " + modelMissing(name)}
			}
			return embedChoice{}, err
		}
		return embedChoice{Embedder: m, auto: provider == providerAuto}, nil
	}
	if provider == providerOpenAI && (e.baseURL == "" || e.model == "") {
		return embedChoice{}, usageError{"--embed-provider openai needs --embed-base-url and --embed-model"}
	}
	emb, err := embed.New(embed.Config{Provider: provider, OpenAI: embed.OpenAIConfig{
		BaseURL: e.baseURL, Model: e.model, APIKey: getenv(embedAPIKeyEnv),
		Dimensions: e.dimensions, SendDimensions: e.sendDimensions,
	}})
	if err != nil {
		if provider != providerOpenAI {
			return embedChoice{}, usageError{fmt.Sprintf("unknown --embed-provider %q (valid: %s, %s, %s, %s, %s)", e.provider, providerBGE, providerUSELite, providerMiniLM, providerLocal, providerOpenAI)}
		}
		return embedChoice{}, usageError{err.Error()}
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
	return embedChoice{Embedder: emb}, nil
}

// keepRecordedSpace returns the embedder to serve a store with: the chosen
// one, except that without a named provider a store whose memory
// collections are in the space of another offline embedder this binary
// has (local or one of builtInModels) keeps that embedder, so that it goes on
// working as before (memory tools refuse a collection of another space)
// when the default changes; `cairn reembed` moves it to the default.
func keepRecordedSpace(ctx context.Context, c embedChoice, memories *vector.Store, log *slog.Logger) (embedChoice, error) {
	if !c.auto {
		return c, nil
	}
	all, err := memories.AllCollections(ctx)
	if err != nil {
		return c, err
	}
	for _, col := range all {
		if col.Space.Embedder == c.Name() {
			continue
		}
		kept, ok := offlineEmbedder(col.Space.Embedder)
		if !ok {
			continue
		}
		note := "this store's memories are in the space of " + kept.Name() + ", so it is kept; `cairn reembed` moves them to " + c.Name()
		log.Info(note, "embedder", kept.Name())
		return embedChoice{Embedder: kept, note: note}, nil
	}
	return c, nil
}

// offlineEmbedder returns the offline embedder whose space is named name,
// when this binary has it.
func offlineEmbedder(name string) (embed.Embedder, bool) {
	if name == embed.NewLocal().Name() {
		return embed.NewLocal(), true
	}
	for _, b := range builtInModels {
		if b.space == name {
			m, err := openModel(b.provider)
			return m, err == nil
		}
	}
	return nil, false
}

// readyDetails are what /readyz says about the embedder of memories.
func (a *app) readyDetails() map[string]string {
	d := map[string]string{"embedder": a.knowledge.EmbedderName()}
	if a.embedNote != "" {
		d["embedder_note"] = a.embedNote
	}
	return d
}
