package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/migrations"

	graphneo4j "github.com/cairnkg/cairn/graph/neo4j"
)

func migrateCommand() *command {
	return &command{
		name:    "migrate",
		summary: "apply pending schema migrations (--status: list them, change nothing)",
		usage:   "migrate [--status] [flags]",
		help: `
Apply every pending schema migration, print each one applied, and exit. The
target is the embedded store in --data-dir, or the PostgreSQL database of
--database-url (CAIRN_DATABASE_URL) when set; on PostgreSQL migrate first
creates the vector extension if it is missing. With --neo4j-uri
(CAIRN_NEO4J_URI), the graph's Neo4j database is migrated too, first.

serve and stdio migrate at start too, so running migrate is optional: it lets
a deployment migrate once, before its cairn processes start, and shows what
changed. Migrations are numbered SQL files built into the binary, applied in
order, one transaction each, and recorded in the table
cairn_schema_migrations. Processes that migrate at the same moment are safe:
they take turns (an advisory lock on PostgreSQL, the write lock on SQLite),
and each migration is applied once.

With --status, migrate lists every migration as applied (with when) or
pending, and changes nothing: no migration, no extension, and no embedded
store is created where none exists (it says there is none, and exits 1).`,
		env: storeEnv,
		setup: func(fs *flag.FlagSet) runFunc {
			var common commonFlags
			common.registerStore(fs)
			status := fs.Bool("status", false, "list applied and pending migrations; change nothing")
			return func(ctx context.Context, env *environment) error {
				if fs.NArg() > 0 {
					return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
				}
				target := "embedded store " + absPath(common.dataDir)
				if common.databaseURL != "" {
					target = "postgres " + postgresName(common.databaseURL)
				}
				if *status {
					var list []migrations.Status
					var err error
					if common.databaseURL != "" {
						list, err = postgres.Status(ctx, common.databaseURL)
					} else if err = requireStore(common.dataDir); err == nil {
						list, err = sqlite.Status(ctx, common.dataDir)
					}
					if err != nil {
						return err
					}
					printStatus(env.stdout, target, list)
					return nil
				}
				if common.neo4j.enabled() {
					// Neo4j first, as at the start of serve and stdio: a
					// wrong Neo4j setting is the one line migrate fails
					// with, before PostgreSQL is touched.
					if err := migrateNeo4j(ctx, env.stdout, common.neo4j, common.databaseURL); err != nil {
						return err
					}
				}
				var applied []migrations.Migration
				var err error
				if common.databaseURL != "" {
					applied, err = postgres.Migrate(ctx, common.databaseURL)
				} else {
					applied, err = sqlite.Migrate(ctx, common.dataDir)
				}
				if err != nil {
					return err
				}
				for _, m := range applied {
					fmt.Fprintf(env.stdout, "applied %03d_%s\n", m.Version, m.Name)
				}
				if len(applied) == 0 {
					fmt.Fprintf(env.stdout, "%s: up to date, nothing to apply\n", target)
				} else {
					fmt.Fprintf(env.stdout, "%s: applied %d migration(s); up to date\n", target, len(applied))
				}
				return nil
			}
		},
	}
}

// migrateNeo4j applies the pending Neo4j migrations of the split
// deployment and says what it did, as migrate does for PostgreSQL.
func migrateNeo4j(ctx context.Context, stdout io.Writer, n neo4jSettings, databaseURL string) error {
	nc, err := n.config(databaseURL)
	if err != nil {
		return err
	}
	d, err := graphneo4j.Connect(ctx, nc)
	if err != nil {
		return err
	}
	defer d.Close(context.WithoutCancel(ctx))
	applied, err := graphneo4j.Migrate(ctx, d, nc.Database, graphneo4j.MigrateOptions{})
	if err != nil {
		return err
	}
	target := fmt.Sprintf("neo4j %s/%s", redactURI(nc.URI), nc.Database)
	for _, m := range applied {
		fmt.Fprintf(stdout, "applied neo4j %03d_%s\n", m.Version, m.Name)
	}
	if len(applied) == 0 {
		fmt.Fprintf(stdout, "%s: up to date, nothing to apply\n", target)
	} else {
		fmt.Fprintf(stdout, "%s: applied %d migration(s); up to date\n", target, len(applied))
	}
	return nil
}

// printStatus writes one line per migration, then a summary.
func printStatus(w io.Writer, target string, list []migrations.Status) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tNAME\tSTATE\tAPPLIED AT")
	pending := 0
	for _, s := range list {
		state, at := "pending", ""
		if s.Applied {
			state, at = "applied", s.AppliedAt.UTC().Format(time.RFC3339)
		} else {
			pending++
		}
		fmt.Fprintf(tw, "%03d\t%s\t%s\t%s\n", s.Version, s.Name, state, at)
	}
	tw.Flush()
	fmt.Fprintf(w, "%s: %d applied, %d pending\n", target, len(list)-pending, pending)
}

// postgresName is user@host:port/database of a database URL, without the
// password; the URL itself when it does not parse (the command then fails
// with the parse error).
func postgresName(url string) string {
	c, err := pgx.ParseConfig(url)
	if err != nil {
		return "(invalid URL)"
	}
	return fmt.Sprintf("%s@%s:%d/%s", c.User, c.Host, c.Port, c.Database)
}
