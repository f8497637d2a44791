package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/cairnkg/cairn/vector"
)

func reembedCommand() *command {
	return &command{
		name:    "reembed",
		summary: "rebuild memory vectors with the configured embedder, after a provider change",
		usage:   "reembed [--collection name] [flags]",
		help: `
Every memory collection records the embedder its vectors come from. After
switching provider or model (--embed-provider, --embed-model, …), memory
tools refuse the old collections with DIMENSION_MISMATCH or
EMBEDDER_MISMATCH; reembed rebuilds them with the embedder these flags
configure, one collection at a time, all or nothing. Collections already in
that embedder's space are left alone, so running it twice is harmless.

It may run while cairn serve runs: a memory saved into a collection during
its rebuild makes that collection fail with a conflict (nothing is lost);
run reembed again.`,
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
				embedder, err := emb.open(ctx, env.getenv, log)
				if err != nil {
					return err
				}
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
				return nil
			}
		},
	}
}

func spaceText(s vector.Space) string {
	return fmt.Sprintf("%s (%d dimensions)", s.Embedder, s.Dimension)
}
