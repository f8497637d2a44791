package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/mcp"
	"github.com/cairnkg/cairn/migrations"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
	vembedded "github.com/cairnkg/cairn/vector/embedded"
)

// app is a wired Cairn: stores, services and the MCP server.
type app struct {
	log       *slog.Logger
	sqlite    *sqlite.DB
	control   *controlplane.Store
	graph     *graph.Store
	memories  *vector.Store
	knowledge *knowledge.Service
	mcp       *mcp.Server
	auth      *consent.Authenticator
}

// appConfig is what opening an app needs.
type appConfig struct {
	dataDir string
	mcp     mcp.Options
	// embedder embeds memories; nil means the local one.
	embedder embed.Embedder
}

// openApp opens the stores (migrating them) and wires the services.
func openApp(ctx context.Context, cfg appConfig, log *slog.Logger) (*app, error) {
	db, err := sqlite.Open(ctx, cfg.dataDir)
	if err != nil {
		return nil, err
	}
	a := &app{log: log, sqlite: db}
	a.control = controlplane.New(db.Write, migrations.SQLite)
	a.graph = graph.NewStore(embedded.New(db))
	a.memories = vector.NewStore(vembedded.New(db))
	a.knowledge = knowledge.NewService(a.graph, knowledge.NewRegistry(), knowledge.Options{Logger: log, Memories: a.memories, Embedder: cfg.embedder})
	a.auth = consent.NewAuthenticator(a.control, nil)
	cfg.mcp.Version = version()
	a.mcp, err = mcp.NewServer(mcp.Deps{Knowledge: a.knowledge, Logger: log}, cfg.mcp)
	if err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// ready reports whether the stores answer.
func (a *app) ready(ctx context.Context) error {
	if err := a.sqlite.Write.PingContext(ctx); err != nil {
		return fmt.Errorf("embedded store: %w", err)
	}
	return nil
}

// Close releases the stores.
func (a *app) Close() {
	if err := errors.Join(a.memories.Close(), a.graph.Close(), a.sqlite.Close()); err != nil {
		a.log.Warn("close", "err", err)
	}
}
