package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/cairnkg/cairn/mcp"
)

func serveCommand() *command {
	return &command{
		name:    "serve",
		summary: "run the HTTP service: MCP Streamable HTTP at /mcp, /healthz, /readyz",
		usage:   "serve [flags]",
		help: `
Serve MCP over Streamable HTTP at http://<addr>/mcp, with /healthz (the
process answers) and /readyz (the stores answer).

Every /mcp request needs an API key: Authorization: Bearer <key>, or
X-API-Key: <key>. On first run, with an empty store, serve creates the owner
user and prints the owner key once, with the MCP URL and client
configurations; set CAIRN_OWNER_KEY (32 or more printable characters) to
choose that key yourself.

The embedded store is one SQLite file in --data-dir; nothing else needs to
be installed. With --database-url (or CAIRN_DATABASE_URL), the control plane,
the graph and the memories live in that PostgreSQL database instead
(memories with pgvector), migrated at start, and /readyz pings it. Stop with
Ctrl-C: in-flight requests get 10 seconds to finish.

Every call is checked against the agent's consent rules (cairn admin
consent), rate-limited per key (429 with Retry-After; X-RateLimit-* headers
on every response) and recorded in the audit log (cairn admin audit).
Browser requests from origins other than loopback are refused unless
--allowed-origins names them.`,
		env: append(append(append(append(append([]envVar{{"addr", "CAIRN_ADDR"}, {"max-request-bytes", "CAIRN_MAX_REQUEST_BYTES"},
			{"allowed-origins", "CAIRN_ALLOWED_ORIGINS"}}, limitEnv...), toolEnv...), commonEnv...), embedEnv...), fieldEnv...),
		setup: func(fs *flag.FlagSet) runFunc {
			var common commonFlags
			common.register(fs)
			var emb embedFlags
			emb.register(fs)
			addr := fs.String("addr", "127.0.0.1:7400", "HTTP listen address; the default binds loopback only")
			maxBody := fs.Int64("max-request-bytes", mcp.DefaultMaxRequestBytes, "largest HTTP request body accepted")
			origins := fs.String("allowed-origins", "", "comma-separated browser origins allowed besides loopback ones (scheme://host[:port], or *)")
			var limitF limitFlags
			limitF.register(fs)
			var toolF toolFlags
			toolF.register(fs)
			var fieldF fieldFlags
			fieldF.register(fs)
			return func(ctx context.Context, env *environment) error {
				if fs.NArg() > 0 {
					return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
				}
				log, err := common.logger(env.stderr)
				if err != nil {
					return err
				}
				limits, err := limitF.limits()
				if err != nil {
					return err
				}
				embedder, err := emb.open(ctx, env.getenv, log)
				if err != nil {
					return err
				}
				cfg := common.appConfig()
				cfg.mcp, cfg.limits, cfg.embedder = toolF.options(), limits, embedder
				if err := fieldF.apply(&cfg); err != nil {
					return err
				}
				a, err := openApp(ctx, cfg, log)
				if err != nil {
					return err
				}
				defer a.Close()
				a.startEntityEmbeddings(ctx)
				ln, err := net.Listen("tcp", *addr)
				if err != nil {
					return fmt.Errorf("listen on %s: %w", *addr, err)
				}
				mcpURL := "http://" + ln.Addr().String() + "/mcp"
				key, err := bootstrapOwner(ctx, a, env.getenv)
				if err != nil {
					ln.Close()
					return err
				}
				if key != "" {
					printWelcome(env.stdout, key, mcpURL, common.appConfig(), env.getenv("CAIRN_OWNER_KEY") != "")
				}
				srv := &http.Server{
					Handler: a.mcp.HTTPHandler(mcp.HTTPOptions{Auth: a.auth, Ready: a.ready, MaxRequestBytes: *maxBody,
						AllowedOrigins: splitList(*origins)}),
					ReadHeaderTimeout: 10 * time.Second,
					IdleTimeout:       2 * time.Minute,
					ErrorLog:          nil,
				}
				log.Info("serving", "mcp", mcpURL, "store", a.backend.describe, "version", version())
				return serveUntilDone(ctx, srv, ln)
			}
		},
	}
}

// serveUntilDone serves until ctx is cancelled, then shuts down gracefully.
func serveUntilDone(ctx context.Context, srv *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http server: %w", err)
	}
	return nil
}
