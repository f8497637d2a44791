package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/vector/embed"
)

// TestAutoEmbedderFallsBack checks what serve embeds with when no provider
// is named and the binary lacks model files: the default model, else
// fallbackModel, else the lexical embedder, each time with a note that
// says so and how to build the model in. A named provider whose files are
// missing is refused.
func TestAutoEmbedderFallsBack(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	missing := func(provider string) {
		b := builtInModels[provider]
		builtInModels[provider] = builtInModel{b.provider, b.space,
			func() (embed.Embedder, error) { return nil, b.unavailable }, b.unavailable, b.what, b.script}
		t.Cleanup(func() { builtInModels[provider] = b })
	}
	open := func(provider string) (embedChoice, error) {
		return (&embedFlags{provider: provider}).open(context.Background(), func(string) string { return "" }, log)
	}
	if _, err := openModel(fallbackModel); err != nil {
		t.Skipf("%s is not built in: %v", fallbackModel, err)
	}

	missing(defaultModel)
	c, err := open("")
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != builtInModels[fallbackModel].space || !c.auto {
		t.Errorf("without %s: embedder %s (auto %v), want %s", defaultModel, c.Name(), c.auto, builtInModels[fallbackModel].space)
	}
	for _, want := range []string{"is not built into this binary", "embedded with " + builtInModels[fallbackModel].space, builtInModels[defaultModel].script} {
		if !strings.Contains(c.note, want) {
			t.Errorf("note %q does not say %q", c.note, want)
		}
	}
	if _, err := open(defaultModel); !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), builtInModels[defaultModel].script) {
		t.Errorf("--embed-provider %s without its files: %v, want a usage error naming %s", defaultModel, err, builtInModels[defaultModel].script)
	}

	missing(fallbackModel)
	c, err = open("")
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != embed.NewLocal().Name() || !strings.Contains(c.note, "matches words, not meaning") {
		t.Errorf("without either model: embedder %s, note %q; want the lexical embedder and a note saying so", c.Name(), c.note)
	}
}
