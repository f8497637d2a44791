package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/cairnkg/cairn/vector/embed"
	"github.com/cairnkg/cairn/vector/evalset"
)

// retrievalReport is what cairn bench --retrieval prints as JSON.
type retrievalReport struct {
	Version string `json:"version"`
	Store   string `json:"store"`
	evalset.Report
}

// runRetrievalBench runs the evaluation set through the memory store of an
// app opened on cfg's scratch store, with the embedder serve would use and
// its default threshold.
func runRetrievalBench(ctx context.Context, cfg appConfig, embedder embed.Embedder, store string, opts evalset.Options, asJSON bool, log *slog.Logger, env *environment) error {
	set, err := evalset.Load()
	if err != nil {
		return err
	}
	a, err := startApp(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()
	opts.MinSimilarity, opts.Progress = a.knowledge.DefaultMinSimilarity(), env.stderr
	rep, err := evalset.Run(ctx, a.memories, embedder, set, opts)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(retrievalReport{Version: version(), Store: store, Report: rep})
	}
	fmt.Fprintf(env.stdout, "cairn bench --retrieval on the %s\n", store)
	rep.Print(env.stdout)
	return nil
}
