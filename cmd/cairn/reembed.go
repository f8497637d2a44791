package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
)

func reembedCommand() *command {
	return &command{
		name:    "reembed",
		summary: "rebuild memory and entity vectors with the configured embedder, after a provider change",
		usage:   "reembed [--collection name] [flags]",
		help: `
Every memory collection records the embedder its vectors come from. After
switching provider or model (--embed-provider, --embed-model, …), memory
tools refuse the old collections with DIMENSION_MISMATCH or
EMBEDDER_MISMATCH; reembed rebuilds them with the embedder these flags
configure, one collection at a time, all or nothing. Collections already in
that embedder's space are left alone, so running it twice is harmless.

It then rebuilds the entity embeddings that get_user_context ranks topics
with: it first settles the entity outbox (entities changed since their
embedding was written, or never embedded), then re-embeds every entity
embedding of another embedder, and reports the counts. With --collection,
entity embeddings are left alone.

Progress goes to stderr every two seconds (texts embedded, and how fast):
on the built-in sentence model a large store takes minutes.

It may run while cairn serve runs: a memory saved into a collection during
its rebuild makes that collection fail with a conflict (nothing is lost);
run reembed again. Entity embeddings need no such care: the server's
worker does the same idempotent work.`,
		env: append(commonEnv[:len(commonEnv):len(commonEnv)], embedEnv...),
		setup: func(fs *flag.FlagSet) runFunc {
			var common commonFlags
			common.register(fs)
			var emb embedFlags
			emb.register(fs)
			collection := fs.String("collection", "", "rebuild only the collections of this name (default: every collection of every user)")
			return func(ctx context.Context, env *environment) error {
				if fs.NArg() > 0 {
					return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
				}
				log, err := common.logger(env.stderr)
				if err != nil {
					return err
				}
				if common.databaseURL == "" {
					if err := requireStore(common.dataDir); err != nil {
						return err
					}
				}
				embedder, err := emb.open(ctx, env.getenv, log)
				if err != nil {
					return err
				}
				// reembed moves the store to the chosen space, whatever
				// space it is in now.
				embedder.auto = false
				progress := &reembedProgress{Embedder: embedder.Embedder, w: env.stderr, every: 2 * time.Second, start: time.Now()}
				embedder.Embedder = progress
				defer progress.finish()
				cfg := common.appConfig()
				cfg.embedder = embedder
				a, err := openApp(ctx, cfg, log)
				if err != nil {
					return err
				}
				defer a.Close()
				done, err := a.knowledge.Reembed(ctx, *collection)
				total := 0
				for _, d := range done {
					total += d.Count
					if d.Count == 0 {
						fmt.Fprintf(env.stdout, "%s (user %s): already embedded with %s\n", d.Collection, d.UserID, embedder.Name())
						continue
					}
					fmt.Fprintf(env.stdout, "%s (user %s): %d memories re-embedded, %s → %s\n",
						d.Collection, d.UserID, d.Count, spaceText(d.From), embedder.Name())
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(env.stdout, "%d collections checked, %d memories re-embedded\n", len(done), total)
				if *collection != "" {
					return nil
				}
				st, err := a.knowledge.ReembedEntities(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(env.stdout, "entity embeddings: %d re-embedded, %d removed (merged or deleted entities), %d already current; %d outbox entries settled\n",
					st.Embedded, st.Removed, st.Unchanged, st.Entries)
				return nil
			}
		},
	}
}

// reembedProgress counts what reembed embeds and says so on stderr at most
// every so often (every line ends with a newline: it reads the same in a
// terminal and in a log), since a large store takes minutes.
type reembedProgress struct {
	embed.Embedder
	w     io.Writer
	every time.Duration
	start time.Time

	mu      sync.Mutex
	texts   int
	printed time.Time
}

// reembedStep is how many texts reembedProgress hands the embedder at a
// time: reembed embeds pages of 1,000 memories, which the built-in MiniLM
// model takes some 12 s for on two cores, and progress is to show every
// few seconds. A step still spreads over every core, and the openai
// provider sends 64 texts a request anyway.
const reembedStep = 128

// Embed embeds texts reembedStep at a time, counting each step.
func (p *reembedProgress) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += reembedStep {
		step := texts[start:min(start+reembedStep, len(texts))]
		vecs, err := p.Embedder.Embed(ctx, step)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
		p.mu.Lock()
		p.texts += len(step)
		if now := time.Now(); now.Sub(p.printed) >= p.every {
			p.printed = now
			p.line(now)
		}
		p.mu.Unlock()
	}
	return out, nil
}

func (p *reembedProgress) line(now time.Time) {
	elapsed := now.Sub(p.start)
	fmt.Fprintf(p.w, "reembed: %d texts embedded with %s in %s (%.0f a second)\n",
		p.texts, p.Name(), elapsed.Round(time.Second), float64(p.texts)/max(elapsed.Seconds(), 0.001))
}

// finish prints the final count once something was embedded.
func (p *reembedProgress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.texts > 0 {
		p.line(time.Now())
	}
}

func spaceText(s vector.Space) string {
	return fmt.Sprintf("%s (%d dimensions)", s.Embedder, s.Dimension)
}
