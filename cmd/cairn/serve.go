package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/cairnkg/cairn/console"
	"github.com/cairnkg/cairn/mcp"
	"github.com/cairnkg/cairn/telemetry"
)

func serveCommand() *command {
	return &command{
		name:    "serve",
		summary: "run the HTTP service: MCP Streamable HTTP at /mcp, the web console at /console, /healthz, /readyz, /metrics",
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
Ctrl-C or SIGTERM: in-flight requests get 10 seconds to finish, and a
process still running 15 seconds after the signal exits anyway (status 1).

Every call is checked against the agent's consent rules (cairn admin
consent), rate-limited per key (429 with Retry-After; X-RateLimit-* headers
on every response) and recorded in the audit log (cairn admin audit).
Browser requests from origins other than loopback are refused unless
--allowed-origins names them; allowed origins get CORS answers. On a
loopback address, a Host header that is not loopback is refused (DNS
rebinding). GET /.well-known/oauth-protected-resource describes /mcp
(RFC 9728), and every 401 points to it.

Hosts that connect by URL sign in with OAuth 2.1 (docs/oauth.md): serve is
also an authorization server (metadata at
/.well-known/oauth-authorization-server, dynamic client registration,
authorization code with PKCE S256, tokens bound to /mcp). The owner
approves a client on the consent page /console/oauth/authorize with the
owner key, choosing what it may read and write; the client's tokens act as
an agent with exactly those rules. Access tokens live
--oauth-access-token-ttl; refresh tokens rotate, and a reused one revokes
its grant. Behind a reverse proxy set --public-url to the URL clients use.
--no-oauth turns the authorization server off (API keys only).

A request body must arrive within --read-timeout, and one address may hold
at most --max-conns-per-client connections; a request refused before its
body is read (no key, a foreign origin, too large) is answered at once and
its connection closed, without reading the body, whatever its length.

GET /console/ serves the web console (/ redirects there): sign in with an
API key to explore the graph, the memories, provenance and the context an
agent would load, as that key's agent may read them; the owner's key also
manages agents, keys and consent rules and reads the audit log
(docs/console.md).

GET /metrics answers Prometheus metrics to the owner's key; --metrics-addr
serves them without a key on a second address, for a scrape network. With
OTEL_EXPORTER_OTLP_ENDPOINT set, every MCP request, tool call, consent
decision, database transaction and embedder call is traced and exported by
OTLP/HTTP, and a call's trace id is its request id (docs/operations.md).`,
		env: append(append(append(append(append(append([]envVar{{"addr", "CAIRN_ADDR"}, {"max-request-bytes", "CAIRN_MAX_REQUEST_BYTES"},
			{"allowed-origins", "CAIRN_ALLOWED_ORIGINS"}, {"read-timeout", "CAIRN_READ_TIMEOUT"},
			{"max-conns-per-client", "CAIRN_MAX_CONNS_PER_CLIENT"}, {"metrics-addr", "CAIRN_METRICS_ADDR"}}, limitEnv...), toolEnv...), commonEnv...), embedEnv...), fieldEnv...), append(append(retentionEnv, oauthEnv...), append(fileEnv, envVar{"public-url", "CAIRN_PUBLIC_URL"})...)...),
		setup: func(fs *flag.FlagSet) runFunc {
			var common commonFlags
			common.register(fs)
			var emb embedFlags
			emb.register(fs)
			addr := fs.String("addr", "127.0.0.1:7400", "HTTP listen address; the default binds loopback only")
			maxBody := fs.Int64("max-request-bytes", mcp.DefaultMaxRequestBytes, "largest HTTP request body accepted")
			origins := fs.String("allowed-origins", "", "comma-separated browser origins allowed besides loopback ones (scheme://host[:port], or *)")
			readTimeout := fs.Duration("read-timeout", mcp.DefaultReadTimeout, "longest a request body may take to arrive (0: no limit)")
			maxConns := fs.Int("max-conns-per-client", mcp.DefaultMaxConnsPerClient, "connections one remote address may hold open (0: unlimited)")
			metricsAddr := fs.String("metrics-addr", "", "also serve Prometheus /metrics on this address, without authentication, for a scrape network\n        (/metrics on --addr always needs the owner's key)")
			var limitF limitFlags
			limitF.register(fs)
			var toolF toolFlags
			toolF.register(fs)
			var fieldF fieldFlags
			fieldF.register(fs)
			var retentionF retentionFlags
			retentionF.register(fs)
			var filesF fileFlags
			filesF.register(fs)
			var oauthF oauthFlags
			oauthF.register(fs)
			publicURL := fs.String("public-url", "", "URL clients reach this server at (scheme://host[:port]), behind a reverse proxy: the OAuth issuer,\n        the resource URL tokens are bound to, and the base of signed file URLs (default: the Host of each request;\n        http://<addr> for file URLs)")
			return func(ctx context.Context, env *environment) error {
				if fs.NArg() > 0 {
					return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
				}
				log, err := common.logger(env.stderr)
				if err != nil {
					return err
				}
				if *readTimeout < 0 || *maxConns < 0 {
					return usageError{"--read-timeout and --max-conns-per-client must be 0 (no limit) or more"}
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
				if cfg.mcp, err = toolF.options(); err != nil {
					return err
				}
				cfg.limits, cfg.embedder = limits, embedder
				if err := fieldF.apply(&cfg); err != nil {
					return err
				}
				if err := retentionF.apply(&cfg); err != nil {
					return err
				}
				if err := filesF.apply(&cfg, env.getenv); err != nil {
					return err
				}
				if cfg.tracing, err = startTracing(ctx, env.getenv, log); err != nil {
					return err
				}
				defer stopTracing(ctx, cfg.tracing, log)
				cfg.metrics = telemetry.NewMetrics()
				// Listen first: an address in use fails the start before
				// a store is created for nothing.
				ln, err := net.Listen("tcp", *addr)
				if err != nil {
					return fmt.Errorf("listen on %s: %w", *addr, err)
				}
				defer ln.Close()
				if *metricsAddr != "" {
					_, stop, err := serveMetrics(*metricsAddr, cfg.metrics, log)
					if err != nil {
						return err
					}
					defer stop()
				}
				a, err := startApp(ctx, cfg, log)
				if err != nil {
					return err
				}
				defer a.Close()
				mcpURL := "http://" + ln.Addr().String() + "/mcp"
				key, err := bootstrapOwner(ctx, a, env.getenv)
				if err != nil {
					return err
				}
				if key != "" {
					printWelcome(env.stdout, key, mcpURL, common.appConfig(), env.getenv("CAIRN_OWNER_KEY") != "")
				}
				authServer, err := oauthF.server(ctx, a, *publicURL)
				if err != nil {
					return err
				}
				allowed := splitList(*origins)
				if *publicURL != "" {
					// The consent page posts from the public origin.
					allowed = append(allowed, strings.TrimSuffix(*publicURL, "/"))
				}
				var authOpt mcp.OAuthServer
				var clients console.OAuthClients
				if authServer != nil {
					authOpt, clients = authServer, authServer
				}
				bodyTimeout := *readTimeout
				if bodyTimeout == 0 {
					bodyTimeout = -1 // HTTPOptions' "none"
				}
				stopping := make(chan struct{})
				srv := httpServer(a.mcp.HTTPHandler(mcp.HTTPOptions{Auth: a.auth, Ready: a.ready, ReadyDetails: a.readyDetails(), MaxRequestBytes: *maxBody,
					OAuth: authOpt, AllowedOrigins: allowed, ReadTimeout: bodyTimeout, Console: a.console(clients), Stopping: stopping}))
				srv.RegisterOnShutdown(func() { close(stopping) })
				// Background work starts once the start has succeeded, so
				// that a failed start leaves nothing running and writes
				// nothing after its error.
				a.startEntityEmbeddings(ctx)
				a.startTextSigBackfill(ctx)
				a.startAuditRetention(ctx, cfg.auditRetention)
				a.startChangeLogPruning(ctx)
				if a.files != nil {
					a.files.SetBaseURL(cmp.Or(*publicURL, "http://"+ln.Addr().String()))
				}
				a.startJobs(ctx, cfg.files.workers, cfg.files.lease)
				a.startFileRecovery(ctx)
				a.started()
				log.Info("serving", "mcp", mcpURL, "store", a.backend.describe, "version", version())
				return serveUntilDone(ctx, srv, mcp.LimitConnsPerClient(ln, *maxConns, log))
			}
		},
	}
}

// httpServer returns the server of serve. Headers must arrive within 10 s
// and an idle connection closes after 2 minutes. There is no ReadTimeout:
// the handler bounds each request body instead (HTTPOptions.ReadTimeout),
// so that the limit covers bodies only, never a long-lived SSE stream, and
// a body too slow to arrive answers 408 in the route's error shape.
func httpServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
}

// shutdownTimeout is how long in-flight requests get to finish once serve
// is asked to stop.
const shutdownTimeout = 10 * time.Second

// serveUntilDone serves until ctx is cancelled, then shuts down gracefully.
func serveUntilDone(ctx context.Context, srv *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http server: %w", err)
	}
	return nil
}
