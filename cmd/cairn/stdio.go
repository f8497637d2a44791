package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/cairnkg/cairn/mcp"
)

func stdioCommand() *command {
	return &command{
		name:    "stdio",
		summary: "serve MCP over stdin/stdout, for clients that launch cairn themselves",
		usage:   "stdio [flags]",
		help: `
Serve MCP over stdin and stdout, as Claude Desktop, Cursor and other clients
expect of a server they launch. Only protocol frames go to stdout; logs go to
stderr.

stdio runs as the owner's owner agent: whoever can start the process can
read the data directory (or holds the database URL) anyway, so no key is
asked for. With --agent NAME it runs as that agent of the owner instead,
under that agent's consent rules (create it with cairn admin agent create).
--database-url (or CAIRN_DATABASE_URL) selects PostgreSQL, as for serve. On
first run it creates the owner and prints the owner key to stderr, for use
over HTTP.

Every call answers by its --call-timeout deadline, even when its work is
stuck (a blocking read). Ctrl-C or SIGTERM stops the process: one still
running 15 seconds after the signal exits anyway (status 1), saying so on
stderr.`,
		env: append(append(append(append(append([]envVar{{"agent", "CAIRN_AGENT"}}, toolEnv...), commonEnv...), embedEnv...), fieldEnv...), append(retentionEnv, append(fileEnv, envVar{"file-roots", "CAIRN_FILE_ROOTS"})...)...),
		setup: func(fs *flag.FlagSet) runFunc {
			var common commonFlags
			common.register(fs)
			agent := fs.String("agent", "", "run as this agent of the owner (default: the owner agent)")
			var toolF toolFlags
			toolF.register(fs)
			var emb embedFlags
			emb.register(fs)
			var fieldF fieldFlags
			fieldF.register(fs)
			var retentionF retentionFlags
			retentionF.register(fs)
			var filesF fileFlags
			filesF.register(fs)
			var roots []string
			fs.Var(rootsFlag{&roots}, "file-roots", "directories (separated by "+string(os.PathListSeparator)+") store's file_path may read files from; none by default")
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
				if cfg.mcp, err = toolF.options(); err != nil {
					return err
				}
				cfg.embedder = embedder
				if err := fieldF.apply(&cfg); err != nil {
					return err
				}
				if err := retentionF.apply(&cfg); err != nil {
					return err
				}
				if err := filesF.apply(&cfg, env.getenv); err != nil {
					return err
				}
				cfg.files.roots = roots
				if cfg.tracing, err = startTracing(ctx, env.getenv, log); err != nil {
					return err
				}
				defer stopTracing(ctx, cfg.tracing, log)
				a, err := startApp(ctx, cfg, log)
				if err != nil {
					return err
				}
				defer a.Close()
				key, err := bootstrapOwner(ctx, a, env.getenv)
				if err != nil {
					return err
				}
				if key != "" {
					printWelcome(env.stderr, key, "http://127.0.0.1:7400/mcp (when you run cairn serve)", common.appConfig(), env.getenv("CAIRN_OWNER_KEY") != "")
				}
				owner, err := a.control.OwnerPrincipal(ctx)
				if err != nil {
					return err
				}
				if *agent != "" && *agent != owner.AgentName {
					if owner, err = a.control.AgentPrincipal(ctx, owner.UserName, *agent); err != nil {
						return usageError{fmt.Sprintf("--agent %q: no such agent of the owner (create it with cairn admin agent create %s)", *agent, *agent)}
					}
				}
				// Background work starts once the start has succeeded, so
				// that a failed start leaves nothing running and writes
				// nothing after its error.
				a.startEntityEmbeddings(ctx)
				a.startTextSigBackfill(ctx)
				a.startAuditRetention(ctx, cfg.auditRetention)
				a.startChangeLogPruning(ctx)
				a.startJobs(ctx, cfg.files.workers, cfg.files.lease)
				a.startFileRecovery(ctx)
				a.started()
				log.Info("serving MCP on stdio", "user", owner.UserName, "agent", owner.AgentName, "store", a.backend.describe)
				err = a.mcp.MCPServer(mcp.FixedPrincipal(owner)).Run(ctx, &mcp.StdioTransport{})
				if err != nil && ctx.Err() == nil {
					return fmt.Errorf("stdio: %w", err)
				}
				return nil
			}
		},
	}
}
